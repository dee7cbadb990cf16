package ga

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Options are the GA parameters. Zero values take the paper's (seed 001,
// section 3) or the default named on the field.
type Options struct {
	Population  int     // individuals per generation; default 50
	Generations int     // default 100
	Mutation    float64 // probability that a gene of a child is redrawn; default 0.2
	Crossover   float64 // probability that two parents are crossed; default 0.9
	// CrossoverKind is "single" (single-point, the paper's) or "uniform".
	CrossoverKind string
	// Selection is "tournament" (the paper's), "roulette" or "rank".
	Selection      string
	TournamentSize int // default 2
	// Elites are copied unchanged into the next generation; default 2.
	// They are also the genomes measured again (see MaxSamples).
	Elites int
	// MaxSamples caps the measurements of one genome: elites are measured
	// again each generation until they have this many, and the fitness is
	// the median. Default 3; 1 turns re-measuring off.
	MaxSamples int
	// MaxEvals caps fitness calls (0 = no cap): a budget that needs no clock.
	MaxEvals int
	Seed     uint64 // random seed; 0 = 1
	// Stop, if set, is asked before every fitness call; true ends the run
	// with the best genome so far (the caller's time budget).
	Stop func() bool
	// Initial genomes put into the first generation (e.g. the default
	// settings and the baseline profile), the rest drawn at random.
	Initial []Genome
	// OnGeneration, if set, sees each generation's summary.
	OnGeneration func(GenStats)
}

func (o *Options) setDefaults() error {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Population, 50)
	def(&o.Generations, 100)
	def(&o.TournamentSize, 2)
	def(&o.Elites, 2)
	def(&o.MaxSamples, 3)
	if o.Mutation == 0 {
		o.Mutation = 0.2
	}
	if o.Crossover == 0 {
		o.Crossover = 0.9
	}
	if o.CrossoverKind == "" {
		o.CrossoverKind = "single"
	}
	if o.Selection == "" {
		o.Selection = "tournament"
	}
	switch {
	case o.Population < 2:
		return fmt.Errorf("ga: population %d, need at least 2", o.Population)
	case o.Generations < 1:
		return fmt.Errorf("ga: generations %d, need at least 1", o.Generations)
	case o.Mutation < 0 || o.Mutation > 1, o.Crossover < 0 || o.Crossover > 1:
		return fmt.Errorf("ga: mutation %v and crossover %v must be probabilities in [0, 1]", o.Mutation, o.Crossover)
	case o.Elites < 0 || o.Elites >= o.Population:
		return fmt.Errorf("ga: %d elites for a population of %d", o.Elites, o.Population)
	case o.TournamentSize < 1 || o.TournamentSize > o.Population:
		return fmt.Errorf("ga: tournament size %d for a population of %d", o.TournamentSize, o.Population)
	case o.MaxSamples < 1 || o.MaxEvals < 0:
		return fmt.Errorf("ga: max samples %d, max evals %d", o.MaxSamples, o.MaxEvals)
	}
	if _, ok := selections()[o.Selection]; !ok {
		return fmt.Errorf("ga: unknown selection %q (known: tournament, roulette, rank)", o.Selection)
	}
	if _, ok := crossovers()[o.CrossoverKind]; !ok {
		return fmt.Errorf("ga: unknown crossover %q (known: single, uniform)", o.CrossoverKind)
	}
	return nil
}

// Fitness measures a genome once; higher is better. An error ends the run.
type Fitness func(Genome) (float64, error)

// GenStats summarizes one generation.
type GenStats struct {
	Generation int
	Best       float64 // fitness (median of samples) of the best individual
	Mean       float64
	BestGenome Genome
	Evals      int // fitness calls so far
}

// Scored is a measured genome with all its samples.
type Scored struct {
	Genome  Genome
	Fitness float64 // median of Samples
	Samples []float64
}

// Result is the outcome of Run.
type Result struct {
	Best        Scored
	Generations int // generations completed
	Evals       int // fitness calls made
	Stopped     bool
	History     []GenStats
	Measured    []Scored // every genome measured, best first
}

// errStop ends a run early (budget spent); Run reports it as
// Result.Stopped, not as an error.
var errStop = errors.New("ga: stopped")

// Run searches space for the genome of highest fitness.
func Run(space Space, opts Options, fit Fitness) (Result, error) {
	if err := space.Validate(); err != nil {
		return Result{}, err
	}
	if err := opts.setDefaults(); err != nil {
		return Result{}, err
	}
	for _, g := range opts.Initial {
		if err := checkGenome(space, g); err != nil {
			return Result{}, err
		}
	}
	seed := opts.Seed
	if seed == 0 {
		seed = 1
	}
	r := &run{space: space, opts: opts, fit: fit, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), memo: map[string]*Scored{}}
	return r.loop()
}

func checkGenome(space Space, g Genome) error {
	if len(g) != len(space) {
		return fmt.Errorf("ga: genome of %d genes for a space of %d", len(g), len(space))
	}
	for i, v := range g {
		if v < 0 || v >= len(space[i].Values) {
			return fmt.Errorf("ga: gene %s index %d out of range", space[i].Name, v)
		}
	}
	return nil
}

// run is the state of one search.
type run struct {
	space Space
	opts  Options
	fit   Fitness
	rng   *rand.Rand
	memo  map[string]*Scored // genome key -> its samples
	evals int
	res   Result
}

func (r *run) loop() (Result, error) {
	pop := r.initial()
	for gen := 0; gen < r.opts.Generations; gen++ {
		err := r.score(pop)
		if err == nil {
			err = r.remeasureElites(pop)
		}
		if errors.Is(err, errStop) {
			r.res.Stopped = true
			break
		}
		if err != nil {
			return r.finish(), err
		}
		r.record(gen, pop)
		r.res.Generations = gen + 1
		if gen+1 < r.opts.Generations {
			pop = r.next(pop)
		}
	}
	return r.finish(), nil
}

