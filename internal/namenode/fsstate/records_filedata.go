package fsstate

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// The edit-log side of append, truncate and concat: how each record is
// encoded and what applying it does to the tree and the block map, live
// and on replay alike (filedata.go has the RPCs).

// Append reopens a closed file for Client (acting for User).
type Append struct {
	Path, Client, Host string
	Now                int64
	User               string
}

func (*Append) Kind() Kind        { return kindAppend }
func (r *Append) SetNow(ms int64) { r.Now = ms }
func (r *Append) owner() string   { return r.User }
func (r *Append) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Client)
	e.s(r.Host)
	e.i(r.Now)
	// The appending user, last so that records written before it was
	// kept still decode (they end after the time).
	e.s(r.User)
}
func (r *Append) decode(d *dec) {
	r.Path, r.Client, r.Host, r.Now = d.s(), d.s(), d.s(), d.i()
	if d.err == nil && len(d.b) > 0 {
		r.User = d.s()
	}
}

// Truncate cuts a closed file to NewLength (see apply).
type Truncate struct {
	Path         string
	NewLength    int64
	Client, Host string
	Now          int64
	// Block is the new last block's id and stamp of a copy-on-truncate,
	// else zero.
	Block BlockRef
}

func (*Truncate) Kind() Kind        { return kindTruncate }
func (r *Truncate) SetNow(ms int64) { r.Now = ms }
func (r *Truncate) encode(e *enc) {
	e.s(r.Path)
	e.i(r.NewLength)
	e.s(r.Client)
	e.s(r.Host)
	e.i(r.Now)
	if r.Block.ID != 0 {
		// Copy-on-truncate: the new last block's id and stamp. Only
		// then, so that other truncate records keep their layout.
		encRef(e, r.Block)
	}
}
func (r *Truncate) decode(d *dec) {
	r.Path, r.NewLength, r.Client, r.Host, r.Now = d.s(), d.i(), d.s(), d.s(), d.i()
	if d.err == nil && len(d.b) > 0 {
		r.Block = decRef(d)
		if r.Block.ID == 0 {
			// encode writes the block only for a copy, which has an id.
			d.err = fmt.Errorf("copy-on-truncate block with id 0")
		}
	}
}

// Concat moves the blocks of Srcs, in order, to the end of Path and
// deletes them.
type Concat struct {
	Path string
	Srcs []string
	Now  int64
}

func (*Concat) Kind() Kind        { return kindConcat }
func (r *Concat) SetNow(ms int64) { r.Now = ms }
func (r *Concat) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(len(r.Srcs)))
	for _, s := range r.Srcs {
		e.s(s)
	}
	e.i(r.Now)
}
func (r *Concat) decode(d *dec) {
	r.Path = d.s()
	n := d.count(1) // each source takes at least its length byte
	for i := 0; i < n && d.err == nil; i++ {
		r.Srcs = append(r.Srcs, d.s())
	}
	r.Now = d.i()
}
func (r *Concat) apply(s *State, c namespace.Caller) (Applied, error) {
	f, err := s.tree.Concat(c, r.Path, r.Srcs, r.Now)
	return Applied{File: f}, err
}

// apply reopens a closed file for r.Client. A partial last block
// becomes a block being written again, at its current stamp and length:
// the writer bumps the stamp (updateBlockForPipeline) and reopens the
// replicas before sending more. As in HDFS, the space quota is charged for
// the rest of that block at once (a block being written counts at the full
// block size).
func (r *Append) apply(s *State, c namespace.Caller) (Applied, error) {
	f, err := s.tree.CheckAppend(c, r.Path)
	if err != nil {
		return Applied{}, err
	}
	w := namespace.Writer{Client: r.Client, Host: r.Host, User: r.User}
	if last := partialLastBlock(f); last != nil {
		// Saturated, as DiskCharge (see namespace.Space).
		delta := namespace.Space(f.BlockSize(), f.Replication()) - namespace.Space(max(last.NumBytes, 0), f.Replication())
		if err := s.tree.CheckSpace("append", f, delta); err != nil {
			return Applied{}, err
		}
		before := namespace.DiskCharge(f)
		// Snapshots taken while the append is open hold the block as
		// it is now (see copySubtree).
		w.Appended = namespace.AppendedBlock{ID: last.ID, GS: last.GS, NumBytes: last.NumBytes}
		last.State = blockmap.UnderConstruction
		last.SetRecoveryID(0)
		last.SetTargets(nil)
		s.tree.ChargeSpace(f, namespace.DiskCharge(f)-before)
	}
	s.tree.ReopenFile(f, w)
	return Applied{File: f}, nil
}

