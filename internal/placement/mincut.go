package placement

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
)

// Links is what placement knows of the links a write crosses, in bytes/s
// (any one unit will do); 0 is unknown, taken as no limit.
type Links interface {
	// NIC is a host's network interface rate, each direction; id "" is
	// the writer.
	NIC(id string) float64
	// CrossRack is a host's rate to and from hosts in other racks; id ""
	// is the writer.
	CrossRack(id string) float64
	// Uplink is a rack's link to the core, each direction.
	Uplink(rack string) float64
}

// MinCut places a new block of a write that keeps several blocks in
// flight (multipipeline-concurrent): of the first datanodes it may use, it
// takes the one whose pipeline, together with the writer's open
// pipelines, lets the whole write move the most bytes per second through
// the links (Rate), not the one that is fastest alone. Two first hops
// behind the writer's cross-rack link share it, two pipelines leaving one
// rack share its uplink, a datanode's cross-rack rate bounds the hop that
// leaves it; the writer's NIC bounds them all. Later replicas keep off
// the writer's rack-mates where the rack rule allows, so those stay free
// for first hops. Ties go to the pipeline whose first hop is fastest (a
// rack-mate's, not one across the writer's own cross-rack link), then to
// the one that is fastest alone, then at random. Without
// Links it plans with RecordLinks, whose prior (rack-mates first) stands
// until the writer has records; with neither records nor a rack for the
// writer it is SpeedAware.
type MinCut struct {
	SpeedAware
}

var _ Policy = (*MinCut)(nil)

// ChooseTargets implements Policy.
func (p *MinCut) ChooseTargets(nodes []Node, req Request, rng *rand.Rand) []Node {
	if len(req.Chosen) > 0 || req.Replicas == 0 || (req.Links == nil && len(req.Speeds) == 0 && req.WriterRack == "") {
		return p.SpeedAware.ChooseTargets(nodes, req, rng)
	}
	s := newSelection(nodes, req, rng)
	if req.Links == nil {
		req.Links = RecordLinks(req.Speeds, s.live, req.WriterRack)
	}
	var open [][]*Node
	for _, ids := range req.Open {
		var path []*Node
		for _, id := range ids {
			if n := s.byID[id]; n != nil {
				path = append(path, n)
			}
		}
		open = append(open, path)
	}
	var firsts []*Node
	for _, c := range s.candidates {
		if s.good(c) {
			firsts = append(firsts, c)
		}
	}
	if len(firsts) > maxFirsts { // bound the work on a large cluster
		rng.Shuffle(len(firsts), func(i, j int) { firsts[i], firsts[j] = firsts[j], firsts[i] })
		firsts = firsts[:maxFirsts]
	}
	var best []Node
	bestFuture, bestTotal, bestFirst, bestAlone := -1.0, -1.0, -1.0, -1.0
	ties := 0
	slots := s.topN() - len(open) - 1 // pipelines the writer may still open beside this one
	for _, c := range firsts {
		// Each rack the second replica may go to (the third follows
		// HDFS's rule from it), so a narrow rack uplink can be avoided.
		seconds := map[string]bool{}
		for _, n := range s.candidates {
			if n != c && n.Rack != c.Rack && s.good(n) {
				seconds[n.Rack] = true
			}
		}
		if len(seconds) == 0 {
			seconds[""] = true
		}
		for _, r2 := range sortedKeys(seconds) {
			trial := newSelection(nodes, req, rng)
			// The writer's rack-mates are kept for first hops: a later
			// replica takes one only where the rack rule leaves nothing
			// else (as SpeedAware's Reserve).
			trial.reserved = trial.rackMates()
			trial.take(trial.byID[c.ID])
			if r2 != "" {
				trial.pick(onRack(r2))
			}
			trial.fill(req.Replicas)
			pipe := trial.pipeline(true)
			path := make([]*Node, len(pipe))
			for i := range pipe {
				path[i] = &pipe[i]
			}
			set := append(open[:len(open):len(open)], path)
			total := Rate(req.Links, req.WriterRack, set)
			future := Rate(req.Links, req.WriterRack, append(set, s.later(trial, slots)...))
			alone := Rate(req.Links, req.WriterRack, [][]*Node{path})
			// Where the rates tie (the writer's own cross-rack link idle is
			// worth as much to them as a free rack-mate's), the first hop
			// decides: one across the writer's link takes the block at the
			// cross-rack rate where a rack-mate takes it at the NIC's, so
			// the writer's link stays held that much longer (SMARTH's FNFA
			// comes later, a concurrent writer waits longer to start a
			// block beside it) and the next pipeline that must cross from
			// the writer shares it.
			first := Rate(req.Links, req.WriterRack, [][]*Node{path[:1]})
			// Rates within a part in a million are equal: sums of a
			// progressive filling differ in their last bits.
			const eps = 1e-6
			cmp := 0
			for _, v := range [][2]float64{{future, bestFuture}, {total, bestTotal}, {first, bestFirst}, {alone, bestAlone}} {
				if v[0] > v[1]*(1+eps) {
					cmp = 1
					break
				}
				if v[0] < v[1]*(1-eps) {
					cmp = -1
					break
				}
			}
			switch cmp {
			case 1:
				best, bestFuture, bestTotal, bestFirst, bestAlone, ties = pipe, future, total, first, alone, 1
			case 0:
				ties++ // equally good: each tie wins with the same chance
				if rng.Intn(ties) == 0 {
					best = pipe
				}
			}
		}
	}
	if best == nil {
		s.fill(req.Replicas)
		return s.pipeline(false)
	}
	return best
}

