package placement

import (
	"fmt"
	"math/rand"
	"testing"
)

// records are the speed situations a write can be in when MinCut places
// its next block: the first upload of a cluster (none), records of the
// writer's rack-mates only (its first blocks went there), every datanode
// measured alike, and random records of random datanodes.
var records = []struct {
	name string
	make func(nodes []Node, writerRack string, rng *rand.Rand) map[string]float64
}{
	{"none", func([]Node, string, *rand.Rand) map[string]float64 { return nil }},
	{"rack-mates only", func(nodes []Node, wr string, rng *rand.Rand) map[string]float64 {
		m := map[string]float64{}
		for _, n := range nodes {
			if n.Rack == wr && rng.Intn(2) == 0 {
				m[n.ID] = float64(100 + rng.Intn(300))
			}
		}
		return m
	}},
	{"all alike", func(nodes []Node, _ string, _ *rand.Rand) map[string]float64 {
		m := map[string]float64{}
		for _, n := range nodes {
			m[n.ID] = 75
		}
		return m
	}},
	{"random", func(nodes []Node, _ string, rng *rand.Rand) map[string]float64 {
		m := map[string]float64{}
		for _, n := range nodes {
			if rng.Intn(2) == 0 {
				m[n.ID] = float64(10 + rng.Intn(400))
			}
		}
		return m
	}},
}

// On generated topologies (2-4 racks of 1-5 datanodes, the writer outside
// the datanodes in one of the racks, hosts alike) and generated histories
// of a concurrent write (pipelines opened by MinCut and closed in random
// order, at most n = live/3 open), under every speed situation (records),
// each block MinCut places:
//   - begins on one of the writer's rack-mates whenever one is free, so no
//     first hop goes behind the writer's own cross-rack link (shared by
//     every first hop there) while a rack-mate, with a cross-rack link of
//     its own, could take the block; and
//   - spends no rack-mate as a second or third replica while another rack
//     has two free datanodes to take them, so the rack-mates stay for
//     first hops.
//
// Before the prior, records of rack-mates alone left every rate unknown
// (every choice a tie, taken at random) and, with records, a first hop
// behind an idle writer's link tied with a rack-mate's; the trial
// pipelines placed their later replicas at random within the rack rule.
func TestMinCutPriorProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(27))
	pol := Policies["mincut"]()
	placed := map[string]int{}
	n := 400
	if testing.Short() {
		n = 100 // the race detector's run: fewer topologies, the same rules
	}
	for i := range n {
		sizes := drawSizes(rng)
		if sizeOf(sizes) < 6 {
			continue
		}
		nodes := cluster(sizes)
		wr := rackName(rng.Intn(len(sizes)))
		rec := records[i%len(records)]
		speeds := rec.make(nodes, wr, rng)
		p := len(nodes) / 3
		var open [][]Node
		for step := range 4 * p {
			if len(open) == p || (len(open) > 0 && rng.Intn(3) == 0) {
				j := rng.Intn(len(open))
				open = append(open[:j], open[j+1:]...)
				continue
			}
			req := withOpen(Request{Replicas: 3, Replication: 3, WriterRack: wr, Speeds: speeds}, open)
			got := pol.ChooseTargets(nodes, req, rng)
			if len(got) != 3 {
				t.Fatalf("topology %d %v, step %d: %d targets", i, sizes, step, len(got))
			}
			where := fmt.Sprintf("topology %d %v (writer in %s, records %s), step %d, open %v", i, sizes, wr, rec.name, step, firsts(open))
			freeMate := ""
			freeIn := map[string]int{} // free datanodes per rack, besides the new first
			for _, n := range nodes {
				if req.Exclude[n.ID] {
					continue
				}
				if n.Rack == wr && freeMate == "" {
					freeMate = n.ID
				}
				if n.ID != got[0].ID {
					freeIn[n.Rack]++
				}
			}
			if freeMate != "" && got[0].Rack != wr {
				t.Errorf("%s: block begins on %s behind the writer's cross-rack link while rack-mate %s is free", where, got[0].ID, freeMate)
			}
			roomElsewhere := false
			for r, n := range freeIn {
				if r != wr && r != got[0].Rack && n >= 2 {
					roomElsewhere = true
				}
			}
			if roomElsewhere && (got[1].Rack == wr || got[2].Rack == wr) {
				t.Errorf("%s: pipeline %s>%s>%s spends a rack-mate as a later replica while another rack has room", where, got[0].ID, got[1].ID, got[2].ID)
			}
			placed[rec.name]++
			open = append(open, got)
		}
	}
	for _, r := range records {
		if placed[r.name] == 0 {
			t.Errorf("no block placed with records %q: the generator covers too little", r.name)
		}
	}
}
