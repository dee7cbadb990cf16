package apps

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// lloyd is the direct computation: the same start (first k points) and the
// same rule for empty clusters.
func lloyd(points [][]float64, k, iters int, delta float64) [][]float64 {
	cents := make([][]float64, k)
	for c := range cents {
		cents[c] = append([]float64(nil), points[c]...)
	}
	for it := 0; it < iters; it++ {
		sums := make([][]float64, k)
		counts := make([]int, k)
		for c := range sums {
			sums[c] = make([]float64, len(points[0]))
		}
		for _, p := range points {
			best, bestD := 0, math.Inf(1)
			for c, x := range cents {
				var d float64
				for j := range x {
					d += (x[j] - p[j]) * (x[j] - p[j])
				}
				if d < bestD {
					best, bestD = c, d
				}
			}
			for j := range p {
				sums[best][j] += p[j]
			}
			counts[best]++
		}
		move := 0.0
		for c := range cents {
			if counts[c] == 0 {
				continue
			}
			for j := range sums[c] {
				sums[c][j] /= float64(counts[c])
			}
			move = max(move, dist(cents[c], sums[c]))
			cents[c] = sums[c]
		}
		if move <= delta {
			break
		}
	}
	return cents
}

func TestKMeansMatchesLloyd(t *testing.T) {
	e := newEnv(t)
	e.run("kmeansgen", "output", "/pts", "points", "4000", "k", "4", "dims", "3", "maps", "3", "spread", "30")
	var points [][]float64
	for _, l := range lines(e.output("/pts")) {
		p, ok := parsePoint(nil, []byte(l))
		if !ok || len(p) != 3 {
			t.Fatalf("bad point line %q", l)
		}
		points = append(points, p)
	}
	if len(points) != 4000 {
		t.Fatalf("%d points", len(points))
	}
	for _, iters := range []int{1, 4} {
		out := "/km" + strconv.Itoa(iters)
		e.run("kmeans", "input", "/pts", "output", out, "k", "5", "iterations", strconv.Itoa(iters), "delta", "0", "reduces", "2")
		want := lloyd(points, 5, iters, 0)
		got, err := readCentroids(t.Context(), e.fs, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("%d iterations: %d centroids", iters, len(got))
		}
		for c := range want {
			if got[c] == nil || dist(got[c], want[c]) > 1e-9*(1+math.Abs(want[c][0])) {
				t.Fatalf("%d iterations: centroid %d = %v, want %v", iters, c, got[c], want[c])
			}
		}
	}
	if !strings.Contains(e.out.String(), "KMeans: 4 iterations") {
		t.Fatalf("driver printed %q", e.out.String())
	}
	// Convergence stops early and the scratch directory is removed.
	e.run("kmeans", "input", "/pts", "output", "/kmc", "k", "4", "iterations", "50", "delta", "1e-9")
	if strings.Contains(e.out.String(), "KMeans: 50 iterations") {
		t.Fatalf("did not converge before 50 iterations: %q", e.out.String())
	}
	if ents, _ := e.fs.List(t.Context(), "/"); len(ents) != 4 {
		t.Fatalf("root holds %v", ents)
	}
}

func TestKMeansTooFewPoints(t *testing.T) {
	e := newEnv(t)
	e.write("/p.txt", []byte("1 2\n3 4\n"))
	_, err := e.r.Run(t.Context(), "kmeans", map[string]string{"input": "/p.txt", "output": "/o", "k": "3"})
	if err == nil || !strings.Contains(err.Error(), "fewer than --k=3") {
		t.Fatalf("err = %v", err)
	}
}
