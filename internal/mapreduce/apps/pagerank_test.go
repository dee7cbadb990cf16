package apps

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// powerMethod is the direct computation of the documented formula.
func powerMethod(edges [][2]string, iters int, d float64) map[string]float64 {
	links := map[string][]string{}
	for _, e := range edges {
		links[e[0]] = append(links[e[0]], e[1])
		if _, ok := links[e[1]]; !ok {
			links[e[1]] = nil
		}
	}
	n := float64(len(links))
	rank := map[string]float64{}
	for p := range links {
		rank[p] = 1 / n
	}
	for range iters {
		dangling := 0.0
		in := map[string]float64{}
		for p, ls := range links {
			if len(ls) == 0 {
				dangling += rank[p]
			}
			for _, l := range ls {
				in[l] += rank[p] / float64(len(ls))
			}
		}
		next := map[string]float64{}
		for p := range links {
			next[p] = (1-d)/n + d*(in[p]+dangling/n)
		}
		rank = next
	}
	return rank
}

func TestPageRankMatchesPowerMethod(t *testing.T) {
	e := newEnv(t)
	e.run("pagerankgen", "output", "/g", "pages", "400", "links", "3", "maps", "3")
	var edges [][2]string
	for _, l := range lines(e.output("/g")) {
		s, d, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("bad edge %q", l)
		}
		edges = append(edges, [2]string{s, d})
	}
	want := powerMethod(edges, 6, 0.85)
	dangling := 0
	for p := range want {
		has := false
		for _, e := range edges {
			if e[0] == p {
				has = true
				break
			}
		}
		if !has {
			dangling++
		}
	}
	if dangling == 0 || len(want) < 300 {
		t.Fatalf("test too weak: %d pages, %d dangling", len(want), dangling)
	}
	// A comment line and blank lines are skipped.
	e.write("/g/extra.txt", []byte("# comment\n\n"))

	e.run("pagerank", "input", "/g", "output", "/pr", "iterations", "6", "reduces", "2")
	got := kvLines(t, e.output("/pr"))
	if len(got) != len(want) {
		t.Fatalf("%d ranks, want %d", len(got), len(want))
	}
	sum := 0.0
	for p, w := range want {
		g, err := strconv.ParseFloat(got[p], 64)
		if err != nil || math.Abs(g-w) > 1e-12 {
			t.Fatalf("rank of %s = %q, want %v", p, got[p], w)
		}
		sum += g
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("ranks sum to %v", sum)
	}
	if !strings.Contains(e.out.String(), "PageRank: ") {
		t.Fatalf("driver printed %q", e.out.String())
	}
}