// later stands for the pipelines the writer may still open beside the
// trial one, up to slots: one on each rack-mate of the writer the trial
// leaves free (each leaving the rack over its own link, to a datanode not
// yet known), then one more across the writer's own link. A pipeline that
// spends a rack-mate as its second or third replica, which the rack rule
// allows, thereby costs the write a future pipeline's own cross-rack
// link; weighing these is what keeps it from doing so when it can.
func (s *selection) later(trial *selection, slots int) [][]*Node {
	var out [][]*Node
	for _, n := range s.candidates {
		if len(out) >= slots {
			return out
		}
		if s.req.WriterRack != "" && n.Rack == s.req.WriterRack && !trial.taken[n.ID] && s.good(n) {
			out = append(out, []*Node{n, {ID: fmt.Sprintf("\x00later%d", len(out)), Rack: "\x00elsewhere"}})
		}
	}
	if len(out) < slots {
		out = append(out, []*Node{{ID: "\x00later-remote", Rack: "\x00elsewhere"}})
	}
	return out
}

// rackMates are the live datanodes in the writer's rack (none when its
// rack is unknown).
func (s *selection) rackMates() map[string]bool {
	out := map[string]bool{}
	if s.req.WriterRack == "" {
		return out
	}
	for _, n := range s.live {
		if n.Rack == s.req.WriterRack {
			out[n.ID] = true
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxFirsts bounds the first datanodes weighed per block.
const maxFirsts = 64

// unbounded stands for a link of unknown rate: large enough never to bind
// a known one, finite so that sums stay comparable.
const unbounded = 1e18

// Rate is the bytes per second a set of pipelines moves at once when each
// gets its max-min fair share of every link it crosses (progressive
// filling: all rates rise together; a link that fills freezes the
// pipelines through it), which is how TCP flows sharing links settle. A
// pipeline is its datanodes in order, written from a writer in writerRack;
// each hop uses the source's NIC out and the destination's NIC in, and a
// hop between racks also both hosts' cross-rack rates and both racks'
// uplinks. Each pipeline's rate is what all its hops carry.
func Rate(l Links, writerRack string, pipes [][]*Node) float64 {
	type res struct {
		cap  float64
		used []int // how often each pipeline crosses it
	}
	links := map[string]*res{}
	use := func(i int, key string, c float64) {
		if c <= 0 {
			return
		}
		r := links[key]
		if r == nil {
			r = &res{cap: c, used: make([]int, len(pipes))}
			links[key] = r
		}
		r.used[i]++
	}
	for i, path := range pipes {
		fromID, fromRack := "", writerRack
		for _, n := range path {
			use(i, "nic-out "+fromID, l.NIC(fromID))
			use(i, "nic-in "+n.ID, l.NIC(n.ID))
			if fromRack != n.Rack {
				use(i, "cross-out "+fromID, l.CrossRack(fromID))
				use(i, "cross-in "+n.ID, l.CrossRack(n.ID))
				use(i, "uplink-out "+fromRack, l.Uplink(fromRack))
				use(i, "uplink-in "+n.Rack, l.Uplink(n.Rack))
			}
			fromID, fromRack = n.ID, n.Rack
		}
	}
	keys := make([]string, 0, len(links))
	for k := range links {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same answer every time
	rate := make([]float64, len(pipes))
	active := make([]bool, len(pipes))
	left := 0
	for i, path := range pipes {
		if len(path) > 0 {
			active[i], left = true, left+1
		}
	}
	for left > 0 {
		step := unbounded
		for _, k := range keys {
			r := links[k]
			used, grow := 0.0, 0
			for i, u := range r.used {
				used += float64(u) * rate[i]
				if active[i] {
					grow += u
				}
			}
			if grow > 0 {
				step = math.Min(step, math.Max(r.cap-used, 0)/float64(grow))
			}
		}
		for i := range rate {
			if active[i] {
				rate[i] += step
			}
		}
		if step >= unbounded {
			break
		}
		froze := false
		for _, k := range keys {
			r := links[k]
			used := 0.0
			for i, u := range r.used {
				used += float64(u) * rate[i]
			}
			if used < r.cap*(1-1e-9) {
				continue
			}
			for i, u := range r.used {
				if u > 0 && active[i] {
					active[i], left, froze = false, left-1, true
				}
			}
		}
		if !froze {
			break
		}
	}
	total := 0.0
	for _, r := range rate {
		total += r
	}
	return total
}

// RecordLinks estimates the links from the writer's speed records alone,
// which is all the namenode measures. A record is the rate a block reached
// its first datanode, which a pipeline behind it may have held down (a
// classic write's first hop runs at its slowest hop's pace), so a record
// is a lower bound of a link, never a cap: the writer's NIC stays unknown.
// Its cross-rack rate is its fastest record to another rack, and every
// datanode is taken to reach other racks at that rate (hosts of one
// cluster are alike until measured otherwise); rack uplinks are unknown.
// What the estimate keeps is the structure of the cut: first hops behind
// the writer's one cross-rack link share it, rack-mates each bring their
// own.
//
// Before the writer has a record to another rack (a new cluster's first
// upload, or records of rack-mates only) the rate across racks is not
// known but the structure is: HDFS's own assumption that a rack-mate is
// nearer than a host across racks. The cross-rack rate is then a prior of
// one unit, finite beside the unknown (unbounded) NICs, so every host still
// brings one cross-rack link of its own and the writer's is shared by every
// first hop behind it; the first record across racks replaces it. (Left
// unknown, every link would be unbounded and every choice a tie, so first
// hops would go behind the writer's link at random.) Without a rack for
// the writer there is no cut to keep and no prior.
func RecordLinks(speeds map[string]float64, live []*Node, writerRack string) Links {
	l := recordLinks{}
	for _, n := range live {
		if v, ok := speeds[n.ID]; ok && (writerRack == "" || n.Rack != writerRack) {
			l.cross = max(l.cross, v)
		}
	}
	if l.cross <= 0 && writerRack != "" {
		l.cross = priorCross
	}
	return l
}

// priorCross is the cross-rack rate RecordLinks assumes before any record
// across racks: any positive value does, as only the links' structure
// matters while the NICs are unknown.
const priorCross = 1

type recordLinks struct{ cross float64 }

func (recordLinks) NIC(string) float64         { return 0 }
func (l recordLinks) CrossRack(string) float64 { return l.cross }
func (recordLinks) Uplink(string) float64      { return 0 }
