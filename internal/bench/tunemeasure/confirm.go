package tunemeasure

import (
	"context"
	"fmt"
	"io"

	"smarth/internal/bench/ab"
	"smarth/internal/tune"
)

// MinRounds is the fewest interleaved rounds a confirmation takes: with
// one value per side per round, Mann-Whitney cannot reach p < 0.05 on
// fewer than 4 a side, and 6 leaves room for one odd round.
const MinRounds = 6

// Confirm runs a and b interleaved A B B A A B B A ... (rounds), so
// that drift of the machine hits both alike, and judges b against a with
// the A/B statistics of `smarth bench ab` (internal/bench/ab): medians,
// Hodges-Lehmann speedup with its 95% interval, Mann-Whitney U and a
// verdict at p < 0.05. Each round gives one value per side, the median
// of its transfers: the transfers of one round share that round's state
// of the machine, so counting each as a sample (as this once did, 6
// rounds of 3 transfers judged as n = 18) makes the test far too sure
// of itself when rounds differ.
func Confirm(ctx context.Context, bench *Bench, a, b tune.Profile, rounds int, out io.Writer) (ab.Comparison, error) {
	return confirm(ctx, bench.Measure, a, b, rounds, out)
}

func confirm(ctx context.Context, measure func(context.Context, tune.Profile) (Sample, error), a, b tune.Profile, rounds int, out io.Writer) (ab.Comparison, error) {
	if rounds < MinRounds {
		return ab.Comparison{}, fmt.Errorf("a/b confirmation: %d rounds; it takes at least %d", rounds, MinRounds)
	}
	var xa, xb []float64
	for i := range rounds {
		order := []tune.Profile{a, b}
		if i%2 == 1 {
			order = []tune.Profile{b, a}
		}
		for _, p := range order {
			s, err := measure(ctx, p)
			if err != nil {
				return ab.Comparison{}, err
			}
			if p.Name == a.Name {
				xa = append(xa, s.Mbps)
			} else {
				xb = append(xb, s.Mbps)
			}
			fmt.Fprintf(out, "  a/b round %d %-28s %8.1f Mbps (median of %d transfers)\n", i+1, p.Name, s.Mbps, len(s.All))
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
