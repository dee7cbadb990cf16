package ab

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"smarth/internal/bench/plotkit"
)

// Plot draws the comparisons to path (.svg or .png), in the style of
// internal/bench's plots: per benchmark, every run of A and of B as a
// point, divided by A's median so that benchmarks of seconds and of
// minutes share one axis (A's median is the line at 1), B's median as a
// bar, and the speedup with its interval and verdict under the name.
func Plot(path, title string, cs []Comparison) error {
	if err := plotkit.CheckPath(path); err != nil {
		return err
	}
	if len(cs) == 0 {
		return fmt.Errorf("plot %s: nothing to plot", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "run / median of " + cs[0].A.Label

	medB := make(plotter.Values, len(cs))
	names := make([]string, len(cs))
	var ptsA, ptsB plotter.XYs
	top := 1.0
	for i, c := range cs {
		medB[i] = c.MedianB / c.MedianA
		names[i] = fmt.Sprintf("%s\n%.2fx %s\n%s", c.Name, c.Speedup, CIText(c), c.Verdict)
		for _, v := range c.A.Values {
			ptsA = append(ptsA, plotter.XY{X: float64(i) - 0.12, Y: v / c.MedianA})
			top = max(top, v/c.MedianA)
		}
		for _, v := range c.B.Values {
			ptsB = append(ptsB, plotter.XY{X: float64(i) + 0.12, Y: v / c.MedianA})
			top = max(top, v/c.MedianA)
		}
	}
	bars, err := plotter.NewBarChart(medB, vg.Points(30))
	if err != nil {
		return err
	}
	bars.Color = color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0x90}
	bars.LineStyle.Width = 0
	bars.Offset = vg.Points(8)
	p.Add(bars)
	p.Legend.Add("median of "+cs[0].B.Label, bars)

	for _, s := range []struct {
		pts   plotter.XYs
		label string
		col   color.Color
	}{
		{ptsA, cs[0].A.Label, color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}},
		{ptsB, cs[0].B.Label, color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}},
	} {
		sc, err := plotter.NewScatter(s.pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Color = s.col
		sc.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(sc)
		p.Legend.Add("runs of "+s.label, sc)
	}
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(cs)) - 0.5, Y: 1}})
	if err != nil {
		return err
	}
	one.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	p.Legend.Add("median of "+cs[0].A.Label, one)
	p.NominalX(names...)
	p.Y.Min = 0
	p.Y.Max = top * 1.4 // headroom for the legend
	p.Legend.Top = true
	width := vg.Points(float64(200 + 130*len(cs)))
	return p.Save(width, 4.5*vg.Inch, path)
}
