package ga

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// grid is a space of n genes with values "0".."k-1".
func grid(n, k int) Space {
	s := make(Space, n)
	for i := range s {
		s[i].Name = fmt.Sprintf("g%d", i)
		for v := range k {
			s[i].Values = append(s[i].Values, strconv.Itoa(v))
		}
	}
	return s
}

// distance is a synthetic fitness with its single optimum (0) at target.
func distance(target Genome) Fitness {
	return func(g Genome) (float64, error) {
		var d float64
		for i := range g {
			x := float64(g[i] - target[i])
			d += x * x
		}
		return -d, nil
	}
}

func TestFindsKnownOptimumWithinSmallBudget(t *testing.T) {
	space := grid(6, 10) // a million genomes
	target := Genome{3, 7, 0, 9, 5, 2}
	for _, sel := range []string{"tournament", "roulette", "rank"} {
		t.Run(sel, func(t *testing.T) {
			res, err := Run(space, Options{Selection: sel, MaxSamples: 1, MaxEvals: 3000, Seed: 7}, distance(target))
			if err != nil {
				t.Fatal(err)
			}
			if res.Best.Fitness != 0 || !slices.Equal(res.Best.Genome, target) {
				t.Fatalf("best %v (fitness %v) after %d evals of a 10^6 space, want %v", res.Best.Genome, res.Best.Fitness, res.Evals, target)
			}
			if res.Evals > 3000 {
				t.Fatalf("%d evals, budget 3000", res.Evals)
			}
		})
	}
}

func TestMemoizedFitnessCalledOncePerGenome(t *testing.T) {
	calls := map[string]int{}
	fit := func(g Genome) (float64, error) {
		calls[g.Key()]++
		return float64(g[0] + g[1]), nil
	}
	res, err := Run(grid(2, 4), Options{Population: 10, Generations: 20, MaxSamples: 1}, fit)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range calls {
		if n != 1 {
			t.Errorf("genome %s measured %d times with MaxSamples 1", k, n)
		}
	}
	if res.Evals != len(calls) || len(calls) > 16 {
		t.Errorf("%d evals for %d distinct genomes of a 16-genome space", res.Evals, len(calls))
	}
}

func TestElitismNeverLosesTheBest(t *testing.T) {
	res, err := Run(grid(5, 8), Options{Population: 20, Generations: 30, Mutation: 0.9, MaxSamples: 1, Seed: 3}, distance(Genome{1, 2, 3, 4, 5}))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(res.History); i++ {
		if res.History[i].Best < res.History[i-1].Best {
			t.Fatalf("generation %d best %v < generation %d best %v: an elite was lost", i, res.History[i].Best, i-1, res.History[i-1].Best)
		}
	}
}

func TestElitesRemeasuredAndMedianUsed(t *testing.T) {
	// Genome {0} is truly best (10) but its first sample is a fluke low;
	// genome {1} is truly 5 with a lucky first sample of 100.
	n := map[int]int{}
	fit := func(g Genome) (float64, error) {
		n[g[0]]++
		switch {
		case g[0] == 1 && n[1] == 1:
			return 100, nil
		case g[0] == 1:
			return 5, nil
		case g[0] == 0 && n[0] == 1:
			return 1, nil
		case g[0] == 0:
			return 10, nil
		}
		return 0, nil
	}
	space := Space{{Name: "x", Values: []string{"a", "b", "c"}}}
	res, err := Run(space, Options{Population: 4, Generations: 10, Elites: 2, MaxSamples: 3, Initial: []Genome{{0}, {1}, {2}}}, fit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Best.Genome[0] != 0 || len(res.Best.Samples) != 3 || res.Best.Fitness != 10 {
		t.Fatalf("best %+v, want genome [0] with 3 samples and median 10 (the lucky sample of [1] must not win)", res.Best)
	}
}

func TestStopEndsRunWithBestSoFar(t *testing.T) {
	evals := 0
	stop := func() bool { return evals >= 15 }
	fit := func(g Genome) (float64, error) { evals++; return float64(g[0]), nil }
	res, err := Run(grid(3, 10), Options{Stop: stop}, fit)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Evals != 15 || len(res.Measured) == 0 {
		t.Fatalf("stopped=%v evals=%d measured=%d, want a stop after 15 evals with results", res.Stopped, res.Evals, len(res.Measured))
	}
}

func TestSinglePointCrossoverSwapsOneTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		a, b := Genome{0, 0, 0, 0, 0}, Genome{1, 1, 1, 1, 1}
		a, b = singlePoint(rng, a, b)
		cut := slices.Index(a, 1)
		if cut < 1 {
			t.Fatalf("child %v: the cut must leave at least one head gene", a)
		}
		for i := range a {
			want := 0
			if i >= cut {
				want = 1
			}
			if a[i] != want || b[i] != 1-want {
				t.Fatalf("children %v %v are not a single-point cross at %d", a, b, cut)
			}
		}
	}
}

