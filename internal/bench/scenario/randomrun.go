package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"text/tabwriter"
	"time"
)

// RandomResult is the comparison on one random topology. Times are 0 for
// a cell that did not run.
type RandomResult struct {
	Topology RandomTopology `json:"topology"`
	// Seconds of one upload: HDFS (classic, rackaware), multi-pipeline
	// with rackaware placement, SMARTH (multi-pipeline, speedaware).
	HDFS      float64 `json:"hdfs_s"`
	RackMulti float64 `json:"rackaware_multi_s"`
	SMARTH    float64 `json:"smarth_s"`
	// Speedups over HDFS, and as a share of the ideal speedup.
	Speedup      float64 `json:"speedup"`
	RackSpeedup  float64 `json:"rackaware_multi_speedup"`
	OfIdeal      float64 `json:"of_ideal"`
	OfSchedule   float64 `json:"of_schedule"` // Speedup / Ideal.ScheduleSpeedup
	RackOfIdeal  float64 `json:"rackaware_multi_of_ideal"`
	SlowFirstPct float64 `json:"smarth_slow_first_pct"` // SMARTH's blocks begun behind a slower first hop
	// Concurrent is multipipeline-concurrent (under the spec's
	// ConcurrentPlacement, speedaware unless set): several first hops at
	// once, beyond SMARTH's one block at a time.
	Concurrent  float64 `json:"concurrent_s,omitempty"`
	ConcSpeedup float64 `json:"concurrent_speedup,omitempty"`
	ConcOfIdeal float64 `json:"concurrent_of_ideal,omitempty"`
	Load        float64 `json:"load1"`
	Err         string  `json:"error,omitempty"`
	Report      *Report `json:"report,omitempty"`
}

// Quartiles are a distribution's summary.
type Quartiles struct {
	N                        int
	Min, Q1, Median, Q3, Max float64
}

