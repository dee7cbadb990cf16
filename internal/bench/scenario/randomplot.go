package scenario

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"smarth/internal/bench/plotkit"
)

// Plot draws the random-topology run to path (.svg or .png): per topology,
// the ideal (min-cut) and schedule speedups over HDFS beside the measured speedups of rackaware
// multi-pipeline and of SMARTH, with 1x (no gain) as a dashed line.
func (r *RandomReport) Plot(path string) error {
	p, err := plotkit.New(path, len(r.Results), "topologies",
		fmt.Sprintf("random topologies (seed %d): speedup over HDFS, put of %s", r.Spec.Seed, sizeText(r.Size)),
		"speedup over HDFS (classic, rackaware)")
	if err != nil {
		return err
	}
	series := []struct {
		name  string
		value func(RandomResult) float64
		color color.Color
	}{
		{"ideal (min-cut)", func(x RandomResult) float64 { return x.Topology.Ideal.Speedup }, color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}},
		{"schedule bound", func(x RandomResult) float64 { return x.Topology.Ideal.ScheduleSpeedup }, color.RGBA{R: 0xa0, G: 0xa0, B: 0xa0, A: 0xff}},
		{"multipipeline, rackaware", func(x RandomResult) float64 { return x.RackSpeedup }, color.RGBA{R: 0x8c, G: 0xa5, B: 0xd0, A: 0xff}},
		{"SMARTH (multipipeline, speedaware)", func(x RandomResult) float64 { return x.Speedup }, color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}},
	}
	w := vg.Points(8)
	top := 1.0
	names := make([]string, len(r.Results))
	for i, res := range r.Results {
		names[i] = fmt.Sprintf("%d\nk=%d P=%d", res.Topology.Index, res.Topology.Ideal.Local, res.Topology.Ideal.Pipelines)
		top = max(top, res.Topology.Ideal.Speedup, res.Speedup, res.RackSpeedup)
	}
	for j, s := range series {
		vals := make(plotter.Values, len(r.Results))
		for i, res := range r.Results {
			vals[i] = s.value(res)
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Color, bars.LineStyle.Width = s.color, 0
		bars.Offset = (vg.Length(j) - 1.5) * w
		p.Add(bars)
		p.Legend.Add(s.name, bars)
	}
	if err := plotkit.AddReference(p, 1, len(r.Results), []vg.Length{vg.Points(5), vg.Points(3)}, "no gain (1x)"); err != nil {
		return err
	}
	p.NominalX(names...)
	p.Y.Max = top * 1.6
	p.Legend.Top = true
	width := vg.Points(float64(160 + 40*len(r.Results)))
	return p.Save(max(width, 6*vg.Inch), 3.8*vg.Inch, path)
}