// initial is the first generation: the given genomes, then random ones.
func (r *run) initial() []Genome {
	pop := make([]Genome, 0, r.opts.Population)
	for _, g := range r.opts.Initial {
		if len(pop) < r.opts.Population {
			pop = append(pop, g.clone())
		}
	}
	for len(pop) < r.opts.Population {
		pop = append(pop, r.random())
	}
	return pop
}

func (r *run) random() Genome {
	g := make(Genome, len(r.space))
	for i, gene := range r.space {
		g[i] = r.rng.IntN(len(gene.Values))
	}
	return g
}

// score measures every genome of pop not yet memoized.
func (r *run) score(pop []Genome) error {
	for _, g := range pop {
		if _, err := r.measured(g); err != nil {
			return err
		}
	}
	return nil
}

// measured returns g's memoized score, measuring it first if new.
func (r *run) measured(g Genome) (*Scored, error) {
	if s, ok := r.memo[g.Key()]; ok {
		return s, nil
	}
	s := &Scored{Genome: g.clone()}
	if err := r.sample(s); err != nil {
		return nil, err
	}
	r.memo[g.Key()] = s
	return s, nil
}

// sample adds one measurement to s.
func (r *run) sample(s *Scored) error {
	if r.opts.MaxEvals > 0 && r.evals >= r.opts.MaxEvals {
		return errStop
	}
	if r.opts.Stop != nil && r.opts.Stop() {
		return errStop
	}
	v, err := r.fit(s.Genome.clone())
	r.evals++
	if err != nil {
		return fmt.Errorf("ga: measuring %s: %w", r.space.Describe(s.Genome), err)
	}
	s.Samples = append(s.Samples, v)
	s.Fitness = Median(s.Samples)
	return nil
}

// remeasureElites measures the current top genomes again, so that one
// lucky sample cannot carry a genome through the whole search.
func (r *run) remeasureElites(pop []Genome) error {
	for _, s := range r.top(pop, max(r.opts.Elites, 1)) {
		if len(s.Samples) < r.opts.MaxSamples {
			if err := r.sample(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// top returns the n best distinct genomes of pop by memoized fitness.
func (r *run) top(pop []Genome, n int) []*Scored {
	seen := map[string]bool{}
	var all []*Scored
	for _, g := range pop {
		if s, ok := r.memo[g.Key()]; ok && !seen[g.Key()] {
			seen[g.Key()] = true
			all = append(all, s)
		}
	}
	slices.SortStableFunc(all, func(a, b *Scored) int { return cmpDesc(a.Fitness, b.Fitness) })
	return all[:min(n, len(all))]
}

// next breeds the following generation: elites unchanged, the rest by
// selection, crossover and mutation.
func (r *run) next(pop []Genome) []Genome {
	fit := make([]float64, len(pop))
	for i, g := range pop {
		fit[i] = r.memo[g.Key()].Fitness
	}
	out := make([]Genome, 0, len(pop))
	for _, s := range r.top(pop, r.opts.Elites) {
		out = append(out, s.Genome.clone())
	}
	sel := selections()[r.opts.Selection]
	cross := crossovers()[r.opts.CrossoverKind]
	for len(out) < len(pop) {
		a, b := pop[sel(r, fit)].clone(), pop[sel(r, fit)].clone()
		if r.rng.Float64() < r.opts.Crossover {
			a, b = cross(r.rng, a, b)
		}
		out = append(out, r.mutate(a))
		if len(out) < len(pop) {
			out = append(out, r.mutate(b))
		}
	}
	return out
}

// mutate redraws each gene with probability Mutation.
func (r *run) mutate(g Genome) Genome {
	for i, gene := range r.space {
		if r.rng.Float64() < r.opts.Mutation {
			g[i] = r.rng.IntN(len(gene.Values))
		}
	}
	return g
}

func (r *run) record(gen int, pop []Genome) {
	best := r.top(pop, 1)[0]
	var sum float64
	for _, g := range pop {
		sum += r.memo[g.Key()].Fitness
	}
	st := GenStats{Generation: gen, Best: best.Fitness, Mean: sum / float64(len(pop)), BestGenome: best.Genome.clone(), Evals: r.evals}
	r.res.History = append(r.res.History, st)
	if r.opts.OnGeneration != nil {
		r.opts.OnGeneration(st)
	}
}

// finish ranks every measured genome by median, preferring more samples
// on ties. The best is the first of those measured the most (up to
// MaxSamples): a genome measured once, late in the search (a budget
// that ran out before it could be re-measured), would otherwise win on
// one lucky sample against elites whose medians are of several.
func (r *run) finish() Result {
	r.res.Evals = r.evals
	r.res.Measured = r.res.Measured[:0]
	for _, s := range r.memo {
		r.res.Measured = append(r.res.Measured, Scored{Genome: s.Genome.clone(), Fitness: s.Fitness, Samples: slices.Clone(s.Samples)})
	}
	slices.SortFunc(r.res.Measured, func(a, b Scored) int {
		if c := cmpDesc(a.Fitness, b.Fitness); c != 0 {
			return c
		}
		if c := len(b.Samples) - len(a.Samples); c != 0 {
			return c
		}
		return slices.Compare(a.Genome, b.Genome)
	})
	most := 0
	for _, s := range r.res.Measured {
		most = max(most, min(len(s.Samples), r.opts.MaxSamples))
	}
	for _, s := range r.res.Measured {
		if len(s.Samples) >= most {
			r.res.Best = s
			break
		}
	}
	return r.res
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// Median of xs (xs is not modified); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
