package placement

import (
	"math"
	"math/rand"
	"sort"
)

// SpeedAware is SMARTH's global optimization (seed 000, Algorithm 1).
//
// Three additions over the algorithm as printed, each a field:
//
//   - Reserve keeps the writer's top-n datanodes for first positions: the
//     second and later replicas avoid them whenever the rack rule can be
//     met by another node, and the first replica goes to a free top-n node
//     whenever one is free. As printed, the later replicas land on fast
//     nodes too; since a datanode may be in only one open pipeline of a
//     client, those are then busy when the next pipeline opens and its
//     first node must come from the slower rest (on the testbed with 4 of
//     9 nodes slow, 38% of blocks began on a slow node). Reserved, at most
//     n-1 of the n top nodes are busy as first nodes while the client has
//     its other pipelines open, so one is always free.
//   - Explore ranks datanodes the writer has no record of above those it
//     has: each is tried once as a first node, then ranked by its speed.
//     As printed, only measured nodes can be in the top-n, so the first
//     nodes a client happens to be given before its records arrive (slow
//     ones too) keep every first position, and an unmeasured fast node is
//     only ever reached through Algorithm 2's random swap.
//   - Topology uses what the namenode knows before any record exists (see
//     estimate and hopFree): exploring is bounded to the writer's own
//     rack, the nearest link class, while it has nodes; an unmeasured node
//     elsewhere is rated like the measured nodes of its class (or last,
//     if none is measured), so a first upload does not spend its blocks
//     measuring nodes behind the client's cross-rack link; and a new
//     pipeline's first cross-rack hop leaves from a host that carries no
//     other open pipeline's cross-rack hop, when such a first node is
//     free. The ranking applies from the first block, records or not.
type SpeedAware struct {
	Reserve  bool
	Explore  bool
	Topology bool
}

var _ Policy = (*SpeedAware)(nil)

// ChooseTargets implements Policy.
func (p *SpeedAware) ChooseTargets(nodes []Node, req Request, rng *rand.Rand) []Node {
	s := newSelection(nodes, req, rng)
	if len(req.Chosen) > 0 || req.Replicas == 0 || (len(req.Speeds) == 0 && !p.Topology) {
		// Repairs and re-replication keep the pipeline's first node; the
		// algorithm is about the first node of a new block only, and
		// without any records (as printed) it is HDFS's placement.
		s.fill(req.Replicas)
		return s.pipeline(false)
	}
	rank := func(pool []*Node) []*Node { return s.rated(req, p.Explore, pool) }
	if p.Topology {
		rank = s.ranked
	}
	var first []*Node
	if p.Reserve {
		s.reserved = map[string]bool{}
		for _, n := range rank(s.live) {
			s.reserved[n.ID] = true
		}
		for _, c := range s.candidates {
			if s.reserved[c.ID] && s.good(c) {
				first = append(first, c)
			}
		}
	}
	if len(first) == 0 {
		// Paper: the n fastest of the usable nodes.
		var usable []*Node
		for _, c := range s.candidates {
			if s.good(c) {
				usable = append(usable, c)
			}
		}
		first = rank(usable)
	}
	if p.Topology {
		first = s.hopFree(first)
	}
	if len(first) == 0 {
		s.fill(req.Replicas)
		return s.pipeline(false)
	}
	s.take(first[rng.Intn(len(first))])
	s.fill(req.Replicas)
	return s.pipeline(true)
}

// topN is n = live datanodes / replication (at least 1): the most
// pipelines a client may keep open, so each open pipeline can start on a
// fast node.
func (s *selection) topN() int {
	repl := s.req.Replication
	if repl <= 0 {
		repl = len(s.req.Chosen) + s.req.Replicas
	}
	return max(len(s.live)/max(repl, 1), 1)
}

