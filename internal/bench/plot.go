package bench

import (
	"fmt"
	"image/color"
	"path/filepath"
	"smarth/internal/units"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot draws the result to path (.svg or .png): one bar per mode at its
// mean throughput, every run as a point over its bar, and the link-rate
// bound as a dashed line when known.
func (r *Result) Plot(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("plot %s: want a .svg or .png file name", path)
	}
	if len(r.Summaries) == 0 {
		return fmt.Errorf("plot %s: no runs to plot", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("smarth %s of %s, replication %d", r.Op, units.FormatSizeExact(r.Size), r.Replication)
	p.Y.Label.Text = "MiB/s"
	p.Y.Min = 0

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

	pts := make(plotter.XYs, 0, len(r.Runs))
	for _, run := range r.Runs {
		pts = append(pts, plotter.XY{X: float64(index[run.Mode]), Y: run.MiBps})
	}
	scatter, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	scatter.GlyphStyle.Shape = draw.CircleGlyph{}
	scatter.GlyphStyle.Color = color.Black
	scatter.GlyphStyle.Radius = vg.Points(2.5)
	p.Add(scatter)
	p.Legend.Add("mean", bars)
	p.Legend.Add("runs", scatter)

	if r.BoundMiBps > 0 {
		bound, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: r.BoundMiBps}, {X: float64(len(r.Summaries)) - 0.5, Y: r.BoundMiBps}})
		if err != nil {
			return err
		}
		bound.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		bound.LineStyle.Color = color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}
		p.Add(bound)
		p.Legend.Add(fmt.Sprintf("bound: client link %s", units.FormatBitRate(r.LinkRateBits)), bound)
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
