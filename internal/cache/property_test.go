package cache

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// TestRandomWorkloads runs seeded random workloads over every policy and
// checks, after every step, that resident bytes never exceed a node's
// capacity, that only resident blocks are uncached, that no block is
// cached twice on a node (nor twice in the cluster for access-driven
// policies), and that evictions follow the policy's order under ties.
func TestRandomWorkloads(t *testing.T) {
	for _, name := range Names() {
		var evictions int64
		for seed := int64(1); seed <= 40; seed++ {
			t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) {
				evictions += runWorkload(t, name, seed)
			})
		}
		// The workloads must exercise replacement, or they prove little.
		if replaces := name != "none" && name != "pinned"; replaces && evictions < 100 {
			t.Errorf("%s: only %d evictions over all workloads", name, evictions)
		}
	}
}

type workload struct {
	t     *testing.T
	rng   *rand.Rand
	plan  *Plan
	model map[string]map[uint64]bool // what the changes said, per node
	now   time.Time
	sizes map[uint64]int64
}

var (
	workNodes = []string{"dn1", "dn2", "dn3", "dn4"}
	workApps  = []struct {
		name string
		ca   float64
	}{{"grep", 0.6}, {"agg", 0.3}, {"wc", 0.1}, {"sort", 0.1}, {"km", 0}}
)

