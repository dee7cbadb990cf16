package placement

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// links are a test topology's rates: every host alike, some racks'
// uplinks narrow.
type links struct {
	nic, cross float64
	uplink     map[string]float64
}

func (l links) NIC(string) float64         { return l.nic }
func (l links) CrossRack(string) float64   { return l.cross }
func (l links) Uplink(rack string) float64 { return l.uplink[rack] }
func rackName(i int) string                { return fmt.Sprintf("/r%d", i) }
func dnName(rack, i int) string            { return fmt.Sprintf("dn%d-%d", rack, i) }
func sizeOf(sizes []int) (n int) {
	for _, s := range sizes {
		n += s
	}
	return n
}

// drawSizes draws 2-4 racks of 1-5 datanodes each.
func drawSizes(rng *rand.Rand) []int {
	sizes := make([]int, 2+rng.Intn(3))
	for r := range sizes {
		sizes[r] = 1 + rng.Intn(5)
	}
	return sizes
}

func maxPipes(sizes []int, capPipes int) int { return max(1, min(sizeOf(sizes)/3, capPipes)) }

func cluster(sizes []int) []Node {
	var nodes []Node
	for r, n := range sizes {
		for i := range n {
			id := dnName(r, i)
			nodes = append(nodes, Node{ID: id, Host: id, Rack: rackName(r), Live: true, Remaining: 1 << 40})
		}
	}
	return nodes
}

// write places a write's pipelines one block at a time, as a client that
// keeps P blocks in flight asks for them: each request names the open
// pipelines, whose datanodes are busy.
func write(t *testing.T, pol Policy, nodes []Node, l Links, writerRack string, p int, rng *rand.Rand) [][]Node {
	var open [][]Node
	for range p {
		req := withOpen(Request{Replicas: 3, Replication: 3, WriterRack: writerRack, Links: l}, open)
		got := pol.ChooseTargets(nodes, req, rng)
		if len(got) != 3 {
			t.Fatalf("pipeline %d: %d targets", len(open)+1, len(got))
		}
		open = append(open, got)
	}
	return open
}

// withOpen is req from a writer whose open pipelines are open: their
// datanodes busy (excluded), their order given.
func withOpen(req Request, open [][]Node) Request {
	req.Exclude = map[string]bool{}
	for _, pipe := range open {
		var ids []string
		for _, n := range pipe {
			ids = append(ids, n.ID)
			req.Exclude[n.ID] = true
		}
		req.Open = append(req.Open, ids)
	}
	return req
}

// crossings counts, independently of Rate, what bounds a set of pipelines
// on a topology of alike hosts and no narrow uplink: every byte leaves the
// writer's rack once, from a rack-mate the pipeline began on (each its own
// cross-rack link) or from the writer, whose one cross-rack link all
// pipelines begun elsewhere share (scenario.IdealOf's cut).
func crossings(pipes [][]Node, writerRack string) float64 {
	local, remote := 0, false
	for _, p := range pipes {
		if p[0].Rack == writerRack {
			local++
		} else {
			remote = true
		}
	}
	if remote {
		local++
	}
	return float64(local)
}

