package placement

import (
	"maps"
	"math/rand"
	"slices"
	"sort"

	"smarth/internal/topology"
)

// Node is what placement knows about one datanode.
type Node struct {
	ID        string
	Host      string
	IP        string
	Rack      string
	Live      bool
	Xceivers  int   // active data transfers: HDFS's measure of how busy a node is
	Remaining int64 // free bytes
}

func (n Node) location() topology.Location {
	return topology.Location{Host: n.Host, IP: n.IP, Rack: n.Rack}
}

// Request describes one placement decision.
type Request struct {
	// Replicas is how many new targets to choose.
	Replicas int
	// Replication is the file's replication factor; SpeedAware derives the
	// number of candidate first nodes from it. 0 means len(Chosen)+Replicas.
	Replication int
	// Chosen are datanode ids that already hold (or are being written) the
	// block, in pipeline order: re-replication and pipeline repair place
	// the new targets relative to them.
	Chosen []string
	// Exclude are datanode ids that must not be chosen: failed nodes, nodes
	// busy in another of the writer's pipelines, nodes with any replica.
	Exclude map[string]bool
	// WriterHost is the client's hostname or IP ("" when unknown); a
	// datanode on the same host gets the first replica under RackAware.
	WriterHost string
	// WriterIP is the address the writer's calls come from ("" when
	// unknown, or loopback, which every datanode of a loopback cluster
	// shares); a datanode with it is the writer's node too.
	WriterIP string
	// WriterRack is the rack the topology mapping puts the writer in, ""
	// when it places the writer nowhere. A writer that is not a datanode
	// but has a rack gets its first replica in that rack (HDFS's
	// chooseLocalRack), so the first hop stays inside the rack.
	WriterRack string
	// Open are the writer's other open pipelines of this file, each in
	// pipeline order (their nodes are in Exclude too). SpeedAware keeps
	// a new pipeline's cross-rack hop off the hosts that already carry
	// one of theirs.
	Open [][]string
	// BlockSize skips nodes with less free space than one block.
	BlockSize int64
	// Speeds are the writer's recent transfer speeds to datanodes, bytes/s,
	// by datanode id. Only SpeedAware and MinCut read them.
	Speeds map[string]float64
	// Links are the link rates MinCut plans with; nil: estimated from
	// Speeds (RecordLinks).
	Links Links
}

// Policy chooses replica targets. The result holds at most req.Replicas
// distinct live nodes, none excluded or already chosen, in pipeline order;
// fewer when the cluster cannot supply more.
type Policy interface {
	ChooseTargets(nodes []Node, req Request, rng *rand.Rand) []Node
}

// Policies are the placement policies selectable by name in the namenode's
// configuration ("placement").
var Policies = map[string]func() Policy{
	"rackaware":        func() Policy { return &RackAware{} },
	"speedaware":       func() Policy { return &SpeedAware{Reserve: true, Explore: true, Topology: true} },
	"speedaware-paper": func() Policy { return &SpeedAware{} },
	"mincut":           func() Policy { return &MinCut{SpeedAware{Reserve: true, Explore: true, Topology: true}} },
}

// Names lists the policy names in a stable order, for error messages.
func Names() []string {
	return slices.Sorted(maps.Keys(Policies))
}

// selection is the working state of one decision: the candidate pool and
// the nodes picked so far.
type selection struct {
	rng        *rand.Rand
	req        Request
	byID       map[string]*Node
	live       []*Node // live nodes, sorted by id
	candidates []*Node // live, not excluded, enough space; sorted by id for determinism
	prior      []*Node // req.Chosen that are known nodes
	results    []*Node // new targets, in choice order
	taken      map[string]bool
	perRack    map[string]int
	maxPerRack int
	maxLoad    float64 // 0: no load limit
	relaxed    bool    // load and rack limits dropped because the strict pass fell short
	// reserved are nodes kept for other positions: pick avoids them while
	// the same rack rule can be met without them.
	reserved map[string]bool
	// writer1 is the writer's own datanode (nil: none), once writerKnown.
	writer1     *Node
	writerKnown bool
}

