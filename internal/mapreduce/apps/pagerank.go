package apps

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"

	"smarth/internal/mapreduce"
)

// PageRank ranks the pages of a graph given as an edge list ("src dst"
// lines, separated by a tab or spaces; '#' starts a comment line) with the
// power method, one job per iteration:
//
//	PR(p) = (1-d)/N + d × ( Σ_{q→p} PR(q)/out(q)  +  D/N )
//
// where N is the number of pages, d the damping factor (0.85) and D the
// rank held by pages without out-links, spread evenly so the ranks keep
// summing to 1. pagerank.init groups the edges into adjacency lines and
// counts N; each pagerank.iter sends every page's rank along its links and
// sums what arrives, and reports the new dangling rank through a counter
// for the next iteration. The output has "page\trank" lines.
type PageRank struct{ out io.Writer }

var (
	_ mapreduce.App    = PageRank{}
	_ mapreduce.Driver = PageRank{}
)

// Counters of PageRank.
const (
	GroupPageRank   = "PageRank"
	CounterPages    = "PAGES"
	CounterDangling = "DANGLING_PAGES"
	// Rank of dangling pages after an iteration, in units of 1e-15.
	CounterDanglingMass = "DANGLING_RANK_E15"
)

func (PageRank) Name() string { return "pagerank" }
func (PageRank) Description() string {
	return "PageRank of an edge list by the power method, one job per iteration (--iterations --damping)"
}

func (PageRank) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1),
		{Name: "iterations", Default: "10", Help: "number of iterations"},
		{Name: "damping", Default: "0.85", Help: "damping factor"},
	}
}

// Build returns the first job, so the parameters are checked.
func (pr PageRank) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(pr.Params(), given)
	if _, err := p.int("iterations", 1, 100000); err != nil {
		return nil, err
	}
	if _, err := p.float("damping", 0, 1); err != nil {
		return nil, err
	}
	return PageRankInit{}.Build(p)
}

// Drive runs the init job and the iterations.
func (pr PageRank) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	if _, err := pr.Build(given); err != nil {
		return err
	}
	p := withDefaults(pr.Params(), given)
	iters, _ := p.int("iterations", 1, 100000)
	fs, out := r.FS(), p[ParamOutput]
	if err := outputFree(ctx, fs, out); err != nil {
		return err
	}
	work := scratchDir(out, "pagerank")
	defer fs.Delete(context.WithoutCancel(ctx), work, true)

	prev := path.Join(work, "graph")
	res, err := runStage(ctx, r, PageRankInit{}.Name(), copyParams(p, ParamOutput, prev))
	if err != nil {
		return err
	}
	pages := res.Counters[GroupPageRank][CounterPages]
	if pages == 0 {
		return fmt.Errorf("pagerank: the input has no edges")
	}
	dangling := float64(res.Counters[GroupPageRank][CounterDangling]) / float64(pages)
	for it := int64(1); it <= iters; it++ {
		next := path.Join(work, "iter-"+strconv.FormatInt(it, 10))
		final := "0"
		if it == iters {
			next, final = out, "1"
		}
		res, err = runStage(ctx, r, PageRankIter{}.Name(), copyParams(p, ParamInput, prev, ParamOutput, next,
			"pages", strconv.FormatInt(pages, 10), "dangling", strconv.FormatFloat(dangling, 'g', -1, 64), "final", final))
		if err != nil {
			return err
		}
		dangling = float64(res.Counters[GroupPageRank][CounterDanglingMass]) / 1e15
		prev = next
	}
	fmt.Fprintf(writerOr(pr.out), "PageRank: %d pages, %d iterations; ranks in %s\n", pages, iters, out)
	return nil
}

// PageRankInit turns an edge list into adjacency lines "page\t\tl1,l2,..."
// (the empty column is the rank, 1/N until the first iteration); every
// page that appears, as source or target, gets a line.
type PageRankInit struct{}

var _ mapreduce.App = PageRankInit{}

