package tunemeasure

import (
	"context"
	"io"
	"math/rand/v2"
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

// The confirmation counts one value per side per round (the median of the
// round's transfers), never each transfer: with 6 rounds of 3 transfers,
// n is 6 a side, not 18. A round effect shared by both sides must not
// turn into a verdict; fewer than 6 rounds are refused.
func TestConfirmCountsRoundsNotTransfers(t *testing.T) {
	a, b := tune.Profile{Name: "a"}, tune.Profile{Name: "b"}
	round := 0
	// b is 1% faster than a within each round, and rounds differ by 10%:
	// no real difference can be claimed from 6 rounds, but pooling the
	// three near-identical transfers of each round as samples would.
	measure := func(_ context.Context, p tune.Profile) (Sample, error) {
		base := 100 * (1 + 0.1*float64(round/2%3))
		if p.Name == "b" {
			base *= 1.01
		}
		round++
		all := []float64{base - 0.1, base, base + 0.1}
		return Sample{All: all, Mbps: base}, nil
	}
	c, err := confirm(context.Background(), measure, a, b, 6, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.A.Values) != 6 || len(c.B.Values) != 6 {
		t.Errorf("n = %d+%d, want one value per round (6+6)", len(c.A.Values), len(c.B.Values))
	}
	if c.Verdict != ab.NoDiff {
		t.Errorf("a 1%% difference under a 10%% round effect judged %v from 6 rounds, want no difference", c.Verdict)
	}
	if _, err := confirm(context.Background(), measure, a, b, 5, io.Discard); err == nil {
		t.Error("5 rounds accepted")
	}
}

// An A/B of two identical profiles must find a difference about as often
// as its significance level says (5%), also when rounds differ: each
// side's round runs under its own state of the machine (±5-10% here,
// what this loaded machine shows), and its 3 transfers share it (each
// with ±3% of its own). Counted one value per round, the confirmation's
// false-positive rate over 600 seeded trials stays near 5%; the old pooled count of every transfer
// (the control, n = 18 a side) is the 15-24% the issue measured, and
// fails the same check.
func TestConfirmFalsePositiveRate(t *testing.T) {
	if testing.Short() {
		t.Skip("600 simulated A/B confirmations a setting; skipped under -short")
	}
	const trials = 600
	for _, roundSD := range []float64{0.05, 0.10} {
		rng := rand.New(rand.NewPCG(27, uint64(roundSD*100)))
		var perRound, pooled int
		for range trials {
			var allA, allB []float64
			measure := func(_ context.Context, p tune.Profile) (Sample, error) {
				state := 1 + roundSD*rng.NormFloat64() // this side's round
				s := Sample{}
				for range 3 {
					s.All = append(s.All, 1000*state*(1+0.03*rng.NormFloat64()))
				}
				s.Mbps = tune.Quantile(s.All, 0.5)
				if p.Name == "a" {
					allA = append(allA, s.All...)
				} else {
					allB = append(allB, s.All...)
				}
				return s, nil
			}
			c, err := confirm(context.Background(), measure, tune.Profile{Name: "a"}, tune.Profile{Name: "b"}, MinRounds, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict != ab.NoDiff {
				perRound++
			}
			if c, err := Judge("a", "b", allA, allB); err != nil {
				t.Fatal(err)
			} else if c.Verdict != ab.NoDiff {
				pooled++
			}
		}
		fpr := func(n int) float64 { return float64(n) / trials }
		t.Logf("rounds differ by %.0f%%: false positives per round %.1f%%, pooled transfers %.1f%% (%d trials of %d rounds x 3 transfers)",
			100*roundSD, 100*fpr(perRound), 100*fpr(pooled), trials, MinRounds)
		if !nearAlpha(fpr(perRound)) {
			t.Errorf("rounds differ by %.0f%%: one value per round gives %.1f%% false positives, want near 5%%", 100*roundSD, 100*fpr(perRound))
		}
		if nearAlpha(fpr(pooled)) {
			t.Errorf("rounds differ by %.0f%%: the pooled control gives %.1f%% false positives, near 5%%: the simulation cannot tell them apart", 100*roundSD, 100*fpr(pooled))
		}
	}
}

// nearAlpha: within what 600 trials allow around 5% (±3 standard errors
// of 0.9%), taking the exact test's discreteness (size 4.1% at 6+6).
func nearAlpha(rate float64) bool { return rate >= 0.02 && rate <= 0.08 }