func newSelection(nodes []Node, req Request, rng *rand.Rand) *selection {
	s := &selection{rng: rng, req: req, byID: map[string]*Node{}, taken: map[string]bool{}, perRack: map[string]int{}}
	racks := map[string]bool{}
	live, load := 0, 0
	for i := range nodes {
		n := &nodes[i]
		s.byID[n.ID] = n
		if !n.Live {
			continue
		}
		live++
		load += n.Xceivers
		racks[n.Rack] = true
		s.live = append(s.live, n)
	}
	sort.Slice(s.live, func(i, j int) bool { return s.live[i].ID < s.live[j].ID })
	for _, id := range req.Chosen {
		s.taken[id] = true
		if n, ok := s.byID[id]; ok {
			s.prior = append(s.prior, n)
			s.perRack[n.Rack]++
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if !n.Live || req.Exclude[n.ID] || s.taken[n.ID] {
			continue
		}
		if req.BlockSize > 0 && n.Remaining < req.BlockSize {
			continue
		}
		s.candidates = append(s.candidates, n)
	}
	sort.Slice(s.candidates, func(i, j int) bool { return s.candidates[i].ID < s.candidates[j].ID })
	total := len(req.Chosen) + req.Replicas
	s.maxPerRack = total
	if len(racks) > 1 {
		s.maxPerRack = (total-1)/len(racks) + 2
	}
	if live > 0 && load > 0 {
		s.maxLoad = 2 * float64(load) / float64(live)
	}
	return s
}

// good is HDFS's isGoodTarget: free, not overloaded, and its rack not full.
func (s *selection) good(n *Node) bool {
	if s.taken[n.ID] {
		return false
	}
	if s.relaxed {
		return true
	}
	if s.maxLoad > 0 && float64(n.Xceivers) > s.maxLoad {
		return false
	}
	return s.perRack[n.Rack] < s.maxPerRack
}

func (s *selection) take(n *Node) {
	s.taken[n.ID] = true
	s.perRack[n.Rack]++
	s.results = append(s.results, n)
}

// pick takes a random good candidate accepted by keep, an unreserved one
// if there is any; false if none.
func (s *selection) pick(keep func(*Node) bool) bool {
	var pool, spare []*Node
	for _, n := range s.candidates {
		if s.good(n) && keep(n) {
			pool = append(pool, n)
			if !s.reserved[n.ID] {
				spare = append(spare, n)
			}
		}
	}
	if len(spare) > 0 {
		pool = spare
	}
	if len(pool) == 0 {
		return false
	}
	s.take(pool[s.rng.Intn(len(pool))])
	return true
}

func anyNode(*Node) bool { return true }

func onRack(rack string) func(*Node) bool {
	return func(n *Node) bool { return n.Rack == rack }
}

func offRack(rack string) func(*Node) bool {
	return func(n *Node) bool { return n.Rack != rack }
}

// all returns the prior nodes followed by the new results.
func (s *selection) all() []*Node {
	out := make([]*Node, 0, len(s.prior)+len(s.results))
	return append(append(out, s.prior...), s.results...)
}

// fill chooses targets until want new ones are taken, following HDFS's
// order: local, remote rack, second's rack, random.
func (s *selection) fill(want int) {
	for len(s.results) < want {
		if !s.next() {
			if s.relaxed {
				return
			}
			// HDFS would give up here; a smaller cluster is better served by
			// ignoring the load and per-rack limits than by a short pipeline.
			s.relaxed = true
		}
	}
}

// next takes one more target by the rack-aware rule for its position.
func (s *selection) next() bool {
	all := s.all()
	switch len(all) {
	case 0:
		if w := s.writerNode(); w != nil && s.good(w) && s.isCandidate(w) {
			s.take(w)
			return true
		} else if w != nil && s.pick(onRack(w.Rack)) {
			return true
		} else if w == nil && s.req.WriterRack != "" && s.pick(onRack(s.req.WriterRack)) {
			// HDFS: a client outside the datanodes but in a known rack
			// writes its first replica to a random node of its rack.
			return true
		}
		return s.pick(anyNode)
	case 1:
		return s.pick(offRack(all[0].Rack)) || s.pick(onRack(all[0].Rack)) || s.pick(anyNode)
	case 2:
		if all[0].Rack == all[1].Rack {
			return s.pick(offRack(all[0].Rack)) || s.pick(anyNode)
		}
		return s.pick(onRack(all[1].Rack)) || s.pick(anyNode)
	default:
		return s.pick(anyNode)
	}
}

func (s *selection) isCandidate(n *Node) bool {
	for _, c := range s.candidates {
		if c == n {
			return true
		}
	}
	return false
}

// writer is where the writer is, as far as the request says.
func (s *selection) writer() topology.Location {
	return topology.Location{Host: s.req.WriterHost, IP: s.req.WriterIP, Rack: s.req.WriterRack}
}

// writerNode is the live datanode on the writer's host, if any; found once
// per decision, since ranking asks for it per node.
func (s *selection) writerNode() *Node {
	if !s.writerKnown {
		s.writer1, s.writerKnown = s.findWriterNode(), true
	}
	return s.writer1
}

func (s *selection) findWriterNode() *Node {
	if s.req.WriterHost == "" && s.req.WriterIP == "" {
		return nil
	}
	w := s.writer()
	for _, n := range s.candidates {
		if topology.SameHost(w, n.location()) {
			return n
		}
	}
	for _, n := range s.byID {
		if n.Live && topology.SameHost(w, n.location()) {
			return n
		}
	}
	return nil
}

// pipeline orders the results as HDFS does: starting from the writer (or the
// first result when the writer is not a datanode, or from fixed[0] when the
// first node is fixed), each next node is the nearest remaining one to the
// previous. It returns copies, so callers never alias the view.
func (s *selection) pipeline(fixFirst bool) []Node {
	res := append([]*Node(nil), s.results...)
	var from topology.Location
	start := 0
	switch {
	case fixFirst && len(res) > 0:
		from, start = res[0].location(), 1
	case s.writerNode() != nil:
		from = s.writerNode().location()
	case s.req.WriterRack != "" && len(s.prior) == 0:
		from = s.writer() // HDFS sorts the pipeline from the client, rack known
	case len(s.prior) > 0:
		from = s.prior[len(s.prior)-1].location()
	case len(res) > 0:
		from = res[0].location()
	}
	for i := start; i < len(res); i++ {
		best := i
		for j := i + 1; j < len(res); j++ {
			if topology.Distance(from, res[j].location()) < topology.Distance(from, res[best].location()) {
				best = j
			}
		}
		res[i], res[best] = res[best], res[i]
		from = res[i].location()
	}
	out := make([]Node, len(res))
	for i, n := range res {
		out[i] = *n
	}
	return out
}

// RackAware is HDFS's default block placement.
type RackAware struct{}

var _ Policy = (*RackAware)(nil)

// ChooseTargets implements Policy.
func (*RackAware) ChooseTargets(nodes []Node, req Request, rng *rand.Rand) []Node {
	s := newSelection(nodes, req, rng)
	s.fill(req.Replicas)
	return s.pipeline(false)
}