func (PageRankInit) Name() string { return "pagerank.init" }
func (PageRankInit) Description() string {
	return "group an edge list into adjacency lines (first job of pagerank)"
}
func (PageRankInit) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1)}
}

func (pi PageRankInit) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(pi.Params(), given)
	job, err := newJob(pi.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	job.NewMapper = func() mapreduce.Mapper { return edgeMapper{} }
	job.NewReducer = func() mapreduce.Reducer { return &adjacencyReducer{} }
	return job, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// edgeMapper emits (src, dst) and (dst, "") so pages without out-links
// exist too.
type edgeMapper struct{}

func (edgeMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '#' {
		return nil
	}
	i := 0
	for i < len(line) && !isBlank(line[i]) {
		i++
	}
	src, rest := line[:i], line[i:]
	for len(rest) > 0 && isBlank(rest[0]) {
		rest = rest[1:]
	}
	j := 0
	for j < len(rest) && !isBlank(rest[j]) {
		j++
	}
	dst := rest[:j]
	if len(dst) == 0 || bytes.IndexByte(line, ',') >= 0 {
		ctx.Count(GroupPageRank, "BAD_EDGES", 1)
		return nil
	}
	if err := out.Emit(src, dst); err != nil {
		return err
	}
	return out.Emit(dst, nil)
}

type adjacencyReducer struct{ val []byte }

func (r *adjacencyReducer) Reduce(ctx mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	r.val = append(r.val[:0], '\t')
	links := 0
	for values.Next() {
		if v := values.Value(); len(v) > 0 {
			if links > 0 {
				r.val = append(r.val, ',')
			}
			r.val = append(r.val, v...)
			links++
		}
	}
	ctx.Count(GroupPageRank, CounterPages, 1)
	if links == 0 {
		ctx.Count(GroupPageRank, CounterDangling, 1)
	}
	return out.Emit(key, r.val)
}

// PageRankIter is one iteration over "page\trank\tlinks" lines.
type PageRankIter struct{}

var _ mapreduce.App = PageRankIter{}

func (PageRankIter) Name() string        { return "pagerank.iter" }
func (PageRankIter) Description() string { return "one PageRank iteration (a job of pagerank)" }
func (PageRankIter) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1),
		{Name: "pages", Help: "number of pages N"},
		{Name: "damping", Default: "0.85", Help: "damping factor"},
		{Name: "dangling", Default: "0", Help: "rank held by pages without links"},
		{Name: "final", Default: "0", Help: "1: write \"page\\trank\" only"},
	}
}

func (pi PageRankIter) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(pi.Params(), given)
	job, err := newJob(pi.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	n, err := p.int("pages", 1, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	d, err := p.float("damping", 0, 1)
	if err != nil {
		return nil, err
	}
	dangling, err := p.float("dangling", 0, 1.000001)
	if err != nil {
		return nil, err
	}
	final := p.str("final") == "1"
	job.NewMapper = func() mapreduce.Mapper { return &rankMapper{initial: 1 / float64(n)} }
	job.NewReducer = func() mapreduce.Reducer {
		return &rankReducer{base: (1-d)/float64(n) + d*dangling/float64(n), d: d, final: final}
	}
	return job, nil
}

// rankMapper sends the page's structure to itself ('L' links) and a share
// of its rank to every link ('R' + float64 bits).
type rankMapper struct {
	initial float64
	val     []byte
	share   [9]byte
}

func (m *rankMapper) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	page, rest, ok1 := cutByte(line, '\t')
	rankText, links, ok2 := cutByte(rest, '\t')
	if !ok1 || !ok2 {
		return fmt.Errorf("pagerank: bad line %q (want page\\trank\\tlinks)", line)
	}
	rank := m.initial
	if len(rankText) > 0 {
		var ok bool
		if rank, ok = parseFloat(rankText); !ok {
			return fmt.Errorf("pagerank: bad rank in %q", line)
		}
	}
	m.val = append(append(m.val[:0], 'L'), links...)
	if err := out.Emit(page, m.val); err != nil {
		return err
	}
	if len(links) == 0 {
		return nil
	}
	m.share[0] = 'R'
	binary.BigEndian.PutUint64(m.share[1:], math.Float64bits(rank/float64(bytes.Count(links, []byte{','})+1)))
	for len(links) > 0 {
		var l []byte
		l, links, _ = cutByte(links, ',')
		if err := out.Emit(l, m.share[:]); err != nil {
			return err
		}
	}
	return nil
}

