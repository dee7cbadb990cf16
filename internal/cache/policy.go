package cache

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// Policy turns accesses and ticks into cache changes on a State.
type Policy interface {
	// Access decides what an access does; the State has recorded it.
	Access(s *State, r Request, now time.Time) []Change
	// Tick runs periodically: expiry (ca), directives (pinned).
	Tick(s *State, now time.Time) []Change
	// Keep says whether a block that a datanode reports cached, though
	// the plan does not hold it there (after a namenode restart, say),
	// may stay. The caller has checked that it fits.
	Keep(s *State, node string, block uint64) bool
}

// Options tune the policies that take them. Zero values take defaults.
type Options struct {
	Window time.Duration // bg's moving window; default 30 min
	TTL    time.Duration // ca's time to live; default 10 min
}

// Default values of Options.
const (
	DefaultWindow = 30 * time.Minute
	DefaultTTL    = 10 * time.Minute
)

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	return o
}

// Policies are the cache policies selectable by name in the namenode's
// configuration ("cache_policy").
var Policies = map[string]func(Options) Policy{
	"none":   func(Options) Policy { return None{} },
	"pinned": func(Options) Policy { return Pinned{} },
	"lru":    func(Options) Policy { return LRU{} },
	"ca":     func(o Options) Policy { return &Affinity{TTL: o.TTL} },
	"bg":     func(Options) Policy { return Goodness{} },
}

// Names lists the policy names in a stable order, for error messages.
func Names() []string { return slices.Sorted(maps.Keys(Policies)) }

// Plan is a State with its Policy: what the namenode holds.
type Plan struct {
	name   string
	state  *State
	policy Policy
}

// New returns an empty plan run by the named policy.
func New(name string, o Options) (*Plan, error) {
	mk, ok := Policies[name]
	if !ok {
		return nil, fmt.Errorf("unknown cache policy %q (known: %v)", name, Names())
	}
	o = o.withDefaults()
	return &Plan{name: name, state: NewState(o.Window), policy: mk(o)}, nil
}

// Name is the policy's name.
func (p *Plan) Name() string { return p.name }

// State is the shared state, for views and for SetNode, RemoveNode, Drop,
// Forget and SetPins.
func (p *Plan) State() *State { return p.state }

// Access records an access and applies the policy.
func (p *Plan) Access(r Request, now time.Time) []Change {
	p.state.record(r, now)
	return p.policy.Access(p.state, r, now)
}

// Tick applies the policy's periodic work and drops old access events.
func (p *Plan) Tick(now time.Time) []Change {
	out := p.policy.Tick(p.state, now)
	p.state.prune(now)
	return out
}

// Adopt makes a block a datanode reports cached resident in the plan if it
// fits and the policy keeps it; else the caller should uncache it.
func (p *Plan) Adopt(nodeID string, id uint64, size int64) bool {
	s := p.state
	if s.IsResident(nodeID, id) {
		return true
	}
	if size > 0 {
		s.blockOf(id).size = size
	}
	if !s.fits(nodeID, s.blockOf(id).size) || !p.policy.Keep(s, nodeID, id) {
		return false
	}
	s.admit(nodeID, id)
	return true
}

// ---------------------------------------------------------------- none

// None never caches.
type None struct{}

var _ Policy = None{}

func (None) Access(*State, Request, time.Time) []Change { return nil }
func (None) Tick(*State, time.Time) []Change            { return nil }
func (None) Keep(*State, string, uint64) bool           { return false }

// ---------------------------------------------------------------- pinned

// Pinned caches what directives name, on replica holders with room, and
// never replaces anything (DL-NR).
type Pinned struct{}

var _ Policy = Pinned{}

// Access never caches: only directives do.
func (Pinned) Access(*State, Request, time.Time) []Change { return nil }

