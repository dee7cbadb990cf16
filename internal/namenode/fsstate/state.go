package fsstate

import (
	"fmt"
	"log/slog"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// State is what the edit log and images rebuild: the tree, the block map
// (ids, stamps, lengths, states; not replica locations) and the cache
// pools and directives. It has no lock of its own: the caller serialises
// Apply, ApplyEdit and Image with its reads (the namenode's nn.mu).
type State struct {
	tree   *namespace.Tree
	blocks *blockmap.Map
	cache  *CacheDirs
	// tokens are the delegation tokens renewed or cancelled (tokens.go);
	// tokensPruneAt is the size at which the dead ones are next dropped.
	tokens        map[uint64]int64
	tokensPruneAt int
	// logger takes the warnings of a load (nil: slog.Default()).
	logger *slog.Logger
}

// New is a state over tree and blocks, with no cache pools; logger (nil:
// slog.Default()) takes the warnings of a load.
func New(tree *namespace.Tree, blocks *blockmap.Map, logger *slog.Logger) *State {
	return &State{tree: tree, blocks: blocks, cache: newCacheDirs(), logger: logger}
}

// Tree is the namespace.
func (s *State) Tree() *namespace.Tree { return s.tree }

// Blocks is the block map.
func (s *State) Blocks() *blockmap.Map { return s.blocks }

// Cache is the cache pools and directives.
func (s *State) Cache() *CacheDirs { return s.cache }

// RecoveryHolder is the writer of files the namenode itself is
// recovering, and the holder of their leases (HDFS's "HDFS_NameNode"
// lease holder). A truncate that cuts a block makes it the file's writer.
const RecoveryHolder = "namenode-lease-recovery"

// Applied is what a record changed beyond the tree, for the live caller
// to act on (leases, replica deletion).
type Applied struct {
	File    *namespace.INode   // created / completed / changed file
	Removed []*namespace.INode // files that disappeared (delete, overwrite)
	Dropped []*blockmap.Block  // blocks that left the namespace (and the block map)
	Orphans []Orphan           // their replicas, which the datanodes must delete
	Path    string             // rename: the resulting path; createSnapshot: the snapshot's
	Call    *Call              // the record's call ids, when it came with them (replay)
	// Blocks the record made or restamped (addBlock, a pipeline update, a
	// block recovery's end): a standby applies the replica reports it
	// held for them (namenode/early.go).
	Blocks []uint64
}

// Orphan is a replica of a block that no longer exists.
type Orphan struct {
	Node  string
	Block BlockRef
}

// Apply performs r on the tree and block map. The live path calls it with
// the real caller (permission checks), replay (ApplyEdit) with a trusted
// one: both run the same code, so a follower applying the leader's records
// reaches the leader's state.
func (s *State) Apply(r Record, c namespace.Caller) (Applied, error) {
	call, _ := r.(*Call)
	r = unwrap(r)
	// Block operations change what their file charges against space
	// quotas; the difference is charged once the operation is done.
	var f *namespace.INode
	if b, ok := r.(blockOp); ok {
		if n := s.tree.ByID(b.fileOf(s)); n != nil && !n.IsDir() {
			f = n
		}
	}
	var before int64
	if f != nil {
		before = namespace.DiskCharge(f)
	}
	res, err := r.apply(s, c)
	if f != nil && err == nil {
		s.tree.ChargeSpace(f, namespace.DiskCharge(f)-before)
	}
	res.Call = call
	res.Dropped = s.keepSnapshotted(res.Dropped)
	for _, b := range res.Dropped {
		for _, rep := range s.blocks.Remove(b.ID) {
			res.Orphans = append(res.Orphans, Orphan{Node: rep.Node, Block: BlockRef{ID: b.ID, GS: rep.GS, Len: rep.NumBytes}})
		}
	}
	return res, err
}

// ApplyEdit implements journal.Loader: it decodes one edit-log payload and
// applies it as a trusted caller (acting for the user the record names,
// if any). txid only names the record in warnings.
func (s *State) ApplyEdit(txid uint64, payload []byte) error {
	_, err := s.ReplayEdit(txid, payload)
	return err
}

// ReplayEdit is ApplyEdit returning what the record changed beyond the
// tree: an HA follower applies the leader's records with it and keeps its
// runtime state (leases, the cache plan) in step.
func (s *State) ReplayEdit(txid uint64, payload []byte) (Applied, error) {
	r, err := Decode(payload)
	if err != nil {
		return Applied{}, err
	}
	if c, ok := unwrap(r).(*Create); ok && c.BlockSize > namespace.MaxBlockSize {
		// An older build's create (see cappedBlockSize).
		s.warnCappedBlockSize(fmt.Sprintf("edit txid %d", txid), c.Path, c.BlockSize)
		c.BlockSize = cappedBlockSize
	}
	c := namespace.Caller{Trusted: true}
	if o, ok := unwrap(r).(owned); ok {
		c.User = o.owner()
	}
	res, err := s.Apply(r, c)
	if err != nil {
		return res, fmt.Errorf("%s: %w", r.Kind(), err)
	}
	return res, nil
}

// dropFiles lists the blocks of removed files, to leave the block map.
func (s *State) dropFiles(files []*namespace.INode) []*blockmap.Block {
	var out []*blockmap.Block
	for _, f := range files {
		out = append(out, f.Blocks...)
		out = s.releaseCopySource(f, out)
	}
	return out
}
