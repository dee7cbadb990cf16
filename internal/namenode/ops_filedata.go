package namenode

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// The edit-log side of append, truncate and concat: how each record is
// encoded and what applying it does to the tree and the block map, live
// and on replay alike (filedata.go has the RPCs).

func isFileDataOp(k opKind) bool { return k >= opAppend && k <= opConcat }

func encodeFileDataOp(e *enc, o *editOp) {
	switch o.Kind {
	case opAppend:
		e.s(o.Path)
		e.s(o.Client)
		e.s(o.Host)
		e.i(o.Now)
		// The appending user, last so that records written before it
		// was kept still decode (they end after the time).
		e.s(o.User)
	case opTruncate:
		e.s(o.Path)
		e.i(o.NewLength)
		e.s(o.Client)
		e.s(o.Host)
		e.i(o.Now)
		if o.Block.ID != 0 {
			// Copy-on-truncate: the new last block's id and stamp. Only
			// then, so that other truncate records keep their layout.
			encRef(e, o.Block)
		}
	case opConcat:
		e.s(o.Path)
		e.u(uint64(len(o.Srcs)))
		for _, s := range o.Srcs {
			e.s(s)
		}
		e.i(o.Now)
	}
}

func decodeFileDataOp(d *dec, o *editOp) {
	switch o.Kind {
	case opAppend:
		o.Path, o.Client, o.Host, o.Now = d.s(), d.s(), d.s(), d.i()
		if d.err == nil && len(d.b) > 0 {
			o.User = d.s()
		}
	case opTruncate:
		o.Path, o.NewLength, o.Client, o.Host, o.Now = d.s(), d.i(), d.s(), d.s(), d.i()
		if d.err == nil && len(d.b) > 0 {
			o.Block = decRef(d)
		}
	case opConcat:
		o.Path = d.s()
		n := d.count(1) // each source takes at least its length byte
		for i := 0; i < n && d.err == nil; i++ {
			o.Srcs = append(o.Srcs, d.s())
		}
		o.Now = d.i()
	}
}

func (s *fsState) applyFileDataOp(o *editOp, c namespace.Caller) (applied, error) {
	switch o.Kind {
	case opAppend:
		return s.applyAppend(o, c)
	case opTruncate:
		return s.applyTruncate(o, c)
	default: // opConcat
		f, err := s.tree.Concat(c, o.Path, o.Srcs, o.Now)
		return applied{file: f}, err
	}
}