func runWorkload(t *testing.T, policy string, seed int64) int64 {
	p, err := New(policy, Options{Window: 20 * time.Minute, TTL: 7 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{t: t, rng: rand.New(rand.NewSource(seed)), plan: p, model: map[string]map[uint64]bool{},
		now: base, sizes: map[uint64]int64{}}
	for _, n := range workNodes[:3] {
		w.model[n] = map[uint64]bool{}
		w.apply(p.State().SetNode(n, 100+w.rng.Int63n(400)))
	}
	for step := 0; step < 400; step++ {
		// Time moves in small steps, often not at all (ties).
		w.now = w.now.Add(time.Duration(w.rng.Intn(3)) * 20 * time.Second)
		w.step(step)
		checkState(t, p)
		w.compare(step)
	}
	return p.State().Evictions()
}

func (w *workload) block() uint64 {
	id := uint64(1 + w.rng.Intn(30))
	if _, ok := w.sizes[id]; !ok {
		w.sizes[id] = 20 + w.rng.Int63n(150)
	}
	return id
}

func (w *workload) step(step int) {
	st := w.plan.State()
	switch r := w.rng.Intn(100); {
	case r < 70:
		app := workApps[w.rng.Intn(len(workApps))]
		id := w.block()
		req := Request{Block: id, Size: w.sizes[id], Node: workNodes[w.rng.Intn(len(workNodes))], App: app.name, Affinity: app.ca}
		before := w.ranks(req)
		changes := w.plan.Access(req, w.now)
		w.apply(changes)
		w.checkOrder(step, req, before, changes)
	case r < 78:
		w.apply(w.plan.Tick(w.now))
	case r < 82:
		n := workNodes[w.rng.Intn(3)]
		w.apply(st.SetNode(n, 50+w.rng.Int63n(450)))
	case r < 86:
		id := w.block()
		w.apply(st.Forget(id))
	case r < 89:
		n, id := workNodes[w.rng.Intn(3)], w.block()
		if st.Drop(n, id) != w.model[n][id] {
			w.t.Fatalf("step %d: drop %s:%d disagrees with the model", step, n, id)
		}
		delete(w.model[n], id)
	case r < 91:
		n := workNodes[w.rng.Intn(3)]
		st.RemoveNode(n)
		w.model[n] = map[uint64]bool{}
		w.apply(st.SetNode(n, 100+w.rng.Int63n(400)))
	case r < 95:
		n, id := workNodes[w.rng.Intn(3)], w.block()
		was := w.model[n][id]
		if w.plan.Adopt(n, id, w.sizes[id]) {
			w.model[n][id] = true
		} else if was {
			w.t.Fatalf("step %d: adopt refused a block already resident", step)
		}
	default:
		var pins []Pin
		for range w.rng.Intn(8) {
			id := w.block()
			pin := Pin{Block: id, Size: w.sizes[id], Replication: 1 + w.rng.Intn(3)}
			for _, i := range w.rng.Perm(3)[:2] {
				pin.Nodes = append(pin.Nodes, workNodes[i])
			}
			pins = append(pins, pin)
		}
		st.SetPins(pins)
	}
}

// apply checks each change against the model and applies it.
func (w *workload) apply(changes []Change) {
	w.t.Helper()
	for _, c := range changes {
		m := w.model[c.Node]
		if m == nil {
			w.t.Fatalf("change %v on a node without capacity", c)
		}
		switch {
		case c.Cache && m[c.Block]:
			w.t.Fatalf("%v: block cached twice on one node", c)
		case !c.Cache && !m[c.Block]:
			w.t.Fatalf("%v: uncache of a block that is not resident", c)
		}
		if c.Cache {
			m[c.Block] = true
		} else {
			delete(m, c.Block)
		}
	}
}

// compare checks that the plan's resident sets are the model's.
func (w *workload) compare(step int) {
	st := w.plan.State()
	for n, m := range w.model {
		res := st.Resident(n)
		if len(res) != len(m) {
			w.t.Fatalf("step %d: %s resident %v, changes said %v", step, n, res, m)
		}
		for _, id := range res {
			if !m[id] {
				w.t.Fatalf("step %d: %s resident %v, changes said %v", step, n, res, m)
			}
		}
	}
}

// rank is a block's place in a policy's eviction order: lower goes first;
// only candidates may be evicted at all.
type rank struct {
	candidate bool
	expired   bool // ca: idle for TTL, evicted whatever its rank
	key       float64
	last      time.Time
	id        uint64
}

func (a rank) before(b rank) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	if !a.last.Equal(b.last) {
		return a.last.Before(b.last)
	}
	return a.id < b.id
}

// ranks computes, before an access, the eviction rank of every block
// resident on the access's node under the policy's rule.
func (w *workload) ranks(req Request) map[uint64]rank {
	st := w.plan.State()
	out := map[uint64]rank{}
	bgU := st.Goodness(req.Block, w.now) + req.Affinity
	for _, id := range st.Resident(req.Node) {
		last := st.LastAccess(id)
		r := rank{candidate: true, last: last.At, id: id}
		switch w.plan.Name() {
		case "ca":
			r.expired = w.now.Sub(last.At) >= 7*time.Minute
			r.key = last.Affinity
			r.candidate = r.expired || last.Affinity < req.Affinity
		case "bg":
			r.key = st.Goodness(id, w.now)
			r.candidate = r.key < bgU
		}
		out[id] = r
	}
	return out
}

// checkOrder checks that an access evicted only candidates, and none
// ranked after a candidate that stayed.
func (w *workload) checkOrder(step int, req Request, before map[uint64]rank, changes []Change) {
	if w.plan.Name() == "none" || w.plan.Name() == "pinned" {
		if len(changes) > 0 {
			w.t.Fatalf("step %d: %s changed the cache on an access: %v", step, w.plan.Name(), changes)
		}
		return
	}
	evicted := map[uint64]bool{}
	for _, c := range changes {
		if c.Cache {
			if c.Block != req.Block || c.Node != req.Node {
				w.t.Fatalf("step %d: access to %d on %s cached %v", step, req.Block, req.Node, c)
			}
			continue
		}
		r, ok := before[c.Block]
		if c.Node != req.Node || !ok || !r.candidate {
			w.t.Fatalf("step %d: access to %d on %s evicted %v, not a candidate (%+v)", step, req.Block, req.Node, c, r)
		}
		evicted[c.Block] = true
	}
	for id, kept := range before {
		if evicted[id] || !kept.candidate || kept.expired {
			continue
		}
		for e := range evicted {
			if ev := before[e]; !ev.expired && kept.before(ev) {
				w.t.Fatalf("step %d: evicted %d (%+v) but kept %d (%+v) that ranks before it", step, e, ev, id, kept)
			}
		}
	}
}
