package scenario

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/testbed/topo"
)

func TestIdealOf(t *testing.T) {
	const m = 1e6
	cases := []struct {
		name              string
		nic, cross        float64
		k, dns, cap       int
		pipelines         int
		multi, speedupWin float64
	}{
		// Issue 15: three pipelines crossing from three rack-mates.
		{"3+6 at 400/50", 400 * m, 50 * m, 3, 9, 4, 3, 150 * m, 3},
		// two-rack-50: four rack-mates, but n = 9/3 = 3 pipelines.
		{"4+5 at 216/50", 216 * m, 50 * m, 4, 9, 4, 3, 150 * m, 3},
		// Fewer rack-mates than pipelines: the client's own cross-rack
		// link carries the rest, all of them together.
		{"1+8 at 400/50", 400 * m, 50 * m, 1, 9, 4, 3, 100 * m, 2},
		// The client's NIC binds.
		{"5+5 at 200/100", 200 * m, 100 * m, 5, 10, 4, 3, 200 * m, 2},
		// No datanode in the client's rack: everything crosses its link.
		{"0+9", 400 * m, 50 * m, 0, 9, 4, 3, 50 * m, 1},
		// The client's cap on pipelines.
		{"6+9 cap 2", 400 * m, 50 * m, 6, 15, 2, 2, 100 * m, 2},
		// Cross-rack faster than the NIC: the NIC is every hop's limit.
		{"3+3 at 100/400", 100 * m, 400 * m, 3, 6, 4, 2, 100 * m, 1},
	}
	for _, c := range cases {
		id := IdealOf(c.nic, c.cross, c.k, c.dns, 3, c.cap)
		if id.Pipelines != c.pipelines || math.Abs(id.Multi-c.multi) > 1 || math.Abs(id.Speedup-c.speedupWin) > 1e-9 {
			t.Errorf("%s: %+v; want %d pipelines, %.0f Mbit/s, %.2fx", c.name, id, c.pipelines, c.multi/m, c.speedupWin)
		}
	}
}

