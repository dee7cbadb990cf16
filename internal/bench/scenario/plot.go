package scenario

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"smarth/internal/bench/plotkit"
)

// Plot draws the report to path (.svg or .png): one bar per placement and
// mode at its mean MiB/s, each run as a point, the client's link rate as a
// dashed line and 90% of it (the project's aim) as a dotted one.
func (r *Report) Plot(path string) error {
	p, err := plotkit.New(path, len(r.Cells), "runs",
		fmt.Sprintf("%s: put of %s, block %s, r%d", r.Scenario, sizeText(r.Size), sizeText(r.BlockSize), r.Replication), "MiB/s")
	if err != nil {
		return err
	}

	colors := map[string]color.Color{
		"classic":       color.RGBA{R: 0x8c, G: 0x8c, B: 0x8c, A: 0xff},
		"multipipeline": color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff},
	}
	names := make([]string, len(r.Cells))
	index := map[string]int{}
	for i, c := range r.Cells {
		vals := make(plotter.Values, len(r.Cells))
		vals[i] = c.MiBps
		bars, err := plotter.NewBarChart(vals, vg.Points(36))
		if err != nil {
			return err
		}
		bars.Color = colors[c.Mode]
		if bars.Color == nil {
			bars.Color = color.RGBA{R: 0x55, G: 0xa8, B: 0x68, A: 0xff}
		}
		bars.LineStyle.Width = 0
		p.Add(bars)
		name := c.Placement + "\n" + c.Mode
		if c.Label != "" {
			name += " (" + c.Label + ")"
		}
		names[i] = name
		index[c.Placement+"/"+c.Mode] = i
	}
	p.NominalX(names...)

	pts := make(plotter.XYs, 0, len(r.Runs))
	for _, run := range r.Runs {
		if i, ok := index[run.Placement+"/"+run.Mode]; ok {
			pts = append(pts, plotter.XY{X: float64(i), Y: run.MiBps})
		}
	}
	if err := plotkit.AddRuns(p, pts, vg.Points(2)); err != nil {
		return err
	}

	top := 0.0
	for _, run := range r.Runs {
		top = max(top, run.MiBps)
	}
	if r.BoundMiBps > 0 {
		for _, l := range []struct {
			frac   float64
			dashes []vg.Length
			name   string
		}{
			{1, []vg.Length{vg.Points(5), vg.Points(3)}, fmt.Sprintf("client link %.0f Mbit/s", r.LinkRateBits/1e6)},
			{0.9, []vg.Length{vg.Points(1), vg.Points(2)}, "90% of the link"},
		} {
			if err := plotkit.AddReference(p, r.BoundMiBps*l.frac, len(r.Cells), l.dashes, l.name); err != nil {
				return err
			}
		}
		top = max(top, r.BoundMiBps)
	}
	p.Y.Max = top * 1.3
	p.Legend.Top = true
	width := vg.Points(float64(140 + 95*len(r.Cells)))
	return p.Save(width, 3.6*vg.Inch, path)
}
