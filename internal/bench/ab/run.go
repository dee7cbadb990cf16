package ab

import (
	"context"
	"fmt"
)

// Side names a configuration.
type Side int

const (
	SideA Side = iota
	SideB
)

func (s Side) String() string {
	if s == SideA {
		return "A"
	}
	return "B"
}

// Schedule is the order of 2·runs trials: A B B A A B B A ... Pairs
// alternate their order so that neither side always runs right after the
// other (a warm cache or a cooling CPU would favour it), and a slow drift
// of the machine over the run adds the same to both sides. Consecutive
// trials of the same side also halve the number of configuration switches.
func Schedule(runs int) []Side {
	out := make([]Side, 0, 2*runs)
	for i := range runs {
		for _, s := range RoundOrder(2, i) {
			out = append(out, Side(s))
		}
	}
	return out
}

// RoundOrder is the order in which round round runs n sides (0..n-1):
// forward in even rounds, backward in odd ones (A B C, C B A, A B C ...),
// Schedule's A B B A for more than two sides. Each side runs as often
// first as last, and a drift of the machine over two rounds hits every
// side alike; `bench workload` runs its policy combinations so.
func RoundOrder(n, round int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
		if round%2 == 1 {
			out[i] = n - 1 - i
		}
	}
	return out
}

// Measurement is one benchmark's figure from one trial.
type Measurement struct {
	Name  string
	Value float64
}

// Trial runs one trial of the benchmark set under a side, whose
// configuration is already in force, and returns a figure per benchmark.
type Trial func(ctx context.Context, side Side, trial int) ([]Measurement, error)

// Switch puts a side's configuration in force (e.g. starts or stops a
// service). It is called before the first trial and whenever the side
// changes, never between two trials of the same side.
type Switch func(ctx context.Context, side Side) error

// Runs holds each benchmark's measurements per side, in the order the
// benchmarks first reported.
type Runs struct {
	Names []string
	A, B  map[string][]float64
	// Order is the side of each trial run, for the record.
	Order []Side
}

// Run runs the schedule for runs trials a side. sw may be nil when the
// trial itself selects the configuration (two different commands). The
// first error stops the run; what was measured so far is returned with it.
func Run(ctx context.Context, runs int, sw Switch, trial Trial) (*Runs, error) {
	r := &Runs{A: map[string][]float64{}, B: map[string][]float64{}}
	current := Side(-1)
	for i, side := range Schedule(runs) {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if sw != nil && side != current {
			if err := sw(ctx, side); err != nil {
				return r, fmt.Errorf("switch to %s: %w", side, err)
			}
		}
		current = side
		ms, err := trial(ctx, side, i)
		if err != nil {
			return r, fmt.Errorf("trial %d (%s): %w", i+1, side, err)
		}
		r.Order = append(r.Order, side)
		for _, m := range ms {
			r.add(side, m)
		}
	}
	return r, nil
}

func (r *Runs) add(side Side, m Measurement) {
	if _, seen := r.A[m.Name]; !seen {
		if _, seen := r.B[m.Name]; !seen {
			r.Names = append(r.Names, m.Name)
		}
	}
	if side == SideA {
		r.A[m.Name] = append(r.A[m.Name], m.Value)
	} else {
		r.B[m.Name] = append(r.B[m.Name], m.Value)
	}
}

// Compare compares every benchmark, labelling the sides labelA and labelB.
func (r *Runs) Compare(labelA, labelB string, opts Options) ([]Comparison, error) {
	out := make([]Comparison, 0, len(r.Names))
	for _, name := range r.Names {
		c, err := Compare(name, Sample{labelA, r.A[name]}, Sample{labelB, r.B[name]}, opts)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CompareFuncs is the short form for one figure per trial: it measures a
// and b interleaved, runs times each, and compares them. Callers such as
// the network tuner use it to confirm a candidate against the default.
func CompareFuncs(ctx context.Context, name string, runs int, a, b func(context.Context) (float64, error), opts Options) (Comparison, error) {
	trial := func(ctx context.Context, side Side, _ int) ([]Measurement, error) {
		f := a
		if side == SideB {
			f = b
		}
		v, err := f(ctx)
		if err != nil {
			return nil, err
		}
		return []Measurement{{Name: name, Value: v}}, nil
	}
	r, err := Run(ctx, runs, nil, trial)
	if err != nil {
		return Comparison{}, err
	}
	return Compare(name, Sample{"A", r.A[name]}, Sample{"B", r.B[name]}, opts)
}
