package suite

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
)

var tiny = Sizes{DFSIOFiles: 2, DFSIOFileSize: 64 << 10, TeraRows: 5000, TeraMaps: 2, TeraReduces: 2,
	PiMaps: 2, PiSamples: 1000}

func localRunner(t *testing.T) (*mapreduce.LocalRunner, *mapreduce.LocalFS) {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lfs.BlockSize = 128 << 10
	r := mapreduce.NewLocalRunner(lfs, mapreduce.LocalOptions{
		Registry: mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: &bytes.Buffer{}})...), WorkDir: t.TempDir()})
	return r, lfs
}

func TestSuiteRunsEveryPhaseTwiceAndCompares(t *testing.T) {
	r, lfs := localRunner(t)
	var log bytes.Buffer
	a, err := Run(t.Context(), r, Options{Sizes: tiny, Scale: "tiny", Label: "first", Log: &log})
	if err != nil {
		t.Fatalf("suite: %v\n%s", err, log.String())
	}
	if len(a.Phases) != len(AllPhases) {
		t.Fatalf("%d phases", len(a.Phases))
	}
	for i, p := range a.Phases {
		if p.Name != AllPhases[i] || p.Error != "" || p.Seconds <= 0 {
			t.Fatalf("phase %d: %+v", i, p)
		}
	}
	if p, _ := a.Phase(TeraValidate); p.Metrics["rows"] != 5000 || p.Metrics["misordered"] != 0 {
		t.Fatalf("teravalidate metrics %v", p.Metrics)
	}
	if p, _ := a.Phase(DFSIORead); p.Metrics["mbytes"] != 0.125 || p.Metrics["throughput_mb_s"] <= 0 {
		t.Fatalf("dfsio read metrics %v", p.Metrics)
	}
	if p, _ := a.Phase(Pi); p.Metrics["estimate"] < 3 || p.Metrics["estimate"] > 3.3 {
		t.Fatalf("pi metrics %v", p.Metrics)
	}
	// The suite cleans up after itself, so it can run again at once.
	if _, err := lfs.Stat(t.Context(), "/benchmarks/suite"); err == nil {
		t.Fatal("suite left its data")
	}
	b, err := Run(t.Context(), r, Options{Sizes: tiny, Scale: "tiny", Label: "second"})
	if err != nil {
		t.Fatal(err)
	}

	var table bytes.Buffer
	a.Table(&table)
	for _, want := range []string{"TestDFSIO-write", "TeraValidate", "5000 rows, 0 misordered", "estimate 3.1", "total"} {
		if !strings.Contains(table.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, table.String())
		}
	}
	path := filepath.Join(t.TempDir(), "a.json")
	if err := a.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil || back.Label != "first" || len(back.Phases) != 6 || back.Sizes != tiny {
		t.Fatalf("read back %+v, %v", back, err)
	}
	rows := Compare(back, b)
	if len(rows) != 6 {
		t.Fatalf("compare: %d rows", len(rows))
	}
	for _, row := range rows {
		if row.Speedup != row.ASeconds/row.BSeconds {
			t.Fatalf("row %+v", row)
		}
	}
	var cmp bytes.Buffer
	PrintCompare(&cmp, back, b)
	if !strings.Contains(cmp.String(), "first (s)") || !strings.Contains(cmp.String(), "TeraSort") {
		t.Fatalf("compare table:\n%s", cmp.String())
	}
}

// failing fails one app and runs the others.
type failing struct {
	mapreduce.Runner
	app string
}

func (f failing) Run(ctx context.Context, app string, p map[string]string) (*mapreduce.Result, error) {
	if app == f.app {
		return &mapreduce.Result{JobID: "job_x", State: mapreduce.StateFailed, Error: "boom"}, errors.New("boom")
	}
	return f.Runner.Run(ctx, app, p)
}

func TestSuiteSkipsPhasesWhoseInputFailed(t *testing.T) {
	r, _ := localRunner(t)
	res, err := Run(t.Context(), failing{r, "teragen"}, Options{Sizes: tiny, Phases: []string{Pi, TeraGen, TeraSort, TeraValidate}})
	if err == nil || !strings.Contains(err.Error(), "TeraGen: boom") {
		t.Fatalf("err = %v", err)
	}
	names := []string{}
	for _, p := range res.Phases {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "TeraGen,TeraSort,TeraValidate,Pi" {
		t.Fatalf("phases ran as %v, want suite order", names)
	}
	if p, _ := res.Phase(TeraSort); !p.Skipped {
		t.Fatalf("TeraSort ran after a failed TeraGen: %+v", p)
	}
	if p, _ := res.Phase(Pi); p.Error != "" {
		t.Fatalf("Pi: %s", p.Error)
	}
}

func TestSuiteRejectsBadOptions(t *testing.T) {
	r, _ := localRunner(t)
	if _, err := Run(t.Context(), r, Options{Sizes: tiny, Phases: []string{"TeraSplat"}}); err == nil ||
		!strings.Contains(err.Error(), "unknown phase") {
		t.Fatalf("err = %v", err)
	}
	bad := tiny
	bad.TeraReduces = 0
	if _, err := Run(t.Context(), r, Options{Sizes: bad}); err == nil || !strings.Contains(err.Error(), "reduces") {
		t.Fatalf("err = %v", err)
	}
	if got := Scales["small"].ForNodes(5); got.TeraMaps != 10 || got.TeraReduces != 5 || got.DFSIOFiles != 5 ||
		got.PiMaps != 10 || got.TeraRows != Scales["small"].TeraRows {
		t.Fatalf("small for 5 nodes: %+v", got)
	}
	if got := Scales["medium"].ForNodes(1); got != Scales["medium"] {
		t.Fatalf("medium for 1 node changed: %+v", got)
	}
	for _, name := range ScaleNames() {
		if err := Scales[name].Validate(); err != nil {
			t.Fatalf("scale %s: %v", name, err)
		}
	}
}