type rankReducer struct {
	base, d float64
	final   bool
	links   []byte
	val     []byte
}

func (r *rankReducer) Reduce(ctx mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var sum float64
	seen := false
	r.links = r.links[:0]
	for values.Next() {
		v := values.Value()
		switch {
		case len(v) == 9 && v[0] == 'R':
			sum += math.Float64frombits(binary.BigEndian.Uint64(v[1:]))
		case len(v) > 0 && v[0] == 'L':
			r.links = append(r.links, v[1:]...)
			seen = true
		default:
			return fmt.Errorf("pagerank: page %q: malformed value", key)
		}
	}
	if !seen {
		return fmt.Errorf("pagerank: link to %q, which has no line of its own", key)
	}
	rank := r.base + r.d*sum
	if len(r.links) == 0 {
		ctx.Count(GroupPageRank, CounterDanglingMass, int64(math.Round(rank*1e15)))
	}
	r.val = strconv.AppendFloat(r.val[:0], rank, 'g', -1, 64)
	if !r.final {
		r.val = append(append(r.val, '\t'), r.links...)
	}
	return out.Emit(key, r.val)
}

// PageRankGen writes a random graph as an edge list (map-only): --pages
// pages numbered from 0, each with 0 to 2×--links out-links to uniformly
// chosen pages (so some pages have none).
type PageRankGen struct{}

var _ mapreduce.App = PageRankGen{}

func (PageRankGen) Name() string        { return "pagerankgen" }
func (PageRankGen) Description() string { return "generate a random graph for pagerank (map-only)" }
func (PageRankGen) Params() []mapreduce.Param {
	return []mapreduce.Param{outputParam,
		{Name: "pages", Default: "10000", Help: "number of pages"},
		{Name: "links", Default: "5", Help: "mean out-links per page"},
		{Name: "maps", Default: "2", Help: "number of map tasks"},
		{Name: "seed", Default: "1", Help: "random seed"},
	}
}

func (g PageRankGen) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(g.Params(), given)
	job, err := newJob(g.Name(), p, false, -1)
	if err != nil {
		return nil, err
	}
	pages, err := p.int("pages", 1, 1<<40)
	if err != nil {
		return nil, err
	}
	links, err := p.int("links", 0, 1<<20)
	if err != nil {
		return nil, err
	}
	maps, seed, err := p.mapsAndSeed()
	if err != nil {
		return nil, err
	}
	gen := &graphGen{pages: uint64(pages), links: uint64(links), seed: uint64(seed)}
	job.InputFormat = rangeInput{total: pages, maps: int(min(maps, pages))}
	job.NewMapper = func() mapreduce.Mapper { return &graphMapper{gen: gen} }
	return job, nil
}

type graphGen struct{ pages, links, seed uint64 }

type graphMapper struct {
	gen *graphGen
	src []byte
	dst []byte
}

func (m *graphMapper) Map(_ mapreduce.TaskContext, meta, _ []byte, out mapreduce.Emitter) error {
	first, count, err := decodeRange(meta)
	if err != nil {
		return err
	}
	g := m.gen
	for page := uint64(first); page < uint64(first+count); page++ {
		base := splitmix64(g.seed ^ splitmix64(page))
		m.src = strconv.AppendUint(m.src[:0], page, 10)
		for l := uint64(0); l < base%(2*g.links+1); l++ {
			m.dst = strconv.AppendUint(m.dst[:0], splitmix64(base+l+1)%g.pages, 10)
			if err := out.Emit(m.src, m.dst); err != nil {
				return err
			}
		}
	}
	return nil
}