// Tick uncaches blocks no directive wants any more (or copies beyond the
// wanted replication), then caches wanted copies where there is room.
func (Pinned) Tick(s *State, _ time.Time) []Change {
	var out []Change
	for _, n := range s.Nodes() {
		for _, id := range s.Resident(n) {
			pin, ok := s.pins[id]
			if !ok || len(s.blocks[id].on) > pin.Replication {
				s.remove(n, id)
				out = append(out, Change{Node: n, Block: id})
			}
		}
	}
	ids := slices.Sorted(maps.Keys(s.pins))
	for _, id := range ids {
		pin := s.pins[id]
		b := s.blockOf(id)
		for _, n := range pin.Nodes {
			if len(b.on) >= pin.Replication {
				break
			}
			if !s.IsResident(n, id) && s.fits(n, b.size) {
				out = append(out, s.admit(n, id))
			}
		}
	}
	return out
}

// Keep keeps a reported block while its directive wants more copies.
func (Pinned) Keep(s *State, _ string, id uint64) bool {
	pin, ok := s.pins[id]
	return ok && len(s.blocks[id].on) < pin.Replication
}

// ---------------------------------------------------------------- lru

// LRU caches every accessed block and evicts the least recently accessed.
type LRU struct{}

var _ Policy = LRU{}

func (LRU) Access(s *State, r Request, _ time.Time) []Change {
	if s.Planned(r.Block) {
		return nil // cached somewhere: the access refreshed its recency
	}
	return s.admitEvicting(r.Node, r.Block, s.byLastAccess(r.Node, nil))
}

func (LRU) Tick(*State, time.Time) []Change { return nil }

func (LRU) Keep(s *State, _ string, id uint64) bool { return !s.Planned(id) }

// ---------------------------------------------------------------- ca

// Affinity is CL-CA: blocks of low-affinity applications make room for
// those of high-affinity ones; blocks idle for TTL expire.
type Affinity struct {
	TTL time.Duration
}

var _ Policy = (*Affinity)(nil)

func (a *Affinity) Access(s *State, r Request, now time.Time) []Change {
	out := a.expire(s, r.Node, now)
	if s.Planned(r.Block) {
		return out
	}
	aff := s.blocks[r.Block].last.Affinity
	victims := s.byLastAccess(r.Node, func(id uint64) bool { return s.blocks[id].last.Affinity < aff })
	sort.SliceStable(victims, func(i, j int) bool {
		return s.blocks[victims[i]].last.Affinity < s.blocks[victims[j]].last.Affinity
	})
	return append(out, s.admitEvicting(r.Node, r.Block, victims)...)
}

// expire evicts the node's blocks not accessed for TTL.
func (a *Affinity) expire(s *State, nodeID string, now time.Time) []Change {
	var out []Change
	for _, id := range s.byLastAccess(nodeID, nil) {
		if now.Sub(s.blocks[id].last.At) < a.TTL {
			break
		}
		out = append(out, s.evict(nodeID, id))
	}
	return out
}

func (a *Affinity) Tick(s *State, now time.Time) []Change {
	var out []Change
	for _, n := range s.Nodes() {
		out = append(out, a.expire(s, n, now)...)
	}
	return out
}

func (a *Affinity) Keep(s *State, _ string, id uint64) bool { return !s.Planned(id) }

// ---------------------------------------------------------------- bg

// Goodness is CL-BG, Algorithm 2.
type Goodness struct{}

var _ Policy = Goodness{}

func (Goodness) Access(s *State, r Request, now time.Time) []Change {
	if s.Planned(r.Block) { // line 5: already cached in some node
		return nil
	}
	if s.fits(r.Node, s.blocks[r.Block].size) { // line 8
		return []Change{s.admit(r.Node, r.Block)}
	}
	// Lines 11-23: refresh BG of the node's blocks and of u; only blocks
	// with BG below BG_u may go, lowest BG first, oldest access first.
	bgU := s.Goodness(r.Block, now)
	bg := map[uint64]float64{}
	victims := s.byLastAccess(r.Node, func(id uint64) bool {
		bg[id] = s.Goodness(id, now)
		return bg[id] < bgU
	})
	sort.SliceStable(victims, func(i, j int) bool { return bg[victims[i]] < bg[victims[j]] })
	return s.admitEvicting(r.Node, r.Block, victims)
}

func (Goodness) Tick(*State, time.Time) []Change { return nil }

func (Goodness) Keep(s *State, _ string, id uint64) bool { return !s.Planned(id) }