func TestRandomTopologies(t *testing.T) {
	spec := DefaultRandomSpec()
	spec.Count = 30
	a, err := RandomTopologies(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RandomTopologies(spec)
	racks := map[int]int{}
	for i, x := range a {
		if !bytes.Equal(x.YAML, b[i].YAML) {
			t.Fatalf("topology %d differs between two draws of one seed", i)
		}
		tp, err := topo.Parse(x.YAML)
		if err != nil {
			t.Fatalf("%s: %v", x.Name, err)
		}
		racks[len(tp.Racks)]++
		dns := tp.WithRole(topo.DataNode)
		if len(dns) < 6 || len(dns) > 10 || x.CrossMbit > x.NICMbit || x.NICMbit < 200 || x.NICMbit > 400 {
			t.Errorf("%s: %d datanodes at %v/%v Mbit/s, out of range", x.Name, len(dns), x.NICMbit, x.CrossMbit)
		}
		nn := tp.WithRole(topo.Client)
		if len(nn) != 1 || nn[0].Rack != tp.Racks[x.ClientRack].Name {
			t.Errorf("%s: client %v not in rack %d", x.Name, nn, x.ClientRack)
		}
		if bs, _ := tp.Daemons["namenode"]["block_size"].(int); int64(bs) != spec.BlockSize {
			t.Errorf("%s: block size %v", x.Name, tp.Daemons["namenode"]["block_size"])
		}
	}
	if racks[2] == 0 || racks[3] == 0 {
		t.Errorf("rack counts %v: want two- and three-rack topologies", racks)
	}
	spec.Seed = 2
	if c, _ := RandomTopologies(spec); bytes.Equal(c[0].YAML, a[0].YAML) {
		t.Error("another seed gave the same first topology")
	}
	bad := DefaultRandomSpec()
	bad.DataNodes = Range{40, 50}
	if _, err := RandomTopologies(bad); err == nil || !strings.Contains(err.Error(), "cannot hold") {
		t.Errorf("impossible ranges: %v", err)
	}
}

// RunRandom runs each topology's two phases on its own bed, the speedaware
// phase with multi-pipeline uploads only, and reports speedups against the
// ideal.
func TestRunRandom(t *testing.T) {
	spec := DefaultRandomSpec()
	spec.Count = 3
	rep, beds := runRandomFake(t, spec)
	if len(rep.Results) != 3 || len(beds) != 3 {
		t.Fatalf("%d results on %d beds", len(rep.Results), len(beds))
	}
	for i, res := range rep.Results {
		if res.HDFS != 4 || res.RackMulti != 2 || res.SMARTH != 1 || res.Speedup != 4 || res.RackSpeedup != 2 {
			t.Errorf("result %d: %+v", i, res)
		}
		if want := 4 / res.Topology.Ideal.Speedup; math.Abs(res.OfIdeal-want) > 1e-9 {
			t.Errorf("result %d: of ideal %v, want %v", i, res.OfIdeal, want)
		}
		if res.Concurrent != 0.8 || math.Abs(res.ConcSpeedup-5) > 1e-9 || math.Abs(res.ConcOfIdeal-5/res.Topology.Ideal.Speedup) > 1e-9 {
			t.Errorf("result %d: concurrent %v s, %vx, %v of ideal; want 0.8 s, 5x", i, res.Concurrent, res.ConcSpeedup, res.ConcOfIdeal)
		}
		for _, cell := range res.Report.Cells {
			if cell.Placement == "speedaware" && cell.Mode == "classic" {
				t.Errorf("result %d ran classic under speedaware", i)
			}
		}
	}
	if got := strings.Join(beds[1].calls, " "); !strings.HasPrefix(got, "up speedaware") {
		t.Errorf("the second topology's phases: %s; want the order reversed", got)
	}
	var out bytes.Buffer
	rep.PrintTable(&out)
	for _, want := range []string{"SMARTH speedup over HDFS", "median 4.00x", "SMARTH share of the ideal", "a:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	// The shares by class: k < P and k >= P, every topology in one of them.
	small, large := rep.Classes()
	if len(small.Results)+len(large.Results) != 3 {
		t.Errorf("classes hold %d and %d topologies, want 3 in all", len(small.Results), len(large.Results))
	}
	for _, r := range small.Results {
		if r.Topology.Ideal.Local >= r.Topology.Ideal.Pipelines {
			t.Errorf("topology %s (k=%d, P=%d) in the k < P class", r.Topology.Shape(), r.Topology.Ideal.Local, r.Topology.Ideal.Pipelines)
		}
	}
	for _, want := range []string{fmt.Sprintf("k < P  topologies n=%d", len(small.Results)), fmt.Sprintf("k >= P topologies n=%d", len(large.Results))} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	svg := filepath.Join(t.TempDir(), "random.svg")
	if err := rep.Plot(svg); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(filepath.Join(t.TempDir(), "random.json")); err != nil {
		t.Fatal(err)
	}
}

// With ConcurrentPlacement mincut the concurrent upload gets a phase of
// its own under that placement, and the result takes its time from there.
func TestRunRandomConcurrentPlacement(t *testing.T) {
	spec := DefaultRandomSpec()
	spec.Count, spec.ConcurrentPlacement = 2, "mincut"
	rep, beds := runRandomFake(t, spec)
	for i, res := range rep.Results {
		if res.Concurrent != 0.5 || res.SMARTH != 1 || res.HDFS != 4 {
			t.Errorf("result %d: HDFS %v SMARTH %v concurrent %v; want 4, 1 and mincut's 0.5", i, res.HDFS, res.SMARTH, res.Concurrent)
		}
		for _, cell := range res.Report.Cells {
			if cell.Placement == "speedaware" && cell.Mode == "multipipeline-concurrent" {
				t.Errorf("result %d: concurrent also ran under speedaware", i)
			}
		}
	}
	if got := strings.Join(beds[0].calls, " "); strings.Count(got, "up ") != 3 || !strings.Contains(got, "up mincut") {
		t.Errorf("phases of the first topology: %s; want rackaware, speedaware and mincut", got)
	}
	var out bytes.Buffer
	rep.PrintTable(&out)
	if !strings.Contains(out.String(), "multipipeline-concurrent under mincut") {
		t.Errorf("the table does not say the concurrent placement:\n%s", out.String())
	}
}

// With ConcurrentPlacement rackaware, a placement that already has a
// phase (HDFS's), the concurrent upload joins that phase: the classic
// and multipipeline uploads under rackaware must still run, and each cell
// keep its own time.
func TestRunRandomConcurrentRackAware(t *testing.T) {
	spec := DefaultRandomSpec()
	spec.Count, spec.ConcurrentPlacement = 2, "rackaware"
	rep, beds := runRandomFake(t, spec)
	for i, res := range rep.Results {
		if res.HDFS != 4 || res.RackMulti != 2 || res.SMARTH != 1 || res.Concurrent != 0.9 {
			t.Errorf("result %d: HDFS %v rackaware multi %v SMARTH %v concurrent %v; want 4, 2, 1 and rackaware's 0.9",
				i, res.HDFS, res.RackMulti, res.SMARTH, res.Concurrent)
		}
	}
	for i, b := range beds {
		if got := strings.Join(b.calls, " "); strings.Count(got, "up ") != 2 {
			t.Errorf("phases of topology %d: %s; want one rackaware and one speedaware", i, got)
		}
	}
}

// runRandomFake runs spec on fake beds, one per topology, and returns
// the report and the beds (their calls name the phases).
func runRandomFake(t *testing.T, spec RandomSpec) (*RandomReport, []*fakeBed) {
	t.Helper()
	var beds []*fakeBed
	rep, err := RunRandom(context.Background(), func(RandomTopology) Bed {
		b := &fakeBed{}
		beds = append(beds, b)
		return b
	}, spec, Options{Size: 4 * mib, TempDir: t.TempDir(), LoadAvg: func() (float64, error) { return 0.5, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return rep, beds
}

func TestQuartiles(t *testing.T) {
	q := quartiles([]float64{4, 1, 3, 2, 5})
	if q.Min != 1 || q.Q1 != 2 || q.Median != 3 || q.Q3 != 4 || q.Max != 5 || q.N != 5 {
		t.Errorf("%+v", q)
	}
	if q := quartiles([]float64{1, 2}); q.Median != 1.5 {
		t.Errorf("median of 1, 2: %v", q.Median)
	}
}

func TestScheduleSpeedup(t *testing.T) {
	const m = 1e6
	cases := []struct {
		name          string
		nic, cross    float64
		k, p, blocks  int
		want, atLeast float64
	}{
		// Issue 15's topology, 6 blocks: three blocks go out at 400 Mbit/s,
		// then each slot frees after its 50 Mbit/s drain: 6 x 10.7 s of
		// classic against 24.2 s.
		{"3+6 at 400/50, 6 blocks", 400 * m, 50 * m, 3, 3, 6, 0.12 / 0.045, 0},
		// One block: nothing overlaps.
		{"one block", 400 * m, 50 * m, 3, 3, 1, 1, 0},
		// No rack-mate: every block crosses the client's own link.
		{"k=0", 400 * m, 50 * m, 0, 3, 8, 1, 0},
		// Many blocks approach the min-cut bound of 3.
		{"3+6, 300 blocks", 400 * m, 50 * m, 3, 3, 300, 0, 2.95},
	}
	for _, c := range cases {
		got := ScheduleSpeedup(c.nic, c.cross, c.k, c.p, c.blocks)
		if (c.want > 0 && math.Abs(got-c.want) > 1e-9) || got < c.atLeast || got > IdealOf(c.nic, c.cross, c.k, 9, 3, c.p).Speedup+1e-9 {
			t.Errorf("%s: %.4f, want %.4f (at least %.2f, never above the min-cut bound)", c.name, got, c.want, c.atLeast)
		}
	}
	// One rack-mate, two pipelines: every other block waits for the
	// client's cross-rack link, so the schedule stays well below 2x.
	if got := ScheduleSpeedup(260*m, 100*m, 1, 2, 8); got >= 1.8 || got <= 1 {
		t.Errorf("k=1, P=2: %.2f; want between 1 and 1.8", got)
	}
}

func TestRecompute(t *testing.T) {
	spec := DefaultRandomSpec()
	spec.Count = 2
	rep, err := RunRandom(context.Background(), func(RandomTopology) Bed { return &fakeBed{} }, spec,
		Options{Size: 4 * mib, TempDir: t.TempDir(), LoadAvg: func() (float64, error) { return 0, nil }})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRandomReport(path)
	if err != nil {
		t.Fatal(err)
	}
	want := back.Results[0]
	back.Results[0].Topology.Ideal = Ideal{}
	back.Results[0].OfIdeal = 0
	back.Recompute()
	got := back.Results[0]
	if got.Topology.Ideal != want.Topology.Ideal || got.OfIdeal != want.OfIdeal || got.OfSchedule != want.OfSchedule || got.Speedup != 4 {
		t.Errorf("recomputed %+v\nwant %+v", got, want)
	}
}
