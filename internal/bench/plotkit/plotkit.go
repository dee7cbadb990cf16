// Package plotkit is the frame the benchmark reports (bench, bench/scenario)
// draw their charts in with gonum/plot: the checks before drawing, a y axis
// from 0, the runs as dots and the dashed reference lines, so that every
// chart reads alike and a fix to one reaches all.
package plotkit

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

// ReferenceColor is the colour of the reference lines (a link-rate bound,
// no gain).
var ReferenceColor = color.RGBA{R: 0xc4, G: 0x4e, B: 0x52, A: 0xff}

// New checks that path names a file Save can write (.svg or .png) and
// that there is something to draw (n > 0; what names the things in the
// error), then returns a plot titled title with its y axis, labelled
// ylabel, starting at 0.
func New(path string, n int, what, title, ylabel string) (*plot.Plot, error) {
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("plot %s: no %s to plot", path, what)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	return p, nil
}

// CheckPath refuses a file name other than .svg or .png: gonum's Save
// picks the format by the extension and would write PDF, EPS, JPEG or
// TIFF too, and the reports promise only these two.
func CheckPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("plot %s: want a .svg or .png file name", path)
	}
	return nil
}

// AddRuns draws one black dot of the given radius per run over the bars
// (pts: x is the bar's index) and names them "runs" in the legend.
func AddRuns(p *plot.Plot, pts plotter.XYs, radius vg.Length) error {
	scatter, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	scatter.GlyphStyle.Shape = draw.CircleGlyph{}
	scatter.GlyphStyle.Color = color.Black
	scatter.GlyphStyle.Radius = radius
	p.Add(scatter)
	p.Legend.Add("runs", scatter)
	return nil
}

// AddReference draws a horizontal line in ReferenceColor at y across n
// bars (from the left edge of the first to the right edge of the last),
// dashed as given, named name in the legend.
func AddReference(p *plot.Plot, y float64, n int, dashes []vg.Length, name string) error {
	line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: float64(n) - 0.5, Y: y}})
	if err != nil {
		return err
	}
	line.LineStyle.Dashes = dashes
	line.LineStyle.Color = ReferenceColor
	p.Add(line)
	p.Legend.Add(name, line)
	return nil
}