// On random topologies of IdealOf's kind (2-4 racks of 1-5 datanodes, the
// writer outside the datanodes in one of the racks, every host with the
// same NIC and cross-rack rate) the P pipelines MinCut opens together
// reach the min-cut ideal min(nic, (min(k,P) + [P>k])·x) within 5% (they
// reach it exactly: the bound here is its crossings, counted
// independently of Rate). Placing every first replica in the writer's rack
// (HDFS) or across it fails it where the rack is small or large.
func TestMinCutRandomTopologies(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pol := Policies["mincut"]()
	worst := 1.0
	for i := range 300 {
		sizes := drawSizes(rng)
		racks := len(sizes)
		if sizeOf(sizes) < 6 {
			continue
		}
		nic := float64(200 + rng.Intn(201))
		x := math.Min(nic, float64(40+rng.Intn(111)))
		wr := rng.Intn(racks)
		k, p := sizes[wr], maxPipes(sizes, 4)
		l := links{nic: nic, cross: x}
		pipes := write(t, pol, cluster(sizes), l, rackName(wr), p, rng)
		ideal := math.Min(nic, float64(min(k, p)+btoi(p > k))*x)
		got := math.Min(nic, crossings(pipes, rackName(wr))*x)
		if share := got / ideal; share < worst {
			worst = share
		}
		if got < 0.95*ideal {
			t.Errorf("topology %d %v (writer in rack %d, %v/%v, P=%d): pipelines %v reach %.0f of the ideal %.0f",
				i, sizes, wr, nic, x, p, firsts(pipes), got, ideal)
		}
	}
	t.Logf("worst share of the ideal: %.1f%%", worst*100)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func firsts(pipes [][]Node) []string {
	var out []string
	for _, p := range pipes {
		out = append(out, p[0].ID+"@"+p[0].Rack)
	}
	return out
}

// A rack whose uplink is narrow (10 against 100 per host) must not carry
// the pipeline begun on the writer's one rack-mate, whose own cross-rack
// link is worth 100: the writer is in r0 with one datanode, r1 and r3 are
// wide, r2 is narrow. The best three pipelines (the rack-mate's, and two
// begun across the writer's link, sharing it) move 200, counted here
// independently of Rate: the rack-mate's pipeline adds its own bound (10
// through r2, else 100) and those begun elsewhere share the writer's 100,
// each bounded the same way. Checked over many draws; a policy ignoring
// uplinks sends the rack-mate's replicas to r2 in about a third of them.
func TestMinCutAvoidsNarrowUplink(t *testing.T) {
	sizes := []int{1, 3, 3, 3}
	l := links{nic: 400, cross: 100, uplink: map[string]float64{rackName(2): 10}}
	pol := Policies["mincut"]()
	own := func(p []Node) float64 {
		for _, n := range p {
			if n.Rack == rackName(2) {
				return 10
			}
		}
		return 100
	}
	for seed := range int64(60) {
		rng := rand.New(rand.NewSource(seed))
		pipes := write(t, pol, cluster(sizes), l, rackName(0), maxPipes(sizes, 4), rng)
		local, remote := 0.0, 0.0
		for _, p := range pipes {
			if p[0].Rack == rackName(0) {
				local += own(p)
			} else {
				remote += own(p)
			}
		}
		if got := math.Min(l.nic, local+math.Min(l.cross, remote)); got < 200 {
			t.Fatalf("seed %d: pipelines %v reach %v, want 200", seed, pipes, got)
		}
	}
}

// Rate is max-min fair sharing: two pipelines behind one 100 link share
// it, a third with its own link adds its own.
func TestRate(t *testing.T) {
	a := &Node{ID: "a", Rack: "/w"}
	b, c, d, e := &Node{ID: "b", Rack: "/x"}, &Node{ID: "c", Rack: "/x"}, &Node{ID: "d", Rack: "/y"}, &Node{ID: "e", Rack: "/y"}
	l := links{nic: 250, cross: 80}
	for _, tc := range []struct {
		pipes [][]*Node
		want  float64
	}{
		{[][]*Node{{b, c}}, 80},          // across the writer's link
		{[][]*Node{{b, c}, {d, e}}, 80},  // both across it: shared
		{[][]*Node{{a, b}, {d, e}}, 160}, // a rack-mate's link and the writer's
		{[][]*Node{{a, b}, {d, e}, {c}}, 160},
	} {
		if got := Rate(l, "/w", tc.pipes); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Rate(%v) = %v, want %v", tc.pipes, got, tc.want)
		}
	}
	l.nic = 100 // the writer's NIC binds all
	if got := Rate(l, "/w", [][]*Node{{a, b}, {d, e}}); math.Abs(got-100) > 1e-6 {
		t.Errorf("with a 100 NIC: %v", got)
	}
	l.nic, l.uplink = 250, map[string]float64{"/x": 30} // b's rack: its uplink binds the pipeline into it
	if got := Rate(l, "/w", [][]*Node{{a, b}, {d, e}}); math.Abs(got-110) > 1e-6 {
		t.Errorf("with a 30 uplink into /x: %v", got)
	}
}

// With only speed records, MinCut still keeps first hops off the writer's
// one cross-rack link while rack-mates are free, even when the records
// are all alike (a classic write's first hop runs at its pipeline's pace,
// so a rack-mate's record says nothing of the writer's NIC): the writer in
// r0 with two rack-mates, three pipelines, every record 75.
func TestMinCutFromRecords(t *testing.T) {
	sizes := []int{2, 3, 3, 4}
	nodes := cluster(sizes)
	speeds := map[string]float64{}
	for _, n := range nodes {
		speeds[n.ID] = 75
	}
	pol := Policies["mincut"]()
	for seed := range int64(30) {
		rng := rand.New(rand.NewSource(seed))
		var open [][]Node
		for range 3 {
			req := withOpen(Request{Replicas: 3, Replication: 3, WriterRack: rackName(0), Speeds: speeds}, open)
			open = append(open, pol.ChooseTargets(nodes, req, rng))
		}
		if c := crossings(open, rackName(0)); c != 3 {
			t.Fatalf("seed %d: pipelines %v leave the writer's rack over %v links, want 3 (two rack-mates and the writer's)", seed, firsts(open), c)
		}
	}
}
