package ab

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// WriteTable prints one line per comparison: medians, speedup with its
// interval, p-value and verdict.
func WriteTable(w io.Writer, cs []Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\truns A/B\tmedian A\tmedian B\tspeedup\t95% CI\tp (Mann-Whitney)\tverdict")
	for _, c := range cs {
		p := fmt.Sprintf("%.4f", c.U.P)
		if !c.U.Exact {
			p += " (normal)"
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%.3fx\t%s\t%s\t%s\n", c.Name,
			len(c.A.Values), len(c.B.Values), num(c.MedianA), num(c.MedianB),
			c.Speedup, CIText(c), p, c.Verdict)
	}
	return tw.Flush()
}

// CIText renders the interval, e.g. "[0.981, 1.042]".
func CIText(c Comparison) string {
	if c.CILow <= 0 || math.IsInf(c.CIHigh, 0) {
		return "unbounded (too few runs)"
	}
	return fmt.Sprintf("[%.3f, %.3f]", c.CILow, c.CIHigh)
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// MarshalJSON writes an infinite interval bound as null: JSON has no
// infinity and an unbounded interval must still be written.
func (c Comparison) MarshalJSON() ([]byte, error) {
	type plain Comparison
	return json.Marshal(struct {
		plain
		CILow  *float64 `json:"ci_low"`
		CIHigh *float64 `json:"ci_high"`
	}{plain(c), finite(c.CILow), finite(c.CIHigh)})
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
