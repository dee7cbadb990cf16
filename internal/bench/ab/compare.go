package ab

import (
	"errors"
	"fmt"
	"math"
)

// Verdict is the plain-words outcome of a comparison, from B's side.
type Verdict string

const (
	Faster Verdict = "faster" // B is better than A, p < alpha
	Slower Verdict = "slower" // B is worse than A, p < alpha
	NoDiff Verdict = "no significant difference"
)

// Options set what a comparison assumes. The zero value is not useful; use
// DefaultOptions and change what differs.
type Options struct {
	// Alpha is the significance level of the verdict (0.05).
	Alpha float64
	// Confidence of the speedup's interval (0.95).
	Confidence float64
	// HigherIsBetter is set for rates (MiB/s, ops/s); the default is
	// times, where lower is better.
	HigherIsBetter bool
	// MinRuns is the least number of measurements per side Compare
	// accepts. With 6 per side the smallest exact two-sided p is 0.002,
	// and a 95% interval exists; with 3 per side p can never reach 0.05.
	MinRuns int
}

// DefaultOptions: alpha 0.05, 95% interval, times, at least 6 runs a side.
func DefaultOptions() Options {
	return Options{Alpha: 0.05, Confidence: 0.95, MinRuns: 6}
}

// Validate reports options that cannot give a meaningful comparison.
func (o Options) Validate() error {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("ab: alpha %v not in (0, 1)", o.Alpha)
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return fmt.Errorf("ab: confidence %v not in (0, 1)", o.Confidence)
	}
	if o.MinRuns < 1 {
		return fmt.Errorf("ab: min runs %d < 1", o.MinRuns)
	}
	return nil
}

// Sample is one side's measurements of one benchmark.
type Sample struct {
	Label  string    `json:"label"`
	Values []float64 `json:"values"`
}

// Comparison is the outcome for one benchmark. Speedups > 1 mean B is
// better than A (faster, or higher rate).
type Comparison struct {
	Name    string  `json:"name,omitempty"`
	A       Sample  `json:"a"`
	B       Sample  `json:"b"`
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	// Speedup is the ratio of medians (the paper's Table III figure).
	Speedup float64 `json:"speedup"`
	// HLSpeedup is the Hodges-Lehmann estimate (median pairwise ratio),
	// the centre of the interval.
	HLSpeedup float64 `json:"hl_speedup"`
	// CILow, CIHigh bound the speedup at Confidence; [0, +Inf) (high is
	// null in JSON) when the samples are too small for any interval.
	CILow          float64     `json:"ci_low"`
	CIHigh         float64     `json:"ci_high"`
	Confidence     float64     `json:"confidence"`
	U              MannWhitney `json:"mann_whitney"`
	Alpha          float64     `json:"alpha"`
	Verdict        Verdict     `json:"verdict"`
	HigherIsBetter bool        `json:"higher_is_better,omitempty"`
}

// ErrFewRuns is returned (wrapped) when a side has fewer than MinRuns
// measurements.
var ErrFewRuns = errors.New("too few runs")

// Compare compares sample b against sample a.
func Compare(name string, a, b Sample, opts Options) (Comparison, error) {
	if err := opts.Validate(); err != nil {
		return Comparison{}, err
	}
	for _, s := range []Sample{a, b} {
		if len(s.Values) < opts.MinRuns {
			return Comparison{}, fmt.Errorf("ab: %s: %s has %d runs, want at least %d: %w",
				name, s.Label, len(s.Values), opts.MinRuns, ErrFewRuns)
		}
		for _, v := range s.Values {
			if !(v > 0) || math.IsInf(v, 0) {
				// Ratios and logs need positive finite values; a zero
				// time or rate means the run did not measure anything.
				return Comparison{}, fmt.Errorf("ab: %s: %s has value %v, want > 0", name, s.Label, v)
			}
		}
	}
	c := Comparison{
		Name: name, A: a, B: b,
		MedianA: median(a.Values), MedianB: median(b.Values),
		Confidence: opts.Confidence, Alpha: opts.Alpha, HigherIsBetter: opts.HigherIsBetter,
	}
	c.U = MannWhitneyU(a.Values, b.Values)

	// Work on logs so the interval of a difference becomes an interval
	// of a ratio. For times, speedup = A/B, i.e. log A - log B.
	better, worse := logs(a.Values), logs(b.Values)
	c.Speedup = c.MedianA / c.MedianB
	if opts.HigherIsBetter {
		better, worse = worse, better
		c.Speedup = c.MedianB / c.MedianA
	}
	est, lo, hi := hodgesLehmann(better, worse, opts.Confidence, c.U.Exact)
	c.HLSpeedup, c.CILow, c.CIHigh = math.Exp(est), math.Exp(lo), math.Exp(hi)
	c.Verdict = verdict(c.U.P, c.HLSpeedup, opts.Alpha)
	return c, nil
}

func verdict(p, hl, alpha float64) Verdict {
	switch {
	case !(p < alpha) || hl == 1:
		return NoDiff
	case hl > 1:
		return Faster
	default:
		return Slower
	}
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}
