package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"smarth/internal/units"
	"text/tabwriter"
	"time"
)

// Run is one timed transfer.
type Run struct {
	Mode    string  `json:"mode"`
	Index   int     `json:"index"` // position in the interleaved order, from 0
	Seconds float64 `json:"seconds"`
	MiBps   float64 `json:"mib_per_s"`
	Path    string  `json:"path"`
}

// Times summarises timed transfers of one size: the spread of their
// times and the throughput at the mean and at the best time. Summary
// here and scenario's Cell carry it (its fields are theirs in JSON).
type Times struct {
	Runs      int     `json:"runs"`
	Mean      float64 `json:"mean_s"`
	Min       float64 `json:"min_s"`
	Max       float64 `json:"max_s"`
	StdDev    float64 `json:"stddev_s"`       // sample standard deviation
	MiBps     float64 `json:"mib_per_s"`      // size / mean time
	BestMiBps float64 `json:"best_mib_per_s"` // size / best time
}

// TimesOf summarises the times secs (seconds, at least one) of transfers
// of size bytes each.
func TimesOf(secs []float64, size int64) Times {
	s := Times{Runs: len(secs), Min: math.Inf(1)}
	var sum float64
	for _, v := range secs {
		sum += v
		s.Min = min(s.Min, v)
		s.Max = max(s.Max, v)
	}
	s.Mean = sum / float64(len(secs))
	var sq float64
	for _, v := range secs {
		sq += (v - s.Mean) * (v - s.Mean)
	}
	if len(secs) > 1 {
		s.StdDev = math.Sqrt(sq / float64(len(secs)-1))
	}
	s.MiBps = mibps(size, s.Mean)
	s.BestMiBps = mibps(size, s.Min)
	return s
}

// Against compares t with base and the bound: the throughput gain over
// base in percent, (base mean / t's mean - 1) x 100, nil without a base,
// for base itself or without a mean; and MiBps as a percentage of
// boundMiBps, nil without a bound. t and base are in one report, so base
// is t when the pointers are equal.
func (t *Times) Against(base *Times, boundMiBps float64) (gainPct, pctOfBound *float64) {
	if base != nil && base != t && t.Mean > 0 {
		v := (base.Mean/t.Mean - 1) * 100
		gainPct = &v
	}
	if boundMiBps > 0 {
		v := t.MiBps / boundMiBps * 100
		pctOfBound = &v
	}
	return gainPct, pctOfBound
}

// Summary is the runs of one mode.
type Summary struct {
	Mode string `json:"mode"`
	Times
	// ImprovementPct is the throughput gain over the classic mode, in
	// percent: (classic mean / this mean - 1) * 100. Absent for classic
	// itself and when classic was not run.
	ImprovementPct *float64 `json:"improvement_pct,omitempty"`
	// PctOfBound is MiBps as a percentage of the bound, when one is known.
	PctOfBound *float64 `json:"pct_of_bound,omitempty"`
}

// Result is what `smarth bench put` and `smarth bench get` print and save.
type Result struct {
	Op          string    `json:"op"` // put or get
	Time        time.Time `json:"time"`
	NameNode    string    `json:"namenode"`
	Size        int64     `json:"size_bytes"`
	Replication int       `json:"replication"`
	BlockSize   int64     `json:"block_size,omitempty"`
	// LinkRateBits is the client's link rate in bit/s when given: the
	// bound of a multi-pipeline write in SMARTH section III.D.
	LinkRateBits float64   `json:"link_rate_bits_per_s,omitempty"`
	BoundMiBps   float64   `json:"bound_mib_per_s,omitempty"`
	Runs         []Run     `json:"runs"`
	Summaries    []Summary `json:"summaries"`
}

// MiB is 2^20 bytes, the unit of every throughput figure.
const MiB = 1 << 20

func mibps(size int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(size) / MiB / seconds
}

// Summarize fills r.Summaries from r.Runs, modes in order of first run.
func (r *Result) Summarize() {
	r.Summaries = nil
	if r.LinkRateBits > 0 {
		r.BoundMiBps = r.LinkRateBits / 8 / MiB
	}
	byMode := map[string][]float64{}
	var order []string
	for _, run := range r.Runs {
		if _, ok := byMode[run.Mode]; !ok {
			order = append(order, run.Mode)
		}
		byMode[run.Mode] = append(byMode[run.Mode], run.Seconds)
	}
	for _, m := range order {
		r.Summaries = append(r.Summaries, summarize(m, byMode[m], r.Size))
	}
	var classic *Summary
	for i := range r.Summaries {
		if r.Summaries[i].Mode == "classic" {
			classic = &r.Summaries[i]
		}
	}
	var base *Times
	if classic != nil {
		base = &classic.Times
	}
	for i := range r.Summaries {
		s := &r.Summaries[i]
		s.ImprovementPct, s.PctOfBound = s.Against(base, r.BoundMiBps)
	}
}

func summarize(mode string, secs []float64, size int64) Summary {
	return Summary{Mode: mode, Times: TimesOf(secs, size)}
}

// PrintTable writes the summary table. The "vs classic" column appears
// when there is a classic mode to compare with, the bound columns when the
// link rate is known.
func (r *Result) PrintTable(w io.Writer) {
	fmt.Fprintf(w, "%s of %s, replication %d", r.Op, units.FormatSizeExact(r.Size), r.Replication)
	if r.BlockSize > 0 {
		fmt.Fprintf(w, ", block size %s", units.FormatSizeExact(r.BlockSize))
	}
	fmt.Fprintln(w)
	compare := false
	for _, s := range r.Summaries {
		compare = compare || s.ImprovementPct != nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	header := "mode\truns\tmean s\tmin s\tmax s\tstddev s\tMiB/s\tbest MiB/s\t"
	if compare {
		header += "vs classic\t"
	}
	if r.BoundMiBps > 0 {
		header += "bound MiB/s\t% of bound\t"
	}
	fmt.Fprintln(tw, header)
	for _, s := range r.Summaries {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t", s.Mode, s.Runs, s.Mean, s.Min, s.Max, s.StdDev, s.MiBps, s.BestMiBps)
		if compare {
			imp := "-"
			if s.ImprovementPct != nil {
				imp = fmt.Sprintf("%+.1f%%", *s.ImprovementPct)
			}
			fmt.Fprintf(tw, "%s\t", imp)
		}
		if r.BoundMiBps > 0 {
			fmt.Fprintf(tw, "%.1f\t%.0f%%\t", r.BoundMiBps, *s.PctOfBound)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if r.BoundMiBps > 0 {
		fmt.Fprintf(w, "bound: the client's link rate %s (SMARTH III.D: a multi-pipeline write is bound by the client's link, a classic one by the slowest link of each pipeline)\n", units.FormatBitRate(r.LinkRateBits))
	}
}

// WriteJSON saves the result to path.
func (r *Result) WriteJSON(path string) error {
	return writeJSON(path, r)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
