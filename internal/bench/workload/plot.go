package workload

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"smarth/internal/bench/plotkit"
)

// Plot draws Fig. 11/12: one group of bars per app, one bar per
// combination at its normalized warm runtime; and, for every combination
// with samples, Fig. 13/14 beside it (<name>-<combo>-blocks.svg): cached
// blocks per app over time.
func (r *Result) Plot(path string) error {
	if err := plotkit.CheckPath(path); err != nil {
		return err
	}
	ext := strings.ToLower(filepath.Ext(path)) // the blocks plots take the same format
	rows := r.Rows()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("workload %s: runtime normalized to %s (warm runs)", r.Workload, Baseline)
	p.Y.Label.Text = "normalized runtime"
	p.Y.Min = 0
	w := vg.Points(12)
	for i, c := range r.Combos {
		vals := make(plotter.Values, len(r.Labels))
		for j, l := range r.Labels {
			for _, row := range rows {
				if row.Combo == c.Combo.Name && row.Label == l {
					vals[j] = row.Norm
				}
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = 0
		bars.Color = plotutil.Color(i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(r.Combos)-1)/2)
		p.Add(bars)
		p.Legend.Add(c.Combo.Name, bars)
	}
	p.NominalX(r.Labels...)
	p.Legend.Top = true
	if err := p.Save(vg.Points(float64(200+len(r.Labels)*len(r.Combos)*16)), 4*vg.Inch, path); err != nil {
		return err
	}
	for _, c := range r.Combos {
		if len(c.Samples) == 0 {
			continue
		}
		if err := plotBlocks(r.Workload, c, strings.TrimSuffix(path, filepath.Ext(path))+"-"+c.Combo.Name+"-blocks"+ext); err != nil {
			return err
		}
	}
	return nil
}

// plotBlocks draws cached blocks per app over time for one combination,
// runs laid end to end.
func plotBlocks(workload string, c ComboResult, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("workload %s, %s: cached blocks per app", workload, c.Combo.Name)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "cached blocks"
	var offset, lastT float64
	lastRun := -1
	series := map[string]plotter.XYs{}
	for _, s := range c.Samples {
		if s.Run != lastRun {
			offset, lastRun = offset+lastT, s.Run
		}
		lastT = s.T
		for _, a := range appsOf(c.Samples) {
			series[a] = append(series[a], plotter.XY{X: offset + s.T, Y: float64(s.Blocks[a])})
		}
	}
	for i, a := range appsOf(c.Samples) {
		l, err := plotter.NewLine(series[a])
		if err != nil {
			return err
		}
		l.LineStyle.Color = plotutil.Color(i)
		l.LineStyle.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(a, l)
	}
	p.Legend.Top = true
	p.BackgroundColor = color.White
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}
