package pipeline

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"smarth/internal/rpc/dfspb"
)

// Handoff is the event on the current block's pipeline after which the
// writer may ask the namenode for the next block.
type Handoff int

const (
	// AllAcked: every node of the pipeline acked the block's last packet
	// (HDFS's stop-and-wait between blocks).
	AllAcked Handoff = iota
	// FirstNodeFinished: the first datanode sent FIRST_NODE_FINISH_ACK;
	// the pipeline keeps forwarding and acking in the background.
	FirstNodeFinished
	// Queued: the block's last packet is queued on its pipeline, whose own
	// sender writes it out; the next block starts on another first
	// datanode at once, so several first hops share the client's NIC.
	Queued
)

// Strategy is the write-path policy of one file: what the datanodes are
// told, when the next block may start and how many pipelines may be open.
// It makes decisions only; Stream does the I/O.
type Strategy interface {
	// Name is the --write-mode name.
	Name() string
	// Mode goes into WriteBlockOp.mode.
	Mode() dfspb.WriteMode
	// Handoff is when the next block may start.
	Handoff() Handoff
	// MaxOpen is how many pipelines the file may have open at once, given
	// the live datanodes and the file's replication.
	MaxOpen(live, replication int) int
	// Window is the most unacknowledged packets one pipeline may hold,
	// given how many packets make a full block.
	Window(blockPackets int) int
	// Order reorders the targets the namenode chose before connecting.
	Order(targets []*dfspb.DatanodeInfo, speeds Speeds) []*dfspb.DatanodeInfo
}

// Speeds is what this client measured to each datanode, bytes per second
// by datanode id; ok is false for a node never measured.
type Speeds interface {
	Speed(datanodeID string) (bytesPerSec float64, ok bool)
}

// Options tune the strategies.
type Options struct {
	Window         int     // classic in-flight packets (HDFS: 80)
	MaxPipelines   int     // multi: cap on open pipelines beyond live/replication
	LocalThreshold float64 // multi: Algorithm 2 threshold (0.8)
	Rand           *rand.Rand
}

// Strategies are the write modes by name.
var Strategies = map[string]func(Options) Strategy{
	"classic":       func(o Options) Strategy { return &Classic{window: o.Window} },
	"multipipeline": func(o Options) Strategy { return NewMulti(o) },
	"multipipeline-paper": func(o Options) Strategy {
		m := NewMulti(o)
		m.name, m.remeasureAfter = "multipipeline-paper", 0
		return m
	},
	"multipipeline-concurrent": func(o Options) Strategy {
		m := NewMulti(o)
		m.name = "multipipeline-concurrent"
		return &Concurrent{Multi: m}
	},
}

// ModeNames lists the write modes in a stable order, for help and errors.
func ModeNames() []string {
	return slices.Sorted(maps.Keys(Strategies))
}

// New returns the strategy called name.
func New(name string, o Options) (Strategy, error) {
	mk, ok := Strategies[name]
	if !ok {
		return nil, fmt.Errorf("unknown write mode %q (want one of %s)", name, strings.Join(ModeNames(), ", "))
	}
	return mk(o), nil
}

// Classic is HDFS's write path: one pipeline at a time, a bounded window
// of in-flight packets, and the whole pipeline's ack of a block's last
// packet before the next block is requested.
type Classic struct{ window int }

var _ Strategy = (*Classic)(nil)

func (*Classic) Name() string          { return "classic" }
func (*Classic) Mode() dfspb.WriteMode { return dfspb.WriteMode_CLASSIC }
func (*Classic) Handoff() Handoff      { return AllAcked }
func (*Classic) MaxOpen(int, int) int  { return 1 }
func (c *Classic) Window(int) int {
	if c.window <= 0 {
		return 80
	}
	return c.window
}
func (*Classic) Order(t []*dfspb.DatanodeInfo, _ Speeds) []*dfspb.DatanodeInfo { return t }