// partialLastBlock is f's last block if an append continues it (shorter
// than the block size), else nil.
func partialLastBlock(f *namespace.INode) *blockmap.Block {
	if n := len(f.Blocks); n > 0 && f.Blocks[n-1].NumBytes < f.BlockSize() {
		return f.Blocks[n-1]
	}
	return nil
}

// apply cuts a closed file to r.NewLength. Blocks past the new end
// are dropped (their replicas deleted). On a block boundary that is all;
// otherwise the block holding the new end is kept with its new length and
// becomes a block being written again, and the file stays open with the
// namenode itself as its writer (RecoveryHolder) until the datanodes have
// cut the replicas (truncate recovery: the live caller starts it, and
// lease checks restart it after a namenode restart). The recovery holder
// as the file's writer is what marks the block as being truncated rather
// than written: see truncatingLocked.
//
// When a snapshot holds the block the new end falls in, the block is not
// cut but copied (HDFS's copy-on-truncate): the file's last block becomes
// a new block (r.Block: id and stamp the live caller allocated, so that
// replay makes the same one) of the new length, the writer records the
// old block as its CopySource, and recovery copies the old replicas'
// prefix into replicas of the new block. The old block stays in the block
// map, unchanged, for the snapshot.
func (r *Truncate) apply(s *State, c namespace.Caller) (Applied, error) {
	f, err := s.tree.CheckTruncate(c, r.Path, r.NewLength)
	if err != nil {
		return Applied{}, err
	}
	if r.NewLength == f.Length() {
		return Applied{File: f}, nil
	}
	copyBlock := s.tree.CopyOnTruncate(f, r.NewLength)
	switch {
	case copyBlock && r.Block.ID == 0:
		return Applied{}, fmt.Errorf("truncate %s: the cut block is in a snapshot, but the record names no new block for the copy", f.Path())
	case copyBlock && s.blocks.Get(r.Block.ID) != nil:
		return Applied{}, fmt.Errorf("truncate %s: new block %d of the copy already exists", f.Path(), r.Block.ID)
	case r.Block.ID != 0:
		s.blocks.Observe(r.Block.ID, r.Block.GS) // never hand them out again
	}
	before := namespace.DiskCharge(f)
	keep, cut, within := namespace.TruncatePoint(f, r.NewLength)
	res := Applied{File: f}
	if cut {
		res.Dropped = s.tree.TruncateBlocks(f, keep+1)
		w := namespace.Writer{Client: RecoveryHolder, Host: r.Host}
		b := f.Blocks[keep]
		if copyBlock {
			w.CopySource = namespace.AppendedBlock{ID: b.ID, GS: b.GS, NumBytes: b.NumBytes}
			nb := &blockmap.Block{ID: r.Block.ID, GS: r.Block.GS, FileID: f.ID, Expected: f.Replication()}
			s.blocks.Add(nb)
			f.Blocks[keep] = nb
			b = nb
		}
		b.NumBytes, b.State = within, blockmap.UnderConstruction
		b.SetRecoveryID(0)
		b.SetTargets(nil)
		s.tree.ReopenFile(f, w)
	} else {
		res.Dropped = s.tree.TruncateBlocks(f, keep)
	}
	f.MTime = r.Now
	s.tree.ChargeSpace(f, namespace.DiskCharge(f)-before)
	return res, nil
}

// CopySource is the block a copy-on-truncate of f copies from (kept for
// a snapshot), or nil when f is not being truncated that way.
func (s *State) CopySource(f *namespace.INode) *blockmap.Block {
	if f == nil || f.IsDir() || f.Writer() == nil || f.Writer().CopySource.ID == 0 {
		return nil
	}
	return s.blocks.Get(f.Writer().CopySource.ID)
}

// isCopySource reports whether b is the source of a copy-on-truncate in
// progress: it stays in the block map even if no snapshot holds it any
// more, until the copy is done.
func (s *State) isCopySource(b *blockmap.Block) bool {
	f := s.tree.ByID(b.FileID)
	return f != nil && !f.IsDir() && f.Writer() != nil && f.Writer().CopySource.ID == b.ID
}

// releaseCopySource adds f's copy source, if any, to the blocks dropped
// as f closes or goes away: it left the file when the truncate began, so
// only snapshots keep it from here on (apply's keepSnapshotted).
func (s *State) releaseCopySource(f *namespace.INode, dropped []*blockmap.Block) []*blockmap.Block {
	if src := s.CopySource(f); src != nil {
		dropped = append(dropped, src)
	}
	return dropped
}