func TestMutationRate(t *testing.T) {
	r := &run{space: grid(4, 1000), rng: rand.New(rand.NewPCG(1, 1))}
	r.opts.Mutation = 0
	if g := r.mutate(Genome{5, 5, 5, 5}); !slices.Equal(g, Genome{5, 5, 5, 5}) {
		t.Fatalf("mutation 0 changed the genome to %v", g)
	}
	r.opts.Mutation = 0.2
	changed := 0
	for range 1000 {
		g := r.mutate(Genome{5, 5, 5, 5})
		for _, v := range g {
			if v != 5 {
				changed++
			}
		}
	}
	// 4000 genes at 0.2 (a redraw lands on 5 again 1 time in 1000):
	// expect ~800, with a wide margin for the binomial spread.
	if changed < 650 || changed > 950 {
		t.Fatalf("%d of 4000 genes mutated at rate 0.2", changed)
	}
}

func TestTournamentPrefersFitter(t *testing.T) {
	r := &run{rng: rand.New(rand.NewPCG(1, 1))}
	r.opts.TournamentSize = 2
	fit := []float64{1, 2, 3, 4}
	count := make([]int, 4)
	for range 4000 {
		count[tournament(r, fit)]++
	}
	// P(pick i) = ((i+1)^2 - i^2)/16: 1/16, 3/16, 5/16, 7/16.
	if !(count[0] < count[1] && count[1] < count[2] && count[2] < count[3]) {
		t.Fatalf("tournament picks %v: not increasing with fitness", count)
	}
}

func TestBadOptions(t *testing.T) {
	fit := func(Genome) (float64, error) { return 0, nil }
	for _, o := range []Options{{Population: 1}, {Mutation: 1.5}, {Selection: "best"}, {CrossoverKind: "two"}, {Population: 4, Elites: 4}} {
		if _, err := Run(grid(2, 2), o, fit); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Run(Space{}, Options{}, fit); err == nil {
		t.Error("empty space accepted")
	}
	if _, err := Run(grid(2, 2), Options{Initial: []Genome{{0, 5}}}, fit); err == nil {
		t.Error("out-of-range initial genome accepted")
	}
}

// A genome measured once when the budget ran out does not win on that one
// sample over a genome re-measured up to MaxSamples; it still shows in the
// ranking.
func TestBestIsAmongTheMostMeasured(t *testing.T) {
	r := &run{opts: Options{MaxSamples: 3}, memo: map[string]*Scored{
		"0": {Genome: Genome{0}, Samples: []float64{100}, Fitness: 100},
		"1": {Genome: Genome{1}, Samples: []float64{90, 91, 89}, Fitness: 90},
		"2": {Genome: Genome{2}, Samples: []float64{95, 20}, Fitness: 57.5},
	}}
	res := r.finish()
	if !slices.Equal(res.Best.Genome, Genome{1}) {
		t.Fatalf("best %+v, want genome [1] (median of 3) over [0] (one sample of 100)", res.Best)
	}
	if !slices.Equal(res.Measured[0].Genome, Genome{0}) {
		t.Fatalf("ranking %+v: the once-measured genome should still rank first by its sample", res.Measured)
	}
	// Nothing re-measured at all (MaxSamples 1, or a budget spent in the
	// first generation): the highest median wins.
	r = &run{opts: Options{MaxSamples: 3}, memo: map[string]*Scored{
		"0": {Genome: Genome{0}, Samples: []float64{100}, Fitness: 100},
		"1": {Genome: Genome{1}, Samples: []float64{90}, Fitness: 90},
	}}
	if res := r.finish(); !slices.Equal(res.Best.Genome, Genome{0}) {
		t.Fatalf("best %+v, want [0]", res.Best)
	}
}
