package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeBed records what a scenario asks of it. Its client "uploads" take
// scripted times and leave one block record per run.
type fakeBed struct {
	calls      []string
	phase      int
	placement  string
	up         bool
	failUp     int // phase number whose Up fails
	failClient int // phase number whose client fails
	onClient   func()
	recs       []BlockRecord
	downCtxErr []error
}

var _ Bed = (*fakeBed)(nil)

// seconds an upload takes per placement and mode.
var fakeSeconds = map[string]float64{
	"rackaware/classic": 4, "rackaware/multipipeline": 2,
	"speedaware/classic": 4, "speedaware/multipipeline": 1, "speedaware/multipipeline-concurrent": 0.8,
	"mincut/multipipeline-concurrent": 0.5, "rackaware/multipipeline-concurrent": 0.9,
}

func (f *fakeBed) Up(_ context.Context, o Overrides) (Layout, error) {
	f.phase++
	f.calls = append(f.calls, "up "+o.Placement)
	if f.phase == f.failUp {
		return Layout{}, errors.New("no namespaces today")
	}
	f.up, f.placement = true, o.Placement
	return Layout{Name: "fake", ClientHost: "c", LinkRateBits: 8 * 4 * mib, LinkBound: "nic c",
		FirstHop: map[string]float64{"fast": 8 * 4 * mib, "slow": 1e6}}, nil
}

func (f *fakeBed) Client(ctx context.Context, args []string, stdout, _ io.Writer) error {
	f.calls = append(f.calls, "client")
	if !f.up {
		return errors.New("client while down")
	}
	if f.onClient != nil {
		f.onClient()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.phase == f.failClient {
		return errors.New("exit status 1")
	}
	flag := func(name string) string { return args[slices.Index(args, name)+1] }
	runs, _ := strconv.Atoi(flag("--runs"))
	size, _ := strconv.ParseInt(flag("--size"), 10, 64)
	var res PhaseResult
	res.Replication, res.BlockSize = 3, 1<<20
	start := time.Now()
	for range runs {
		for _, m := range strings.Split(flag("--modes"), ",") {
			secs := fakeSeconds[f.placement+"/"+m]
			client := fmt.Sprintf("%s-%s", f.placement, m)
			end := start.Add(time.Duration(secs * float64(time.Second)))
			res.Runs = append(res.Runs, ClientRun{Mode: m, Client: client, Seconds: secs,
				MiBps: float64(size) / mib / secs, Start: start, End: end})
			first := "fast"
			if m == "classic" {
				first = "slow"
			}
			f.recs = append(f.recs, BlockRecord{Host: first, ID: uint64(len(f.recs) + 1), Client: client, Bytes: size,
				Downstream: 2, Start: start.Add(time.Millisecond), End: end.Add(-time.Millisecond)})
			start = end.Add(time.Second)
		}
	}
	fmt.Fprintln(stdout, "uploads done")
	b, _ := json.Marshal(res)
	return os.WriteFile(flag("--json"), b, 0o644)
}

func (f *fakeBed) BlockLogs() ([]BlockRecord, error) { return f.recs, nil }

func (f *fakeBed) SaveLogs(dir string) error {
	f.calls = append(f.calls, "logs "+filepath.Base(dir))
	return nil
}

func (f *fakeBed) Down(ctx context.Context) error {
	f.calls = append(f.calls, "down")
	f.downCtxErr = append(f.downCtxErr, ctx.Err())
	f.up = false
	return nil
}

func testOptions(t *testing.T) Options {
	return Options{Scenario: "fake", Size: 8 * mib, Runs: 2, TempDir: t.TempDir(),
		LoadAvg: func() (float64, error) { return 1.5, nil }}
}

func TestRunAlternatesPhasesAndTakesEachDown(t *testing.T) {
	bed := &fakeBed{}
	o := testOptions(t)
	o.LogDir = t.TempDir()
	rep, err := Run(context.Background(), bed, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"up rackaware", "client", "logs round1-rackaware", "down", "up speedaware", "client", "logs round1-speedaware", "down",
		"up speedaware", "client", "logs round2-speedaware", "down", "up rackaware", "client", "logs round2-rackaware", "down",
	}
	if !slices.Equal(bed.calls, want) {
		t.Errorf("calls\n%v\nwant\n%v", bed.calls, want)
	}
	if len(rep.Runs) != 8 || len(rep.Cells) != 4 {
		t.Fatalf("%d runs, %d cells, want 8 and 4", len(rep.Runs), len(rep.Cells))
	}
	byKey := map[string]Cell{}
	for _, c := range rep.Cells {
		byKey[c.Placement+"/"+c.Mode] = c
	}
	hdfs, smarth := byKey["rackaware/classic"], byKey["speedaware/multipipeline"]
	if hdfs.Label != LabelHDFS || smarth.Label != LabelSMARTH || rep.Baseline != "rackaware/classic" {
		t.Errorf("labels %q %q, baseline %q", hdfs.Label, smarth.Label, rep.Baseline)
	}
	if hdfs.VsBaselinePct != nil || smarth.VsBaselinePct == nil || *smarth.VsBaselinePct != 300 {
		t.Errorf("gain over HDFS: hdfs %v smarth %v, want none and +300%%", hdfs.VsBaselinePct, smarth.VsBaselinePct)
	}
	// 8 MiB in 1 s on a 4 MiB/s link is 200% of it.
	if smarth.PctOfLink == nil || *smarth.PctOfLink != 200 || smarth.MiBps != 8 || smarth.Runs != 2 {
		t.Errorf("SMARTH cell %+v", smarth)
	}
	if hdfs.SlowFirstPct != 100 || smarth.SlowFirstPct != 0 || smarth.BusyPct < 99 {
		t.Errorf("diagnoses: hdfs slow first %v%%, smarth slow first %v%%, busy %v%%", hdfs.SlowFirstPct, smarth.SlowFirstPct, smarth.BusyPct)
	}
	if rep.Replication != 3 || rep.BlockSize != 1<<20 || rep.ClientHost != "c" || rep.LoadMax != 1.5 {
		t.Errorf("report header %+v", rep)
	}
}

func TestRunTakesTheClusterDownOnFailure(t *testing.T) {
	cases := []struct {
		name  string
		bed   *fakeBed
		calls []string
		msg   string
		runs  int
	}{
		{"client fails", &fakeBed{failClient: 2},
			[]string{"up rackaware", "client", "down", "up speedaware", "client", "down"},
			"round 1, placement speedaware: the client's uploads on c: exit status 1", 2},
		{"up fails", &fakeBed{failUp: 1}, []string{"up rackaware", "down"}, "no namespaces today", 0},
	}
	for _, c := range cases {
		rep, err := Run(context.Background(), c.bed, testOptions(t))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.msg)
		}
		if !slices.Equal(c.bed.calls, c.calls) {
			t.Errorf("%s: calls %v, want %v", c.name, c.bed.calls, c.calls)
		}
		if rep == nil || len(rep.Runs) != c.runs {
			t.Errorf("%s: report %+v, want the %d runs done before the failure", c.name, rep, c.runs)
		}
	}
}

func TestRunInterruptedStillTakesDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	bed := &fakeBed{onClient: cancel}
	_, err := Run(ctx, bed, testOptions(t))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if !slices.Equal(bed.calls, []string{"up rackaware", "client", "down"}) {
		t.Errorf("calls %v", bed.calls)
	}
	if len(bed.downCtxErr) != 1 || bed.downCtxErr[0] != nil {
		t.Errorf("Down got a cancelled context: %v", bed.downCtxErr)
	}
}

func TestRunOptions(t *testing.T) {
	o := testOptions(t)
	o.Runs, o.PhaseRuns = 3, 2
	if _, err := Run(context.Background(), &fakeBed{}, o); err == nil || !strings.Contains(err.Error(), "multiple") {
		t.Errorf("runs 3 per 2: %v", err)
	}
	o = testOptions(t)
	o.Size = 0
	if _, err := Run(context.Background(), &fakeBed{}, o); err == nil {
		t.Error("size 0 accepted")
	}
	// PhaseRuns 2 is one phase per placement with both runs in it.
	bed := &fakeBed{}
	o = testOptions(t)
	o.PhaseRuns, o.Placements = 2, []string{"speedaware"}
	rep, err := Run(context.Background(), bed, o)
	if err != nil || len(rep.Runs) != 4 || !slices.Equal(bed.calls, []string{"up speedaware", "client", "down"}) {
		t.Errorf("one phase of two runs: %v, %d runs, calls %v", err, len(rep.Runs), bed.calls)
	}
	// Without HDFS's cell the first classic cell is the baseline.
	if rep.Baseline != "speedaware/classic" {
		t.Errorf("baseline %q", rep.Baseline)
	}
}

func TestPutPlanArgs(t *testing.T) {
	got := PutPlan{Size: 5, BlockSize: 6, Replication: 2, Modes: []string{"classic", "multipipeline"}, Runs: 1, Warmup: 7, Dir: "/d",
		FirstRun: 3, DropCaches: true}.Args("/tmp/x.json")
	want := []string{"bench", "scenario-put", "--size", "5", "--runs", "1", "--modes", "classic,multipipeline", "--json", "/tmp/x.json",
		"--block-size", "6", "--replication", "2", "--warmup", "7", "--dir", "/d", "--first-run", "3", "--drop-caches"}
	if !slices.Equal(got, want) {
		t.Errorf("args %v\nwant %v", got, want)
	}
	got = PutPlan{Size: 5, Runs: 1, Modes: []string{"multipipeline"}, LocalThreshold: 1, MaxPipelines: 2, ClientLog: "/l"}.Args("/j")
	want = []string{"bench", "scenario-put", "--size", "5", "--runs", "1", "--modes", "multipipeline", "--json", "/j",
		"--local-threshold", "1", "--max-pipelines", "2", "--client-log", "/l"}
	if !slices.Equal(got, want) {
		t.Errorf("args %v\nwant %v", got, want)
	}
}

func TestReportOutputs(t *testing.T) {
	rep, err := Run(context.Background(), &fakeBed{}, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.PrintTable(&b)
	for _, want := range []string{"scenario fake: put of 8 MiB, replication 3, block size 1 MiB", "link 34 Mbit/s = 4.0 MiB/s (nic c)",
		"HDFS", "SMARTH", "+300.0%", "200%"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	if err := rep.Plot(filepath.Join(dir, "p.svg")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "p.svg")); err != nil || st.Size() < 1000 {
		t.Errorf("plot: %v %v", st, err)
	}
	if err := rep.Plot(filepath.Join(dir, "p.pdf")); err == nil {
		t.Error("a .pdf plot was accepted")
	}
	if err := rep.WriteJSON(filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, "r.json"))
	if err != nil || len(back.Cells) != 4 || *back.Cells[3].VsBaselinePct != 300 || back.Runs[0].Diag.Blocks != 1 {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
}
