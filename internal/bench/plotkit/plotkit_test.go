package plotkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// TestNewRefusesBeforeDrawing: a file name Save would write in another
// format, or nothing to draw, is an error naming the path and writes no file.
func TestNewRefusesBeforeDrawing(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		n    int
		want string
	}{
		{"r.pdf", 3, "want a .svg or .png file name"},
		{"r", 3, "want a .svg or .png file name"},
		{"r.svg", 0, "no topologies to plot"},
	} {
		path := filepath.Join(dir, c.name)
		_, err := New(path, c.n, "topologies", "t", "y")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("New(%s, %d): %v; want an error naming the path and %q", c.name, c.n, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused plots left files: %v", ents)
	}
}

// TestFrame: the frame's parts land on the plot (y from 0, a dot per run,
// the reference line across every bar) and it saves in both formats.
func TestFrame(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"p.svg", "P.PNG"} {
		path := filepath.Join(dir, name)
		p, err := New(path, 2, "runs", "title", "MiB/s")
		if err != nil {
			t.Fatal(err)
		}
		if err := AddRuns(p, plotter.XYs{{X: 0, Y: 3}, {X: 1, Y: 5}}, vg.Points(2)); err != nil {
			t.Fatal(err)
		}
		if err := AddReference(p, 4, 2, []vg.Length{vg.Points(4), vg.Points(3)}, "bound"); err != nil {
			t.Fatal(err)
		}
		if p.Y.Min != 0 || p.Y.Label.Text != "MiB/s" || p.Title.Text != "title" {
			t.Errorf("frame: y from %v labelled %q, title %q", p.Y.Min, p.Y.Label.Text, p.Title.Text)
		}
		if xmin, xmax := p.X.Min, p.X.Max; xmin != -0.5 || xmax != 1.5 {
			t.Errorf("x range %v..%v; want the reference line from -0.5 to 1.5 (edges of two bars)", xmin, xmax)
		}
		if err := p.Save(4*vg.Inch, 3*vg.Inch, path); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