// applyAppend reopens a closed file for o.Client. A partial last block
// becomes a block being written again, at its current stamp and length:
// the writer bumps the stamp (updateBlockForPipeline) and reopens the
// replicas before sending more. As in HDFS, the space quota is charged for
// the rest of that block at once (a block being written counts at the full
// block size).
func (s *fsState) applyAppend(o *editOp, c namespace.Caller) (applied, error) {
	f, err := s.tree.CheckAppend(c, o.Path)
	if err != nil {
		return applied{}, err
	}
	w := namespace.Writer{Client: o.Client, Host: o.Host, User: o.User}
	if last := partialLastBlock(f); last != nil {
		// Saturated, as DiskCharge (see namespace.Space).
		delta := namespace.Space(f.BlockSize(), f.Replication()) - namespace.Space(max(last.NumBytes, 0), f.Replication())
		if err := s.tree.CheckSpace("append", f, delta); err != nil {
			return applied{}, err
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
	return applied{file: f}, nil
}

// partialLastBlock is f's last block if an append continues it (shorter
// than the block size), else nil.
func partialLastBlock(f *namespace.INode) *blockmap.Block {
	if n := len(f.Blocks); n > 0 && f.Blocks[n-1].NumBytes < f.BlockSize() {
		return f.Blocks[n-1]
	}
	return nil
}

// applyTruncate cuts a closed file to o.NewLength. Blocks past the new end
// are dropped (their replicas deleted). On a block boundary that is all;
// otherwise the block holding the new end is kept with its new length and
// becomes a block being written again, and the file stays open with the
// namenode itself as its writer (recoveryHolder) until the datanodes have
// cut the replicas (truncate recovery: the live caller starts it, and
// lease checks restart it after a namenode restart). The recovery holder
// as the file's writer is what marks the block as being truncated rather
// than written: see truncatingLocked.
//
// When a snapshot holds the block the new end falls in, the block is not
// cut but copied (HDFS's copy-on-truncate): the file's last block becomes
// a new block (o.Block: id and stamp the live caller allocated, so that
// replay makes the same one) of the new length, the writer records the
// old block as its CopySource, and recovery copies the old replicas'
// prefix into replicas of the new block. The old block stays in the block
// map, unchanged, for the snapshot.
func (s *fsState) applyTruncate(o *editOp, c namespace.Caller) (applied, error) {
	f, err := s.tree.CheckTruncate(c, o.Path, o.NewLength)
	if err != nil {
		return applied{}, err
	}
	if o.NewLength == f.Length() {
		return applied{file: f}, nil
	}
	copyBlock := s.tree.CopyOnTruncate(f, o.NewLength)
	switch {
	case copyBlock && o.Block.ID == 0:
		return applied{}, fmt.Errorf("truncate %s: the cut block is in a snapshot, but the record names no new block for the copy", f.Path())
	case copyBlock && s.blocks.Get(o.Block.ID) != nil:
		return applied{}, fmt.Errorf("truncate %s: new block %d of the copy already exists", f.Path(), o.Block.ID)
	case o.Block.ID != 0:
		s.blocks.Observe(o.Block.ID, o.Block.GS) // never hand them out again
	}
	before := namespace.DiskCharge(f)
	keep, cut, within := namespace.TruncatePoint(f, o.NewLength)
	res := applied{file: f}
	if cut {
		res.dropped = s.tree.TruncateBlocks(f, keep+1)
		w := namespace.Writer{Client: recoveryHolder, Host: o.Host}
		b := f.Blocks[keep]
		if copyBlock {
			w.CopySource = namespace.AppendedBlock{ID: b.ID, GS: b.GS, NumBytes: b.NumBytes}
			nb := &blockmap.Block{ID: o.Block.ID, GS: o.Block.GS, FileID: f.ID, Expected: f.Replication()}
			s.blocks.Add(nb)
			f.Blocks[keep] = nb
			b = nb
		}
		b.NumBytes, b.State = within, blockmap.UnderConstruction
		b.SetRecoveryID(0)
		b.SetTargets(nil)
		s.tree.ReopenFile(f, w)
	} else {
		res.dropped = s.tree.TruncateBlocks(f, keep)
	}
	f.MTime = o.Now
	s.tree.ChargeSpace(f, namespace.DiskCharge(f)-before)
	return res, nil
}

// copySource is the block a copy-on-truncate of f copies from (kept for
// a snapshot), or nil when f is not being truncated that way.
func (s *fsState) copySource(f *namespace.INode) *blockmap.Block {
	if f == nil || f.IsDir() || f.Writer() == nil || f.Writer().CopySource.ID == 0 {
		return nil
	}
	return s.blocks.Get(f.Writer().CopySource.ID)
}

// isCopySource reports whether b is the source of a copy-on-truncate in
// progress: it stays in the block map even if no snapshot holds it any
// more, until the copy is done.
func (s *fsState) isCopySource(b *blockmap.Block) bool {
	f := s.tree.ByID(b.FileID)
	return f != nil && !f.IsDir() && f.Writer() != nil && f.Writer().CopySource.ID == b.ID
}

// releaseCopySource adds f's copy source, if any, to the blocks dropped
// as f closes or goes away: it left the file when the truncate began, so
// only snapshots keep it from here on (apply's keepSnapshotted).
func (s *fsState) releaseCopySource(f *namespace.INode, dropped []*blockmap.Block) []*blockmap.Block {
	if src := s.copySource(f); src != nil {
		dropped = append(dropped, src)
	}
	return dropped
}
