package ga

import (
	"math/rand/v2"
	"slices"
)

// selector picks the index of a parent given the population's fitness.
type selector func(r *run, fit []float64) int

// selections maps a --selection name to its operator.
func selections() map[string]selector {
	return map[string]selector{
		"tournament": tournament,
		"roulette":   roulette,
		"rank":       rank,
	}
}

// tournament draws TournamentSize individuals and keeps the fittest: the
// paper's method, and insensitive to the scale of the fitness values.
func tournament(r *run, fit []float64) int {
	best := r.rng.IntN(len(fit))
	for range r.opts.TournamentSize - 1 {
		if c := r.rng.IntN(len(fit)); fit[c] > fit[best] {
			best = c
		}
	}
	return best
}

// roulette picks with probability proportional to fitness above the
// generation's minimum (throughputs are all positive, and differences
// are what matter).
func roulette(r *run, fit []float64) int {
	lo := slices.Min(fit)
	var total float64
	for _, f := range fit {
		total += f - lo
	}
	if total <= 0 {
		return r.rng.IntN(len(fit))
	}
	x := r.rng.Float64() * total
	for i, f := range fit {
		x -= f - lo
		if x < 0 {
			return i
		}
	}
	return len(fit) - 1
}

// rank picks with probability proportional to rank (worst 1, best N).
func rank(r *run, fit []float64) int {
	idx := make([]int, len(fit))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return -cmpDesc(fit[a], fit[b]) })
	n := len(fit)
	x := r.rng.IntN(n * (n + 1) / 2)
	for pos, i := range idx {
		x -= pos + 1
		if x < 0 {
			return i
		}
	}
	return idx[n-1]
}

// crosser combines two parents (which it may modify) into two children.
type crosser func(rng *rand.Rand, a, b Genome) (Genome, Genome)

func crossovers() map[string]crosser {
	return map[string]crosser{"single": singlePoint, "uniform": uniform}
}

// singlePoint swaps the tails after a random cut in 1..len-1 (the paper's
// operator). A one-gene genome has no cut and is returned unchanged.
func singlePoint(rng *rand.Rand, a, b Genome) (Genome, Genome) {
	if len(a) < 2 {
		return a, b
	}
	cut := 1 + rng.IntN(len(a)-1)
	for i := cut; i < len(a); i++ {
		a[i], b[i] = b[i], a[i]
	}
	return a, b
}

// uniform swaps each gene with probability 1/2.
func uniform(rng *rand.Rand, a, b Genome) (Genome, Genome) {
	for i := range a {
		if rng.IntN(2) == 0 {
			a[i], b[i] = b[i], a[i]
		}
	}
	return a, b
}