// rated returns the writer's n fastest datanodes of pool (sorted by id).
// Nodes without a speed record are left out, or with explore put first in
// random order. Rated nodes are sorted fastest first, ties by id.
func (s *selection) rated(req Request, explore bool, pool []*Node) []*Node {
	var rated, unrated []*Node
	for _, n := range pool {
		if _, ok := req.Speeds[n.ID]; ok {
			rated = append(rated, n)
		} else if explore {
			unrated = append(unrated, n)
		}
	}
	sort.Slice(rated, func(i, j int) bool {
		si, sj := req.Speeds[rated[i].ID], req.Speeds[rated[j].ID]
		if si != sj {
			return si > sj
		}
		return rated[i].ID < rated[j].ID
	})
	s.rng.Shuffle(len(unrated), func(i, j int) { unrated[i], unrated[j] = unrated[j], unrated[i] })
	top := append(unrated, rated...)
	return top[:min(len(top), s.topN())]
}

// Link classes of a datanode as seen from the writer.
const (
	classLocal = iota // the writer's own host or rack
	classFar          // another rack, or a writer the mapping does not place
)

func (s *selection) class(n *Node) int {
	if s.req.WriterRack != "" && n.Rack == s.req.WriterRack {
		return classLocal
	}
	if w := s.writerNode(); w != nil && (w == n || w.Rack == n.Rack) {
		return classLocal
	}
	return classFar
}

// estimate is the speed the writer may expect to datanode n, for ranking:
// its record if it has one; else, for a node of the nearest class that
// has live nodes, +Inf, so it is tried once (exploration within the
// writer's rack is cheap: HDFS would start there anyway); else the best
// record of its class (nodes behind the same link look alike until
// measured), or 0 when the class is unmeasured, so it comes last.
func (s *selection) estimate() func(*Node) float64 {
	nearest := classFar
	best := map[int]float64{}
	for _, n := range s.live {
		c := s.class(n)
		nearest = min(nearest, c)
		if v, ok := s.req.Speeds[n.ID]; ok {
			best[c] = max(best[c], v)
		}
	}
	return func(n *Node) float64 {
		if v, ok := s.req.Speeds[n.ID]; ok {
			return v
		}
		if c := s.class(n); c == nearest {
			return math.Inf(1)
		} else {
			return best[c]
		}
	}
}

// ranked returns the writer's top-n of pool by estimate, ties in random
// order (so equally good nodes share the first positions).
func (s *selection) ranked(pool []*Node) []*Node {
	est := s.estimate()
	out := append([]*Node(nil), pool...)
	s.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	sort.SliceStable(out, func(i, j int) bool { return est(out[i]) > est(out[j]) })
	return out[:min(len(out), s.topN())]
}

// writerSource stands for the writer's own host as the source of a hop.
const writerSource = "\x00writer"

// hopSource is where a pipeline starting on first crosses racks first:
// from first itself when first is in the writer's rack (its second
// replica is off-rack), else from the writer. "" when the writer's rack
// is unknown.
func (s *selection) hopSource(first *Node) string {
	switch {
	case s.req.WriterRack == "":
		return ""
	case first.Rack == s.req.WriterRack:
		return first.ID
	}
	return writerSource
}

// hopFree keeps the first-node candidates whose pipeline's cross-rack hop
// would leave from a host that no open pipeline of the writer already
// sends its cross-rack hop from (two such hops share that host's
// cross-rack link, halving both pipelines); all of them if none is.
func (s *selection) hopFree(cands []*Node) []*Node {
	if s.req.WriterRack == "" || len(s.req.Open) == 0 {
		return cands
	}
	used := map[string]bool{}
	for _, p := range s.req.Open {
		prevRack, src := s.req.WriterRack, writerSource
		for _, id := range p {
			n := s.byID[id]
			if n == nil {
				break
			}
			if n.Rack != prevRack {
				used[src] = true
				break
			}
			prevRack, src = n.Rack, n.ID
		}
	}
	var out []*Node
	for _, c := range cands {
		if !used[s.hopSource(c)] {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cands
	}
	return out
}