// Multi is SMARTH's asynchronous multi-pipeline write (seed 000 section
// III): the next block starts on the first datanode's FNFA, up to
// live/replication pipelines are open, and targets are reordered by the
// client's own speed records (Algorithm 2).
type Multi struct {
	name           string
	maxPipelines   int
	threshold      float64
	remeasureAfter time.Duration // 0: every swap allowed (as printed)
	rnd            *rand.Rand    // owned by one Stream's goroutine
	now            func() time.Time
}

var _ Strategy = (*Multi)(nil)

// NewMulti builds a Multi from o (defaults: threshold 0.8, cap 4).
func NewMulti(o Options) *Multi {
	m := &Multi{name: "multipipeline", maxPipelines: o.MaxPipelines, threshold: o.LocalThreshold,
		remeasureAfter: remeasureAfter, rnd: o.Rand, now: time.Now}
	if m.maxPipelines <= 0 {
		m.maxPipelines = 4
	}
	if m.threshold <= 0 {
		m.threshold = 0.8
	}
	if m.rnd == nil {
		m.rnd = rand.New(rand.NewPCG(1, 2))
	}
	return m
}

// remeasureAfter is how old a speed record must be before Algorithm 2's
// swap in "multipipeline" spends a block on measuring that node again.
const remeasureAfter = 30 * time.Second

func (m *Multi) Name() string        { return m.name }
func (*Multi) Mode() dfspb.WriteMode { return dfspb.WriteMode_MULTI_PIPELINE }
func (*Multi) Handoff() Handoff      { return FirstNodeFinished }

// MaxOpen is n = live / replication (at least 1), capped by memory: each
// open pipeline may hold a block of unacknowledged packets.
func (m *Multi) MaxOpen(live, replication int) int {
	return maxOpen(live, replication, m.maxPipelines)
}

