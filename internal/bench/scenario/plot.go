package scenario

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot draws the report to path (.svg or .png): one bar per placement and
// mode at its mean MiB/s, each run as a point, the client's link rate as a
// dashed line and 90% of it (the project's aim) as a dotted one.
func (r *Report) Plot(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("plot %s: want a .svg or .png file name", path)
	}
	if len(r.Cells) == 0 {
		return fmt.Errorf("plot %s: no runs to plot", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: put of %s, block %s, r%d", r.Scenario, sizeText(r.Size), sizeText(r.BlockSize), r.Replication)
	p.Y.Label.Text = "MiB/s"
	p.Y.Min = 0

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
	scatter, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	scatter.GlyphStyle.Shape = draw.CircleGlyph{}
	scatter.GlyphStyle.Color = color.Black
	scatter.GlyphStyle.Radius = vg.Points(2)
	p.Add(scatter)
	p.Legend.Add("runs", scatter)

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
			y := r.BoundMiBps * l.frac
			line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: float64(len(r.Cells)) - 0.5, Y: y}})
			if err != nil {
				return err
			}
			line.LineStyle.Dashes = l.dashes
			line.LineStyle.Color = color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}
			p.Add(line)
			p.Legend.Add(l.name, line)
		}
		top = max(top, r.BoundMiBps)
	}
	p.Y.Max = top * 1.3
	p.Legend.Top = true
	width := vg.Points(float64(140 + 95*len(r.Cells)))
	return p.Save(width, 3.6*vg.Inch, path)
}
