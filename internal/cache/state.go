package cache

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// Request is one access that asks for a block to be cached.
type Request struct {
	Block    uint64
	Size     int64  // block length in bytes
	Node     string // datanode id the block should be cached on
	App      string
	Affinity float64 // the app's cache affinity, CA in [0,1]
}

// Change is one command for a datanode: cache a block, or uncache it.
type Change struct {
	Node  string
	Block uint64
	Cache bool // false: uncache
}

func (c Change) String() string {
	if c.Cache {
		return fmt.Sprintf("+%s:%d", c.Node, c.Block)
	}
	return fmt.Sprintf("-%s:%d", c.Node, c.Block)
}

// Event is one recorded access of a block.
type Event struct {
	App      string
	Affinity float64
	At       time.Time
}

// Pin is a block a cache directive wants in memory (pinned policy).
type Pin struct {
	Block       uint64
	Size        int64
	Replication int      // cached copies wanted; < 1 means 1
	Nodes       []string // live datanodes with a good replica, preferred first
}

// node is one datanode's cache as planned.
type node struct {
	capacity int64
	used     int64
	resident map[uint64]bool
}

// block is what the plan knows of one block: its size, where it is
// resident, and its accesses within the window (oldest first).
type block struct {
	size   int64
	on     map[string]bool
	events []Event
	last   Event // the latest access ever recorded (kept after the window drops it)
}

// State is the shared state of every policy. Policies change residency
// only through admit and evict, which keep the invariants: used equals the
// sum of resident sizes, used never exceeds capacity, a block is at most
// once on a node.
type State struct {
	window    time.Duration
	nodes     map[string]*node
	blocks    map[uint64]*block
	pins      map[uint64]Pin
	evictions int64
}

// NewState returns an empty state that keeps access events for window.
func NewState(window time.Duration) *State {
	return &State{window: window, nodes: map[string]*node{}, blocks: map[uint64]*block{}, pins: map[uint64]Pin{}}
}

func (s *State) blockOf(id uint64) *block {
	b := s.blocks[id]
	if b == nil {
		b = &block{on: map[string]bool{}}
		s.blocks[id] = b
	}
	return b
}

// maxBlockEvents bounds one block's events in the window: accesses come
// from callers (a map task per read), so a loop of them would otherwise
// grow the namenode without bound for the whole window. A real block sees
// one access per map task that reads it, far fewer in 30 minutes; past
// the bound the oldest go, so a block that hot stays the hottest.
const maxBlockEvents = 4096

// record adds an access event and keeps only those inside the window (and
// at most maxBlockEvents of them).
func (s *State) record(r Request, now time.Time) {
	b := s.blockOf(r.Block)
	if r.Size > 0 {
		b.size = r.Size
	}
	ev := Event{App: r.App, Affinity: r.Affinity, At: now}
	if len(b.events) >= maxBlockEvents {
		b.events = append(b.events[:0], b.events[len(b.events)-maxBlockEvents+1:]...)
	}
	b.events = append(b.events, ev)
	b.last = ev
	s.pruneBlock(b, now)
}

// pruneBlock drops events older than the window
// (removeAccessedEventOutsideMovingWindow of Algorithm 2).
func (s *State) pruneBlock(b *block, now time.Time) {
	cut := now.Add(-s.window)
	i := 0
	for i < len(b.events) && b.events[i].At.Before(cut) {
		i++
	}
	if i > 0 {
		b.events = append(b.events[:0], b.events[i:]...)
	}
}

// prune drops old events everywhere and forgets blocks nothing refers to.
func (s *State) prune(now time.Time) {
	for id, b := range s.blocks {
		s.pruneBlock(b, now)
		if len(b.events) == 0 && len(b.on) == 0 {
			if _, pinned := s.pins[id]; !pinned {
				delete(s.blocks, id)
			}
		}
	}
}

// fits says whether size more bytes fit on the node now.
func (s *State) fits(nodeID string, size int64) bool {
	n := s.nodes[nodeID]
	return n != nil && n.used+size <= n.capacity
}

// admit makes a block resident on a node; the caller checked fits.
func (s *State) admit(nodeID string, id uint64) Change {
	n, b := s.nodes[nodeID], s.blockOf(id)
	if n.resident[id] {
		panic(fmt.Sprintf("cache: block %d admitted twice on %s", id, nodeID))
	}
	if n.used+b.size > n.capacity {
		panic(fmt.Sprintf("cache: block %d (%d bytes) does not fit on %s (%d of %d used)", id, b.size, nodeID, n.used, n.capacity))
	}
	n.resident[id] = true
	n.used += b.size
	b.on[nodeID] = true
	return Change{Node: nodeID, Block: id, Cache: true}
}

// remove makes a block non-resident on a node; reports whether it was.
func (s *State) remove(nodeID string, id uint64) bool {
	n, b := s.nodes[nodeID], s.blocks[id]
	if n == nil || b == nil || !n.resident[id] {
		return false
	}
	delete(n.resident, id)
	delete(b.on, nodeID)
	n.used -= b.size
	return true
}

// evict removes a resident block to make room and counts it.
func (s *State) evict(nodeID string, id uint64) Change {
	if !s.remove(nodeID, id) {
		panic(fmt.Sprintf("cache: evict of block %d not resident on %s", id, nodeID))
	}
	s.evictions++
	return Change{Node: nodeID, Block: id}
}

