package blockmap

import (
	"fmt"
	"sort"

	"smarth/internal/namenode/idtable"
)

// State is the life stage of a block.
type State uint8

const (
	// UnderConstruction: being written; its length is not known yet.
	UnderConstruction State = iota + 1
	// Committed: the writer reported its final length; not yet enough
	// replicas confirmed it.
	Committed
	// Complete: committed and at least min_replication replicas finalized
	// with that length (or its file was closed).
	Complete
)

func (s State) String() string {
	switch s {
	case UnderConstruction:
		return "under-construction"
	case Committed:
		return "committed"
	case Complete:
		return "complete"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// ReplicaState is the state of one replica on a datanode.
type ReplicaState uint8

const (
	Finalized ReplicaState = iota + 1
	BeingWritten
	UnderRecovery
)

// FirstBlockID is where block ids start, far from small integers so that a
// block id is never mistaken for something else in logs (HDFS does the same).
const FirstBlockID = 1 << 30

// FirstGS is the first generation stamp handed out.
const FirstGS = 1000

// Block is one block of a file. Fields above the line are persisted by the
// namenode; the rest is rebuilt from reports. A namespace holds millions of
// blocks, so what only a block being written needs is behind a pointer
// that is nil for the others.
type Block struct {
	ID       uint64
	GS       uint64
	NumBytes int64
	FileID   uint64
	Expected int // the file's replication factor
	State    State

	uc       *underConstruction
	replicas []Replica
}

// underConstruction is what a block has only while it is written or
// recovered (HDFS's BlockUnderConstructionFeature).
type underConstruction struct {
	// targets are the datanodes of the block's write pipeline while it is
	// under construction: readers and lease recovery use them before any
	// replica is reported (HDFS's "expected locations").
	targets []string
	// recoveryID is the generation stamp of a lease recovery in progress,
	// 0 when none.
	recoveryID uint64
}

// Targets are the datanodes of the block's write pipeline while it is
// under construction (shared; do not modify).
func (b *Block) Targets() []string {
	if b.uc == nil {
		return nil
	}
	return b.uc.targets
}

// SetTargets replaces the pipeline's datanodes (nil: none).
func (b *Block) SetTargets(t []string) {
	if len(t) == 0 {
		t = nil
		if b.uc == nil {
			return
		}
	}
	if b.uc == nil {
		b.uc = &underConstruction{}
	}
	b.uc.targets = t
	b.dropUC()
}

// RecoveryID is the generation stamp of a lease recovery in progress, 0
// when none.
func (b *Block) RecoveryID() uint64 {
	if b.uc == nil {
		return 0
	}
	return b.uc.recoveryID
}

// SetRecoveryID records (0: clears) a lease recovery in progress.
func (b *Block) SetRecoveryID(id uint64) {
	if id == 0 && b.uc == nil {
		return
	}
	if b.uc == nil {
		b.uc = &underConstruction{}
	}
	b.uc.recoveryID = id
	b.dropUC()
}

func (b *Block) dropUC() {
	if b.uc != nil && b.uc.targets == nil && b.uc.recoveryID == 0 {
		b.uc = nil
	}
}

// Replica is one datanode's copy of a block.
type Replica struct {
	Node     string
	GS       uint64
	NumBytes int64
	State    ReplicaState
	Corrupt  bool
	Reason   string // why it is corrupt
	// BadData is set when a reader or scanner found the data itself bad;
	// unlike a stale stamp or length it sticks until the replica is deleted.
	BadData bool
}

// Reported is a replica as a datanode reports it.
type Reported struct {
	ID       uint64
	GS       uint64
	NumBytes int64
	State    ReplicaState
}

// Verdict says what the namenode should do about a reported replica.
type Verdict uint8

const (
	// Accepted: the replica is recorded.
	Accepted Verdict = iota
	// Unknown: no such block; the datanode should delete its replica.
	Unknown
	// Corrupt: recorded as corrupt; it is deleted once the block has
	// enough good replicas.
	Corrupt
)

// Map is the block table. It is not safe for concurrent use.
type Map struct {
	blocks *idtable.Table[Block] // by id
	byNode map[string]map[uint64]struct{}
	lastID uint64
	lastGS uint64
}

// New returns an empty map whose first block id and stamp are FirstBlockID
// and FirstGS.
func New() *Map {
	return &Map{
		blocks: idtable.New(func(b *Block) uint64 { return b.ID }),
		byNode: map[string]map[uint64]struct{}{},
		lastID: FirstBlockID - 1,
		lastGS: FirstGS - 1,
	}
}

// NextID hands out a new block id.
func (m *Map) NextID() uint64 { m.lastID++; return m.lastID }

// NextGS hands out a new generation stamp.
func (m *Map) NextGS() uint64 { m.lastGS++; return m.lastGS }

// LastID and LastGS are the last values handed out (persisted in images).
func (m *Map) LastID() uint64 { return m.lastID }
func (m *Map) LastGS() uint64 { return m.lastGS }

// Observe raises the counters so that id and gs are never handed out again;
// used when loading persisted state.
func (m *Map) Observe(id, gs uint64) {
	m.lastID = max(m.lastID, id)
	m.lastGS = max(m.lastGS, gs)
}

// Len is the number of blocks.
func (m *Map) Len() int { return m.blocks.Len() }

// Add inserts b; an existing block with the same id is replaced.
func (m *Map) Add(b *Block) {
	if old := m.blocks.Get(b.ID); old != nil && old != b {
		m.Remove(b.ID)
	}
	m.blocks.Put(b)
	m.Observe(b.ID, b.GS)
}

// Get returns the block with the given id, or nil.
func (m *Map) Get(id uint64) *Block { return m.blocks.Get(id) }

// Remove deletes a block and returns the datanodes that held a replica of
// it, which should now delete theirs.
func (m *Map) Remove(id uint64) []Replica {
	b := m.blocks.Get(id)
	if b == nil {
		return nil
	}
	reps := b.replicas
	for _, r := range reps {
		m.unindex(r.Node, id)
	}
	b.replicas = nil
	m.blocks.Delete(id)
	return reps
}

// Range calls fn for every block in no particular order until fn returns
// false. Use it where order does not matter: unlike Each it neither
// allocates nor sorts, which at millions of blocks is most of a walk's
// cost (the namenode's safe-mode count walks every block under its lock
// each monitor tick until safe mode is left). fn must not add or remove
// blocks.
func (m *Map) Range(fn func(*Block) bool) { m.blocks.Range(fn) }

// Each calls fn for every block in increasing id order until fn returns
// false. Sorted order keeps the replication monitor's choices reproducible.
func (m *Map) Each(fn func(*Block) bool) {
	ids := make([]uint64, 0, m.blocks.Len())
	m.blocks.Range(func(b *Block) bool { ids = append(ids, b.ID); return true })
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if b := m.blocks.Get(id); b != nil && !fn(b) {
			return
		}
	}
}

// Replicas returns a copy of the block's replicas.
func (m *Map) Replicas(id uint64) []Replica {
	b := m.blocks.Get(id)
	if b == nil {
		return nil
	}
	return append([]Replica(nil), b.replicas...)
}

// NodeBlocks returns the ids of the blocks a datanode holds a replica of.
func (m *Map) NodeBlocks(node string) []uint64 {
	set := m.byNode[node]
	ids := make([]uint64, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// NodeBlockCount is the number of replicas on a datanode.
func (m *Map) NodeBlockCount(node string) int { return len(m.byNode[node]) }

func (m *Map) index(node string, id uint64) {
	set := m.byNode[node]
	if set == nil {
		set = map[uint64]struct{}{}
		m.byNode[node] = set
	}
	set[id] = struct{}{}
}

func (m *Map) unindex(node string, id uint64) {
	if set := m.byNode[node]; set != nil {
		delete(set, id)
		if len(set) == 0 {
			delete(m.byNode, node)
		}
	}
}

func (b *Block) replica(node string) *Replica {
	for i := range b.replicas {
		if b.replicas[i].Node == node {
			return &b.replicas[i]
		}
	}
	return nil
}

// judge marks r corrupt if it contradicts a committed block: a finalized
// replica must have the block's stamp and length; a replica still being
// written must not be older than the block.
func (b *Block) judge(r *Replica) {
	if r.Corrupt || b.State == UnderConstruction {
		return
	}
	switch {
	case r.GS < b.GS:
		r.Corrupt, r.Reason = true, fmt.Sprintf("generation stamp %d older than the block's %d", r.GS, b.GS)
	case r.State == Finalized && r.GS != b.GS:
		r.Corrupt, r.Reason = true, fmt.Sprintf("generation stamp %d, block has %d", r.GS, b.GS)
	case r.State == Finalized && r.NumBytes != b.NumBytes:
		r.Corrupt, r.Reason = true, fmt.Sprintf("length %d, block has %d", r.NumBytes, b.NumBytes)
	}
}

// AddReplica records a replica reported by node and says what to do about
// it. A replica already known corrupt stays corrupt until it is removed.
func (m *Map) AddReplica(node string, rep Reported) Verdict {
	b := m.blocks.Get(rep.ID)
	if b == nil {
		return Unknown
	}
	r := b.replica(node)
	if r == nil {
		b.replicas = append(b.replicas, Replica{Node: node})
		r = &b.replicas[len(b.replicas)-1]
		m.index(node, b.ID)
	}
	r.GS, r.NumBytes, r.State = rep.GS, rep.NumBytes, rep.State
	if !r.BadData {
		r.Corrupt, r.Reason = false, ""
		b.judge(r)
	}
	if r.Corrupt {
		return Corrupt
	}
	return Accepted
}

// RemoveReplica forgets node's replica of block id (deleted, or its node
// died). It reports whether there was one.
func (m *Map) RemoveReplica(node string, id uint64) bool {
	b := m.blocks.Get(id)
	if b == nil {
		return false
	}
	for i := range b.replicas {
		if b.replicas[i].Node == node {
			b.replicas = append(b.replicas[:i], b.replicas[i+1:]...)
			m.unindex(node, id)
			return true
		}
	}
	return false
}

// RemoveNode forgets every replica on node and returns the affected blocks.
func (m *Map) RemoveNode(node string) []uint64 {
	ids := m.NodeBlocks(node)
	for _, id := range ids {
		m.RemoveReplica(node, id)
	}
	delete(m.byNode, node)
	return ids
}

// MarkCorrupt records that node's replica of block id is bad (a reader or
// the datanode's scanner found a checksum error). A node with no known
// replica gets a corrupt entry, so that whatever it has gets deleted.
// It returns false if the block does not exist.
func (m *Map) MarkCorrupt(id uint64, node, reason string) bool {
	b := m.blocks.Get(id)
	if b == nil {
		return false
	}
	r := b.replica(node)
	if r == nil {
		b.replicas = append(b.replicas, Replica{Node: node, GS: b.GS, State: Finalized})
		r = &b.replicas[len(b.replicas)-1]
		m.index(node, id)
	}
	r.Corrupt, r.Reason, r.BadData = true, reason, true
	return true
}

// Commit records the writer's final generation stamp and length for a block
// and re-judges the replicas reported so far against them.
func (m *Map) Commit(b *Block, gs uint64, length int64) error {
	if gs < b.GS {
		return fmt.Errorf("block %d: commit with generation stamp %d older than %d", b.ID, gs, b.GS)
	}
	if b.State != UnderConstruction && (b.NumBytes != length || b.GS != gs) {
		return fmt.Errorf("block %d: already committed with length %d (gs %d), not %d (gs %d)", b.ID, b.NumBytes, b.GS, length, gs)
	}
	b.GS, b.NumBytes = gs, length
	m.Observe(b.ID, gs)
	if b.State == UnderConstruction {
		b.State = Committed
	}
	for i := range b.replicas {
		if r := &b.replicas[i]; !r.BadData {
			r.Corrupt, r.Reason = false, ""
			b.judge(r)
		}
	}
	return nil
}

// UpdateUnderConstruction moves a block being written to a new stamp and
// length after a pipeline recovery: replicas not in the new pipeline are
// forgotten (the datanodes report them again if they still have them).
func (m *Map) UpdateUnderConstruction(b *Block, gs uint64, length int64, targets []string) {
	b.GS, b.NumBytes = gs, length
	b.SetTargets(append([]string(nil), targets...))
	m.Observe(b.ID, gs)
	keep := map[string]bool{}
	for _, t := range targets {
		keep[t] = true
	}
	for _, r := range append([]Replica(nil), b.replicas...) {
		if !keep[r.Node] {
			m.RemoveReplica(r.Node, b.ID)
		}
	}
}

// Counts summarises a block's replicas.
type Counts struct {
	Live    int // finalized, right stamp and length, on a live node, not corrupt
	Corrupt int // corrupt, on a live node
	Writing int // being written or recovered, on a live node
}

// Count classifies b's replicas; live says whether a datanode is alive.
func (b *Block) Count(live func(node string) bool) Counts {
	var c Counts
	for _, r := range b.replicas {
		if !live(r.Node) {
			continue
		}
		switch {
		case r.Corrupt:
			c.Corrupt++
		case r.State == Finalized && r.GS == b.GS && (b.State == UnderConstruction || r.NumBytes == b.NumBytes):
			c.Live++
		default:
			c.Writing++
		}
	}
	return c
}

// ReplicaList returns a copy of b's replicas.
func (b *Block) ReplicaList() []Replica { return append([]Replica(nil), b.replicas...) }

// Good lists the nodes with a live, good replica of b.
func (b *Block) Good(live func(node string) bool) []string {
	var out []string
	for _, r := range b.replicas {
		if live(r.Node) && !r.Corrupt && r.State == Finalized && r.GS == b.GS && (b.State == UnderConstruction || r.NumBytes == b.NumBytes) {
			out = append(out, r.Node)
		}
	}
	return out
}

// TryComplete makes a committed block complete once at least minLive good
// replicas are on live nodes, and reports whether it is complete.
func (b *Block) TryComplete(minLive int, live func(string) bool) bool {
	if b.State == Complete {
		return true
	}
	if b.State != Committed || b.Count(live).Live < minLive {
		return false
	}
	b.State = Complete
	return true
}

// ReportResult is what a full block report changed.
type ReportResult struct {
	Invalidate []Reported // replicas of unknown blocks: the datanode should delete them
	Corrupt    []uint64   // blocks with a replica judged corrupt on this node
	Removed    []uint64   // blocks the node no longer reports
	Added      []uint64   // blocks newly or again reported
}

// ProcessReport replaces everything known about node's replicas with a full
// report.
func (m *Map) ProcessReport(node string, reported []Reported) ReportResult {
	var res ReportResult
	seen := make(map[uint64]bool, len(reported))
	for _, rep := range reported {
		seen[rep.ID] = true
		switch m.AddReplica(node, rep) {
		case Unknown:
			res.Invalidate = append(res.Invalidate, rep)
		case Corrupt:
			res.Corrupt = append(res.Corrupt, rep.ID)
		default:
			res.Added = append(res.Added, rep.ID)
		}
	}
	for _, id := range m.NodeBlocks(node) {
		if !seen[id] {
			m.RemoveReplica(node, id)
			res.Removed = append(res.Removed, id)
		}
	}
	return res
}