func maxOpen(live, replication, limit int) int {
	if replication < 1 {
		replication = 1
	}
	n := live / replication
	if n < 1 {
		n = 1
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return n
}

// Window is a whole block: the first datanode runs ahead of its
// downstream (its per-client buffer pushes back on the socket), and the
// unacknowledged packets must stay here until the whole pipeline acks
// them in case it has to be recovered.
func (*Multi) Window(blockPackets int) int { return blockPackets + 1 }

func (m *Multi) Order(t []*dfspb.DatanodeInfo, s Speeds) []*dfspb.DatanodeInfo {
	if m.remeasureAfter <= 0 {
		return localOrder(t, s, m.threshold, m.rnd, nil) // as printed
	}
	var due func(string) bool
	if ms, ok := s.(measured); ok {
		now := m.now()
		due = func(id string) bool {
			at, ok := ms.Measured(id)
			return !ok || now.Sub(at) >= m.remeasureAfter
		}
	}
	return hostOrder(t, s, m.threshold, m.rnd, due)
}

// fasterBy is how much faster than the namenode's first target another
// target must have measured for hostOrder to put it first: records of one
// link class differ by a few percent from block to block, and the
// namenode has already chosen among them.
const fasterBy = 1.25

// hostOrder is Algorithm 2 made consistent with a namenode that places by
// the host's records and the topology (speedaware): the namenode's first
// target stays first unless this client measured another target clearly
// faster (an unmeasured target never jumps ahead: the namenode offered it
// first on purpose, or it is a later replica behind a slower link); the
// others keep the namenode's order, which runs the pipeline from the
// writer's rack outwards. The random swap (probability 1-threshold) brings
// forward only a target due for measuring again and in the first target's
// rack, so re-measuring costs at most what a rack-mate costs, never a
// block begun across the client's cross-rack link.
func hostOrder(targets []*dfspb.DatanodeInfo, s Speeds, threshold float64, rnd *rand.Rand, due func(string) bool) []*dfspb.DatanodeInfo {
	out := append([]*dfspb.DatanodeInfo(nil), targets...)
	if len(out) < 2 {
		return out
	}
	speed := func(d *dfspb.DatanodeInfo) (float64, bool) {
		if s == nil {
			return 0, false
		}
		return s.Speed(d.GetId())
	}
	if v0, ok := speed(out[0]); ok {
		best, bestV := 0, v0
		for i := 1; i < len(out); i++ {
			if v, ok := speed(out[i]); ok && v > bestV {
				best, bestV = i, v
			}
		}
		if best > 0 && bestV > v0*fasterBy {
			d := out[best]
			copy(out[1:best+1], out[:best])
			out[0] = d
		}
	}
	if rnd.Float64() < threshold {
		return out
	}
	var cand []int
	for i := 1; i < len(out); i++ {
		if out[i].GetRack() == out[0].GetRack() && (due == nil || due(out[i].GetId())) {
			cand = append(cand, i)
		}
	}
	if len(cand) > 0 {
		i := cand[rnd.IntN(len(cand))]
		out[0], out[i] = out[i], out[0]
	}
	return out
}

// measured is a speed book that knows when it last measured each node.
type measured interface {
	Measured(datanodeID string) (time.Time, bool)
}

// LocalOrder is SMARTH's local optimization (Algorithm 2): sort targets by
// the client's measured speed to each, fastest first, then with
// probability 1-threshold swap the first with a random other target so
// that slow-looking nodes are measured again. It returns a new slice.
//
// The paper does not say where a node without a measurement goes. It goes
// first (several keep the namenode's order): a first position is the only
// way to measure it, and speed-aware placement offers unmeasured nodes
// first for the same reason; behind the measured ones it would never be
// measured except by the random swap.
func LocalOrder(targets []*dfspb.DatanodeInfo, s Speeds, threshold float64, rnd *rand.Rand) []*dfspb.DatanodeInfo {
	return localOrder(targets, s, threshold, rnd, nil)
}

// localOrder is LocalOrder whose swap, when due is set, brings forward only
// a target due for measuring again, and swaps nothing if none is. A record
// measured seconds ago says what a new measurement would: the swap would
// spend a block on a node known to be slower for nothing. Stale records
// are still refreshed, at most once per node per period.
func localOrder(targets []*dfspb.DatanodeInfo, s Speeds, threshold float64, rnd *rand.Rand, due func(string) bool) []*dfspb.DatanodeInfo {
	out := append([]*dfspb.DatanodeInfo(nil), targets...)
	if len(out) < 2 {
		return out
	}
	speed := func(d *dfspb.DatanodeInfo) (float64, bool) {
		if s == nil {
			return 0, false
		}
		return s.Speed(d.GetId())
	}
	sort.SliceStable(out, func(i, j int) bool {
		si, oki := speed(out[i])
		sj, okj := speed(out[j])
		if oki != okj {
			return !oki
		}
		return si > sj
	})
	if r := rnd.Float64(); r >= threshold {
		var idx int
		if due == nil {
			idx = 1 + rnd.IntN(len(out)-1)
		} else {
			var cand []int
			for i := 1; i < len(out); i++ {
				if due(out[i].GetId()) {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				return out
			}
			idx = cand[rnd.IntN(len(cand))]
		}
		out[0], out[idx] = out[idx], out[0]
	}
	return out
}

// oneSlot is Multi when only one pipeline may be open (live datanodes <
// 2 x replication): the next block cannot start before the open pipeline
// drains, so FNFA buys nothing and buffering a whole block on the first
// datanode only adds latency. It writes like Classic on the wire (window,
// stop-and-wait) and keeps Multi's target order (Algorithm 2), so
// multi-pipeline mode is never slower than classic.
type oneSlot struct {
	*Multi
	classic Classic
}

var _ Strategy = (*oneSlot)(nil)

func (o *oneSlot) Mode() dfspb.WriteMode { return o.classic.Mode() }
func (o *oneSlot) Handoff() Handoff      { return o.classic.Handoff() }
func (o *oneSlot) Window(n int) int      { return o.classic.Window(n) }

// Effective is the strategy a stream uses once it knows how many
// pipelines it may open.
func Effective(s Strategy, maxOpen, window int) Strategy {
	if maxOpen > 1 {
		return s
	}
	switch m := s.(type) {
	case *Multi:
		return &oneSlot{Multi: m, classic: Classic{window: window}}
	case *Concurrent:
		return &oneSlot{Multi: m.Multi, classic: Classic{window: window}}
	}
	return s
}

// Concurrent is multi-pipeline writing beyond SMARTH: the client does not
// wait for a block's FIRST_NODE_FINISH_ACK before starting the next one.
// Once a block's packets are all queued (the stream holds at most one
// block per open pipeline, as Multi does), the next block gets its own
// pipeline on another first datanode, and each pipeline's sender writes
// its queue at whatever rate its first hop takes. Where the client's rack
// has fewer datanodes than the client may open pipelines, SMARTH's one
// block at a time leaves the client's rack-mates idle while a block
// crosses the client's own cross-rack link (and the cross-rack link idle
// while a rack-mate absorbs a block); here both run at once, which is what
// the min-cut bound (scenario.IdealOf) counts. The limits stay the
// paper's: n = live / replication pipelines (and the client's cap), a
// datanode in at most one open pipeline, one block buffered per pipeline.
type Concurrent struct{ *Multi }

var _ Strategy = (*Concurrent)(nil)

func (*Concurrent) Handoff() Handoff { return Queued }

// Admitter is a strategy that decides, with a free pipeline slot, whether
// the next block may start now or should wait for a first hop to finish.
type Admitter interface {
	Admit(Admission) bool
}

// Admission is what an Admitter decides on.
type Admission struct {
	// InFlight are the first datanodes of the pipelines whose first hop
	// is still in progress (no FNFA yet).
	InFlight []*dfspb.DatanodeInfo
	// Busy are the datanodes in open pipelines and those this write no
	// longer uses (failed): the namenode will not offer them.
	Busy map[string]bool
	// Speeds are the client's records.
	Speeds Speeds
	// WriterRack is the rack the namenode puts this client in ("" when
	// it places it nowhere, or before the namenode said), and Datanodes
	// the live datanodes with their racks: where records are missing,
	// they say which datanodes are this client's rack-mates.
	WriterRack string
	Datanodes  []*dfspb.DatanodeInfo
}

// slowerThan is the share of the fastest first datanode's record below
// which a datanode counts as behind a slower link (the client's cross-rack
// link, a slow NIC): records of one link class differ by far less.
const slowerThan = 0.6

// Admit implements Admitter. Several blocks in flight pay where first hops
// leave through different links: a rack-mate absorbs a block at the NIC
// rate while another block crosses the client's own cross-rack link. Two
// first hops behind that one link only share it, and each holds a pipeline
// slot and a block of memory twice as long, which can keep the rack-mates
// idle when their pipelines drain. So the next block starts at once while
// no first hop in progress is slow; with one in progress it starts only
// when a fast datanode is free (the namenode offers it first: speedaware
// ranks by the client's records and keeps a second first hop off a link
// already carrying one, mincut keeps first hops on free rack-mates), and
// otherwise waits, like SMARTH, for a first hop to finish.
//
// Fast is what the records say, read with what the namenode says about
// racks. A rack-mate of this client never shares the client's cross-rack
// link, whatever its record: it counts as slow only if it measured below
// slowerThan of the fastest datanode across racks (a slow NIC). Its record
// is no measure of its link when first hops ran side by side: two
// rack-mates and a first hop across racks share the client's NIC, and a
// rack-mate's 64 MiB took 5.9 s there (92 Mbit/s) against 3.1 s for the
// other (175 Mbit/s) in one four-rack upload; read against the fastest
// record it looked slow, and the next block waited 4.3 s for a pipeline
// to finish while it was free. Shared fairly, a rack-mate's share can
// even fall below the cross-rack rate (a 288 Mbit/s NIC, 106 across: 91
// each for two rack-mates beside one first hop across), so it is read
// against that rate with the same margin, not against it alone.
// A datanode across racks is fast when its record is within slowerThan
// of the fastest rack-mate's (a cross-rack link as fast as the NIC), and
// slow while no rack-mate has a record; where the namenode places this
// client in no rack, any datanode is fast within slowerThan of the
// fastest record. A datanode never measured is judged by where it is,
// HDFS's own assumption: a rack-mate is presumed fast, a datanode across
// racks slow. So a new cluster's first upload keeps a block in flight on
// every free rack-mate at once and at most one first hop behind the
// client's cross-rack link; each record replaces the presumption as it
// arrives.
func (c *Concurrent) Admit(a Admission) bool {
	fast := a.fastNodes()
	slow := false
	for _, d := range a.InFlight {
		if !fast(d.GetId(), d.GetRack()) {
			slow = true
		}
	}
	if !slow {
		return true
	}
	for _, id := range knownNodes(a.Speeds) {
		if !a.Busy[id] && fast(id, "") {
			return true
		}
	}
	for _, d := range a.Datanodes {
		if !a.Busy[d.GetId()] && fast(d.GetId(), d.GetRack()) {
			return true
		}
	}
	return false
}

// Pacer is a strategy that may hold a pipeline's sender to what its
// whole pipeline has acknowledged (Classic's window) instead of letting
// the first datanode run ahead of its downstream.
type Pacer interface {
	HoldBack(first *dfspb.DatanodeInfo, a Admission) bool
}

// HoldBack implements Pacer: a fast first hop (a rack-mate's) is held to
// its pipeline's pace while a slow one (behind the client's cross-rack
// link) is in flight beside it. Both leave through the client's NIC. The
// rack-mate's pipeline drains across racks at that link class's rate
// whatever its first hop does, and its datanode takes no other block
// before the pipeline ends, so running ahead of it buys the client
// nothing; it only takes the NIC from the first hop across racks, which
// is the write's slowest path. On the four-rack testbed that hop got 60
// of its 80 Mbit/s while two rack-mates' first hops ran ahead. A held
// pipeline's first-hop time is no measure of its link, so it makes no
// speed record (Stream.holdBackLocked).
func (c *Concurrent) HoldBack(first *dfspb.DatanodeInfo, a Admission) bool {
	fast := a.fastNodes()
	if !fast(first.GetId(), first.GetRack()) {
		return false
	}
	for _, d := range a.InFlight {
		if d.GetId() != first.GetId() && !fast(d.GetId(), d.GetRack()) {
			return true
		}
	}
	return false
}

// known is a speed book that can list the datanodes it has records of.
type known interface {
	Known() []string
}

func knownNodes(s Speeds) []string {
	if k, ok := s.(known); ok {
		return k.Known()
	}
	return nil
}

// fastNodes says whether a datanode is fast (see Admit).
func (a Admission) fastNodes() func(id, rack string) bool {
	s := a.Speeds
	racks := make(map[string]string, len(a.Datanodes))
	for _, d := range a.Datanodes {
		racks[d.GetId()] = d.GetRack()
	}
	best, bestMate, bestAcross := 0.0, 0.0, 0.0
	for _, id := range knownNodes(s) {
		if v, ok := s.Speed(id); ok {
			best = max(best, v)
			switch r := racks[id]; {
			case a.WriterRack == "" || r == "":
			case r == a.WriterRack:
				bestMate = max(bestMate, v)
			default:
				bestAcross = max(bestAcross, v)
			}
		}
	}
	return func(id, rack string) bool {
		if rack == "" {
			rack = racks[id]
		}
		mate := a.WriterRack != "" && rack == a.WriterRack
		v, ok := 0.0, false
		if s != nil {
			v, ok = s.Speed(id)
		}
		switch {
		case !ok:
			return mate
		case mate:
			return v >= slowerThan*bestAcross
		case a.WriterRack != "" && rack != "":
			// Across racks: fast only beside what a rack-mate did.
			return bestMate > 0 && v >= slowerThan*bestMate
		default:
			return best > 0 && v >= slowerThan*best
		}
	}
}
