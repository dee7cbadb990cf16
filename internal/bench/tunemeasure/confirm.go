package tunemeasure

import (
	"context"
	"fmt"
	"io"

	"smarth/internal/bench/ab"
	"smarth/internal/tune"
)

// Confirm runs a and b interleaved A B B A A B B A ... (runs rounds), so
// that drift of the machine hits both alike, and judges b against a with
// the A/B statistics of `smarth bench ab` (internal/bench/ab): medians,
// Hodges-Lehmann speedup with its 95% interval, Mann-Whitney U and a
// verdict at p < 0.05. Every transfer of a round counts as one run.
func Confirm(ctx context.Context, bench *Bench, a, b tune.Profile, runs int, out io.Writer) (ab.Comparison, error) {
	var xa, xb []float64
	for i := range runs {
		order := []tune.Profile{a, b}
		if i%2 == 1 {
			order = []tune.Profile{b, a}
		}
		for _, p := range order {
			s, err := bench.Measure(ctx, p)
			if err != nil {
				return ab.Comparison{}, err
			}
			if p.Name == a.Name {
				xa = append(xa, s.All...)
			} else {
				xb = append(xb, s.All...)
			}
			fmt.Fprintf(out, "  a/b round %d %-28s %8.1f Mbps\n", i+1, p.Name, s.Mbps)
		}
	}
	return Judge(a.Name, b.Name, xa, xb)
}

// Judge compares throughputs (Mbps, higher is better) of b against a.
func Judge(nameA, nameB string, a, b []float64) (ab.Comparison, error) {
	opts := ab.DefaultOptions()
	opts.HigherIsBetter = true
	return ab.Compare("throughput", ab.Sample{Label: nameA, Values: a}, ab.Sample{Label: nameB, Values: b}, opts)
}

// WriteVerdict prints an A/B verdict line.
func WriteVerdict(w io.Writer, c ab.Comparison) {
	fmt.Fprintf(w, "%s vs %s: median %.1f vs %.1f Mbps, speedup %.3f (HL %.3f, 95%% CI %.3f..%.3f), Mann-Whitney p=%.3g, n=%d+%d: %s\n",
		c.B.Label, c.A.Label, c.MedianB, c.MedianA, c.Speedup, c.HLSpeedup, c.CILow, c.CIHigh, c.U.P,
		len(c.B.Values), len(c.A.Values), c.Verdict)
}
