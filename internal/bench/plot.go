package bench

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"smarth/internal/bench/plotkit"
	"smarth/internal/units"
)

// Plot draws the result to path (.svg or .png): one bar per mode at its
// mean throughput, every run as a point over its bar, and the link-rate
// bound as a dashed line when known.
func (r *Result) Plot(path string) error {
	p, err := plotkit.New(path, len(r.Summaries), "runs",
		fmt.Sprintf("smarth %s of %s, replication %d", r.Op, units.FormatSizeExact(r.Size), r.Replication), "MiB/s")
	if err != nil {
		return err
	}

	means := make(plotter.Values, len(r.Summaries))
	names := make([]string, len(r.Summaries))
	index := map[string]int{}
	for i, s := range r.Summaries {
		means[i] = s.MiBps
		names[i] = fmt.Sprintf("%s (%d runs)", s.Mode, s.Runs)
		index[s.Mode] = i
	}
	bars, err := plotter.NewBarChart(means, vg.Points(40))
	if err != nil {
		return err
	}
	bars.Color = color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)
	p.Legend.Add("mean", bars)

	pts := make(plotter.XYs, 0, len(r.Runs))
	for _, run := range r.Runs {
		pts = append(pts, plotter.XY{X: float64(index[run.Mode]), Y: run.MiBps})
	}
	if err := plotkit.AddRuns(p, pts, vg.Points(2.5)); err != nil {
		return err
	}

	if r.BoundMiBps > 0 {
		if err := plotkit.AddReference(p, r.BoundMiBps, len(r.Summaries), []vg.Length{vg.Points(4), vg.Points(3)},
			fmt.Sprintf("bound: client link %s", units.FormatBitRate(r.LinkRateBits))); err != nil {
			return err
		}
	}
	// Leave headroom above the highest point for the legend.
	top := r.BoundMiBps
	for _, run := range r.Runs {
		top = max(top, run.MiBps)
	}
	p.Y.Max = top * 1.35
	p.Legend.Top = true
	width := vg.Points(float64(160 + 120*len(r.Summaries)))
	return p.Save(width, 4*vg.Inch, path)
}