// admitEvicting caches id on the node, evicting victims in the given order
// until it fits. If it cannot fit even with every victim gone, nothing is
// evicted and nil is returned: a half-made room helps nobody.
func (s *State) admitEvicting(nodeID string, id uint64, victims []uint64) []Change {
	n := s.nodes[nodeID]
	size := s.blockOf(id).size
	if n == nil || size > n.capacity || n.resident[id] {
		return nil
	}
	free, k := n.capacity-n.used, 0
	for free < size && k < len(victims) {
		free += s.blocks[victims[k]].size
		k++
	}
	if free < size {
		return nil
	}
	var out []Change
	for _, v := range victims[:k] {
		out = append(out, s.evict(nodeID, v))
	}
	return append(out, s.admit(nodeID, id))
}

// SetNode adds a datanode or changes its capacity. If the capacity shrank
// below what is resident, the least recently accessed blocks are uncached.
func (s *State) SetNode(id string, capacity int64) []Change {
	n := s.nodes[id]
	if n == nil {
		n = &node{resident: map[uint64]bool{}}
		s.nodes[id] = n
	}
	n.capacity = max(capacity, 0)
	var out []Change
	for _, v := range s.byLastAccess(id, nil) {
		if n.used <= n.capacity {
			break
		}
		out = append(out, s.evict(id, v))
	}
	return out
}

// RemoveNode forgets a datanode and everything planned on it: it died or
// restarted, so its memory cache is empty.
func (s *State) RemoveNode(id string) {
	for b := range s.nodes[id].residentSet() {
		delete(s.blocks[b].on, id)
	}
	delete(s.nodes, id)
}

func (n *node) residentSet() map[uint64]bool {
	if n == nil {
		return nil
	}
	return n.resident
}

// Drop forgets that a block is resident on a node, without a command: the
// datanode does not hold it (caching failed, the replica went bad).
func (s *State) Drop(nodeID string, id uint64) bool { return s.remove(nodeID, id) }

// Forget removes a block everywhere (deleted): the uncache commands for
// the nodes that hold it, and its access history.
func (s *State) Forget(id uint64) []Change {
	b := s.blocks[id]
	if b == nil {
		return nil
	}
	var out []Change
	for _, n := range s.On(id) {
		s.remove(n, id)
		out = append(out, Change{Node: n, Block: id})
	}
	delete(s.blocks, id)
	delete(s.pins, id)
	return out
}

// SetPins replaces the blocks the cache directives want.
func (s *State) SetPins(pins []Pin) {
	s.pins = make(map[uint64]Pin, len(pins))
	for _, p := range pins {
		p.Replication = max(p.Replication, 1)
		s.pins[p.Block] = p
		if p.Size > 0 {
			s.blockOf(p.Block).size = p.Size
		}
	}
}

// ---------------------------------------------------------------- views

// Nodes lists the datanodes with a known capacity, sorted.
func (s *State) Nodes() []string {
	return slices.Sorted(maps.Keys(s.nodes))
}

// Capacity and Used are a node's planned cache bytes.
func (s *State) Capacity(nodeID string) int64 {
	if n := s.nodes[nodeID]; n != nil {
		return n.capacity
	}
	return 0
}

func (s *State) Used(nodeID string) int64 {
	if n := s.nodes[nodeID]; n != nil {
		return n.used
	}
	return 0
}

// Resident lists the blocks planned on a node, sorted.
func (s *State) Resident(nodeID string) []uint64 {
	n := s.nodes[nodeID]
	if n == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(n.resident))
}

// IsResident says whether a block is planned on a node.
func (s *State) IsResident(nodeID string, id uint64) bool {
	n := s.nodes[nodeID]
	return n != nil && n.resident[id]
}

// On lists the nodes a block is planned on, sorted.
func (s *State) On(id uint64) []string {
	b := s.blocks[id]
	if b == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(b.on))
}

// Planned says whether a block is planned on any node (Alg. 2, line 5:
// "already cached in some node"), without building the sorted list On does.
func (s *State) Planned(id uint64) bool {
	b := s.blocks[id]
	return b != nil && len(b.on) > 0
}

// Size is a block's size as last recorded (0 if unknown).
func (s *State) Size(id uint64) int64 {
	if b := s.blocks[id]; b != nil {
		return b.size
	}
	return 0
}

// LastAccess is the latest access of a block (zero Event if none).
func (s *State) LastAccess(id uint64) Event {
	if b := s.blocks[id]; b != nil {
		return b.last
	}
	return Event{}
}

// Goodness is BG(b) at now: sum over the accesses within the window of
// the accessing app's CA (one term per access, so CA_app x count_app).
func (s *State) Goodness(id uint64, now time.Time) float64 {
	b := s.blocks[id]
	if b == nil {
		return 0
	}
	// Counted without pruning, so a look at a later time (a stats page)
	// cannot drop events an earlier-stamped call still needs.
	cut := now.Add(-s.window)
	bg := 0.0
	for _, e := range b.events {
		if !e.At.Before(cut) {
			bg += e.Affinity
		}
	}
	return bg
}

// Events returns a block's access events within the window at the last
// prune, oldest first. The caller must not modify them.
func (s *State) Events(id uint64) []Event {
	if b := s.blocks[id]; b != nil {
		return b.events
	}
	return nil
}

// Evictions counts blocks uncached by a policy to make room or on expiry.
func (s *State) Evictions() int64 { return s.evictions }

// byLastAccess lists a node's resident blocks that pass keep (nil: all),
// least recently accessed first, ties by block id.
func (s *State) byLastAccess(nodeID string, keep func(uint64) bool) []uint64 {
	var out []uint64
	for _, id := range s.Resident(nodeID) {
		if keep == nil || keep(id) {
			out = append(out, id)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return s.blocks[out[i]].last.At.Before(s.blocks[out[j]].last.At)
	})
	return out
}
