package tunemeasure

import (
	"testing"

	"smarth/internal/bench/ab"
	"smarth/internal/tune"
	"smarth/internal/tune/ga"
)

func TestJudgeUsesABStatistics(t *testing.T) {
	a := []float64{100, 102, 98, 101, 99, 100}
	b := []float64{101, 99, 100, 102, 98, 100}
	if c, err := Judge("a", "b", a, b); err != nil || c.Verdict != ab.NoDiff || c.CILow > 1 || c.CIHigh < 1 {
		t.Fatalf("overlapping samples: %+v %v", c, err)
	}
	fast := []float64{120, 122, 118, 121, 119, 120}
	if c, err := Judge("a", "fast", a, fast); err != nil || c.Verdict != ab.Faster || c.CILow <= 1 {
		t.Fatalf("20%% faster samples: %+v %v", c, err)
	}
	if _, err := Judge("a", "b", a[:3], b[:3]); err == nil {
		t.Fatal("3 runs a side accepted: no p can reach 0.05")
	}
}

func TestNoopSpaceSetsNothing(t *testing.T) {
	sp, err := NewSpace("noop", tune.LocalHost())
	if err != nil {
		t.Fatal(err)
	}
	if p := ProfileOf(sp, ga.Genome{3, 2}); len(p.Settings) != 0 {
		t.Fatalf("noop genome set %v", p.Settings)
	}
	sock, err := NewSpace("socket", tune.LocalHost())
	if err != nil {
		t.Fatal(err)
	}
	if p := ProfileOf(sock, make(ga.Genome, len(sock))); p.Name != "default" || len(p.Settings) != 0 {
		t.Fatalf("zero genome is %v, want the default profile", p)
	}
	g := make(ga.Genome, len(sock))
	g[2] = 2
	if p := ProfileOf(sock, g); p.Settings["so_busy_poll"] != "50" || p.Validate(tune.LocalHost()) != nil {
		t.Fatalf("genome %v: %v", g, p)
	}
}