func quartiles(v []float64) Quartiles {
	if len(v) == 0 {
		return Quartiles{}
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	at := func(q float64) float64 { // linear interpolation between ranks
		x := q * float64(len(s)-1)
		i := int(x)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (x-float64(i))*(s[i+1]-s[i])
	}
	return Quartiles{N: len(s), Min: s[0], Q1: at(0.25), Median: at(0.5), Q3: at(0.75), Max: s[len(s)-1]}
}

// RandomReport is a random-topology run.
type RandomReport struct {
	Spec    RandomSpec     `json:"spec"`
	Size    int64          `json:"size_bytes"`
	Time    time.Time      `json:"time"`
	Results []RandomResult `json:"results"`
}

// RunRandom compares HDFS and SMARTH on each topology of spec: one phase
// with rackaware placement (classic and multi-pipeline uploads) and one
// with speedaware (multi-pipeline), one upload each, no warm-up (a user's
// `smarth fs put` gets none), the phase order alternating between
// topologies. base gives the size and the machine settings. A topology
// whose run fails is recorded with its error and the run goes on, unless
// ctx is done.
func RunRandom(ctx context.Context, newBed func(RandomTopology) Bed, spec RandomSpec, base Options) (*RandomReport, error) {
	if spec.Size == 0 {
		spec.Size = base.Size
	}
	tops, err := RandomTopologies(spec)
	if err != nil {
		return nil, err
	}
	if base.Out == nil {
		base.Out = io.Discard
	}
	rep := &RandomReport{Spec: spec, Size: base.Size, Time: time.Now().UTC()}
	for _, t := range tops {
		fmt.Fprintf(base.Out, "=== topology %d/%d %s: %s, ideal %.2fx\n", t.Index, len(tops), t.Name, t.Shape(), t.Ideal.Speedup)
		o := base
		o.Scenario, o.Description = t.Name, t.Shape()
		o.BlockSize, o.Warmup, o.Runs, o.PhaseRuns = spec.BlockSize, 0, 1, 1
		o.Modes = []string{"classic", "multipipeline", "multipipeline-concurrent"}
		o.Placements = []string{"rackaware", "speedaware"}
		o.PlacementModes = map[string][]string{"rackaware": {"classic", "multipipeline"},
			"speedaware": {"multipipeline", "multipipeline-concurrent"}}
		if cp := spec.concurrentPlacement(); cp != "speedaware" {
			o.PlacementModes["speedaware"] = []string{"multipipeline"}
			if slices.Contains(o.Placements, cp) {
				// rackaware: HDFS's phase takes the concurrent upload
				// too; replacing its modes would drop HDFS's own cells.
				o.PlacementModes[cp] = append(o.PlacementModes[cp], "multipipeline-concurrent")
			} else {
				// Its own phase (a cluster started with that placement),
				// after SMARTH's in odd topologies and before it in even
				// ones.
				o.Placements = append(o.Placements, cp)
				o.PlacementModes[cp] = []string{"multipipeline-concurrent"}
			}
		}
		if t.Index%2 == 0 {
			slices.Reverse(o.Placements)
			slices.Reverse(o.PlacementModes["speedaware"])
		}
		r, err := Run(ctx, newBed(t), o)
		res := resultOf(t, r, spec.concurrentPlacement())
		if err != nil {
			res.Err = err.Error()
			fmt.Fprintf(base.Out, "   topology %s failed: %v\n", t.Name, err)
		}
		rep.Results = append(rep.Results, res)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	return rep, nil
}

// concurrentPlacement is the placement of the concurrent cell.
func (s RandomSpec) concurrentPlacement() string {
	if s.ConcurrentPlacement == "" {
		return "speedaware"
	}
	return s.ConcurrentPlacement
}

func resultOf(t RandomTopology, r *Report, concPlacement string) RandomResult {
	res := RandomResult{Topology: t, Report: r}
	if r == nil {
		return res
	}
	for _, c := range r.Cells {
		switch c.Placement + "/" + c.Mode {
		case "rackaware/classic":
			res.HDFS = c.Mean
		case "rackaware/multipipeline":
			res.RackMulti = c.Mean
		case "speedaware/multipipeline":
			res.SMARTH, res.SlowFirstPct = c.Mean, c.SlowFirstPct
		case concPlacement + "/multipipeline-concurrent":
			res.Concurrent = c.Mean
		}
	}
	res.Load = r.LoadMax
	if res.HDFS > 0 && res.SMARTH > 0 {
		res.Speedup = res.HDFS / res.SMARTH
		res.OfIdeal = res.Speedup / t.Ideal.Speedup
		if t.Ideal.ScheduleSpeedup > 0 {
			res.OfSchedule = res.Speedup / t.Ideal.ScheduleSpeedup
		}
	}
	if res.HDFS > 0 && res.Concurrent > 0 {
		res.ConcSpeedup = res.HDFS / res.Concurrent
		res.ConcOfIdeal = res.ConcSpeedup / t.Ideal.Speedup
	}
	if res.HDFS > 0 && res.RackMulti > 0 {
		res.RackSpeedup = res.HDFS / res.RackMulti
		res.RackOfIdeal = res.RackSpeedup / t.Ideal.Speedup
	}
	return res
}

// Distribution summarizes the measured topologies: SMARTH's speedup, the
// ideal's, and SMARTH's share of it; then the same for rackaware
// multi-pipeline.
func (r *RandomReport) Distribution() Distribution {
	var d struct{ s, id, sc, of, os, rs, ro, cs, co []float64 }
	for _, res := range r.Results {
		if res.Speedup > 0 {
			d.s, d.id, d.of = append(d.s, res.Speedup), append(d.id, res.Topology.Ideal.Speedup), append(d.of, res.OfIdeal)
			d.sc, d.os = append(d.sc, res.Topology.Ideal.ScheduleSpeedup), append(d.os, res.OfSchedule)
		}
		if res.RackSpeedup > 0 {
			d.rs, d.ro = append(d.rs, res.RackSpeedup), append(d.ro, res.RackOfIdeal)
		}
		if res.ConcSpeedup > 0 {
			d.cs, d.co = append(d.cs, res.ConcSpeedup), append(d.co, res.ConcOfIdeal)
		}
	}
	return Distribution{Speedup: quartiles(d.s), Ideal: quartiles(d.id), Schedule: quartiles(d.sc), OfIdeal: quartiles(d.of),
		OfSchedule: quartiles(d.os), RackSpeedup: quartiles(d.rs), RackOfIdeal: quartiles(d.ro),
		ConcSpeedup: quartiles(d.cs), ConcOfIdeal: quartiles(d.co)}
}

// Classes splits the topologies where the client's rack has fewer
// datanodes than the client may open pipelines (k < P: the ideal needs a
// pipeline across the client's own cross-rack link besides one on every
// rack-mate) from the others (k >= P: rack-mates alone can carry every
// pipeline), which reach the ideal in different ways.
func (r *RandomReport) Classes() (small, large *RandomReport) {
	small, large = &RandomReport{Spec: r.Spec, Size: r.Size, Time: r.Time}, &RandomReport{Spec: r.Spec, Size: r.Size, Time: r.Time}
	for _, res := range r.Results {
		if res.Topology.Ideal.Local < res.Topology.Ideal.Pipelines {
			small.Results = append(small.Results, res)
		} else {
			large.Results = append(large.Results, res)
		}
	}
	return small, large
}

// Distribution are the quartiles of a random-topology run.
type Distribution struct {
	Speedup, Ideal, Schedule, OfIdeal, OfSchedule, RackSpeedup, RackOfIdeal Quartiles
	ConcSpeedup, ConcOfIdeal                                                Quartiles
}

// PrintTable writes one row per topology and the distributions.
func (r *RandomReport) PrintTable(w io.Writer) {
	fmt.Fprintf(w, "random topologies (seed %d): put of %s in %s blocks, replication 3, one upload per cell, no warm-up\n",
		r.Spec.Seed, sizeText(r.Size), sizeText(r.Spec.BlockSize))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\ttopology\tk\tP\tideal\tschedule\tHDFS s\trackaware multi s\tSMARTH s\trackaware multi\tSMARTH\tof ideal\tof schedule\tslow 1st\tconcurrent s\tconcurrent\tof ideal\tload\t")
	for _, res := range r.Results {
		t := res.Topology
		if res.Err != "" && res.Speedup == 0 {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.2fx\t%.2fx\tfailed: %s\t\t\t\t\t\t\t\t\t\t\t\t\n", t.Index, t.Shape(), t.Ideal.Local, t.Ideal.Pipelines, t.Ideal.Speedup, t.Ideal.ScheduleSpeedup, res.Err)
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.2fx\t%.2fx\t%.2f\t%.2f\t%.2f\t%.2fx\t%.2fx\t%.0f%%\t%.0f%%\t%.0f%%\t%.2f\t%.2fx\t%.0f%%\t%.1f\t\n", t.Index, t.Shape(),
			t.Ideal.Local, t.Ideal.Pipelines, t.Ideal.Speedup, t.Ideal.ScheduleSpeedup, res.HDFS, res.RackMulti, res.SMARTH,
			res.RackSpeedup, res.Speedup, res.OfIdeal*100, res.OfSchedule*100, res.SlowFirstPct,
			res.Concurrent, res.ConcSpeedup, res.ConcOfIdeal*100, res.Load)
	}
	tw.Flush()
	d := r.Distribution()
	q := func(name string, v Quartiles, pct bool) {
		f, unit := 1.0, "x"
		if pct {
			f, unit = 100, "%"
		}
		fmt.Fprintf(w, "%-30s n=%d  min %.2f%s  q1 %.2f%s  median %.2f%s  q3 %.2f%s  max %.2f%s\n", name, v.N,
			v.Min*f, unit, v.Q1*f, unit, v.Median*f, unit, v.Q3*f, unit, v.Max*f, unit)
	}
	q("ideal speedup (min-cut)", d.Ideal, false)
	q("schedule speedup", d.Schedule, false)
	q("SMARTH speedup over HDFS", d.Speedup, false)
	q("SMARTH share of the ideal", d.OfIdeal, true)
	q("SMARTH share of the schedule", d.OfSchedule, true)
	q("rackaware multi speedup", d.RackSpeedup, false)
	q("rackaware multi share of ideal", d.RackOfIdeal, true)
	q("concurrent speedup over HDFS", d.ConcSpeedup, false)
	q("concurrent share of the ideal", d.ConcOfIdeal, true)
	small, large := r.Classes()
	for _, c := range []struct {
		name string
		r    *RandomReport
	}{{"k < P", small}, {"k >= P", large}} {
		d := c.r.Distribution()
		fmt.Fprintf(w, "%-6s topologies n=%d  share of the ideal: SMARTH median %.1f%% min %.1f%% (%d measured), concurrent median %.1f%% min %.1f%% (%d measured)\n",
			c.name, len(c.r.Results), d.OfIdeal.Median*100, d.OfIdeal.Min*100, d.OfIdeal.N, d.ConcOfIdeal.Median*100, d.ConcOfIdeal.Min*100, d.ConcOfIdeal.N)
	}
	fmt.Fprintln(w, "topology: datanodes per rack (* the client's rack) @ NIC/cross-rack Mbit/s; k: datanodes in the client's rack;")
	fmt.Fprintln(w, "P: most pipelines open; ideal: min-cut speedup bound (IdealOf); schedule: what the protocol can reach on the links (ScheduleSpeedup);")
	fmt.Fprintln(w, "slow 1st: SMARTH blocks begun on a node slower than the client's link;")
	fmt.Fprintf(w, "concurrent: multipipeline-concurrent under %s placement\n", r.Spec.concurrentPlacement())
}

// Recompute refreshes every topology's ideals and the shares from the
// measured times, for a report saved by an earlier version.
func (r *RandomReport) Recompute() {
	spec := r.Spec
	if spec.Size == 0 {
		spec.Size = r.Size
	}
	for i := range r.Results {
		t := &r.Results[i].Topology
		total := 0
		for _, n := range t.RackSizes {
			total += n
		}
		t.Ideal = IdealOf(t.NICMbit*1e6, t.CrossMbit*1e6, t.RackSizes[t.ClientRack], total, 3, spec.MaxPipelines)
		t.Ideal.ScheduleSpeedup = ScheduleSpeedup(t.NICMbit*1e6, t.CrossMbit*1e6, t.Ideal.Local, t.Ideal.Pipelines, blocks(spec))
		res := resultOf(*t, r.Results[i].Report, spec.concurrentPlacement())
		res.Err = r.Results[i].Err
		r.Results[i] = res
	}
}

// ReadRandomReport loads a report saved by WriteJSON.
func ReadRandomReport(path string) (*RandomReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r RandomReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// WriteJSON saves the report.
func (r *RandomReport) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
