package fsstate

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// The records of a file's blocks: a writer adding, committing and
// abandoning them, stamps handed out, and lease and block recovery
// closing the file. Each names its file by inode id (the path may have
// been renamed while it was open).

// blockOp is a record that changes the blocks of one file, whose space
// charge State.Apply then updates.
type blockOp interface{ fileOf(s *State) uint64 }

// AddBlock starts a new last block of an open file, committing the
// previous one (Prev) at the length its writer reports.
type AddBlock struct {
	FileID uint64
	Prev   *BlockRef
	Block  BlockRef // the new block's id and stamp
}

func (*AddBlock) Kind() Kind               { return kindAddBlock }
func (r *AddBlock) fileOf(s *State) uint64 { return r.FileID }
func (r *AddBlock) encode(e *enc) {
	e.u(r.FileID)
	e.bool(r.Prev != nil)
	if r.Prev != nil {
		encRef(e, *r.Prev)
	}
	encRef(e, r.Block)
}
func (r *AddBlock) decode(d *dec) {
	r.FileID = d.u()
	if d.bool() {
		p := decRef(d)
		r.Prev = &p
	}
	r.Block = decRef(d)
}
func (r *AddBlock) apply(s *State, _ namespace.Caller) (Applied, error) {
	f, err := s.fileUC(r.FileID)
	if err != nil {
		return Applied{}, err
	}
	if s.blocks.Get(r.Block.ID) != nil {
		// The live path hands out fresh ids; a record reusing one would
		// give two files one block (and an image that cannot load).
		return Applied{}, fmt.Errorf("new block %d of %s already exists", r.Block.ID, f.Path())
	}
	if err := s.tree.CheckSpace("addBlock", f, addBlockCharge(f, r.Prev, s.blocks)); err != nil {
		return Applied{}, err
	}
	if r.Prev != nil {
		prev := s.blocks.Get(r.Prev.ID)
		if prev == nil || f.BlockIndex(prev.ID) < 0 {
			return Applied{}, fmt.Errorf("previous block %d is not in %s", r.Prev.ID, f.Path())
		}
		if err := s.blocks.Commit(prev, r.Prev.GS, r.Prev.Len); err != nil {
			return Applied{}, err
		}
	}
	b := &blockmap.Block{ID: r.Block.ID, GS: r.Block.GS, State: blockmap.UnderConstruction, FileID: f.ID, Expected: f.Replication()}
	s.blocks.Add(b)
	s.tree.AddBlock(f, b)
	return Applied{File: f, Blocks: []uint64{b.ID}}, nil
}

// addBlockCharge is how much an addBlock adds to its file's space charge:
// a whole new block being written, less what committing the previous one
// at its real length gives back (HDFS commits it, then checks).
// Saturated, as DiskCharge (see namespace.Space).
func addBlockCharge(f *namespace.INode, prev *BlockRef, blocks *blockmap.Map) int64 {
	full := namespace.Space(f.BlockSize(), f.Replication())
	delta := full
	if prev != nil {
		if b := blocks.Get(prev.ID); b != nil && b.State == blockmap.UnderConstruction {
			delta = namespace.AddSpace(delta, namespace.Space(max(prev.Len, 0), f.Replication())-full)
		}
	}
	return delta
}

// Complete commits a file's blocks at their final lengths and closes it.
type Complete struct {
	FileID uint64
	Blocks []BlockRef
	Now    int64
}

func (*Complete) Kind() Kind               { return kindComplete }
func (r *Complete) SetNow(ms int64)        { r.Now = ms }
func (r *Complete) fileOf(s *State) uint64 { return r.FileID }
func (r *Complete) encode(e *enc) {
	e.u(r.FileID)
	e.u(uint64(len(r.Blocks)))
	for _, b := range r.Blocks {
		encRef(e, b)
	}
	e.i(r.Now)
}
func (r *Complete) decode(d *dec) {
	r.FileID = d.u()
	n := d.count(3)
	for i := 0; i < n && d.err == nil; i++ {
		r.Blocks = append(r.Blocks, decRef(d))
	}
	r.Now = d.i()
}
func (r *Complete) apply(s *State, _ namespace.Caller) (Applied, error) {
	f, err := s.fileUC(r.FileID)
	if err != nil {
		return Applied{}, err
	}
	for _, ref := range r.Blocks {
		b := s.blocks.Get(ref.ID)
		if b == nil || f.BlockIndex(ref.ID) < 0 {
			return Applied{}, fmt.Errorf("block %d is not in %s", ref.ID, f.Path())
		}
		if err := s.blocks.Commit(b, ref.GS, ref.Len); err != nil {
			return Applied{}, err
		}
	}
	s.closeFile(f, r.Now)
	return Applied{File: f}, nil
}

// AbandonBlock drops an open file's last block (its writer could not
// start a pipeline for it).
type AbandonBlock struct {
	FileID, BlockID uint64
}

func (*AbandonBlock) Kind() Kind               { return kindAbandonBlock }
func (r *AbandonBlock) fileOf(s *State) uint64 { return r.FileID }
func (r *AbandonBlock) encode(e *enc) {
	e.u(r.FileID)
	e.u(r.BlockID)
}
func (r *AbandonBlock) decode(d *dec) { r.FileID, r.BlockID = d.u(), d.u() }
func (r *AbandonBlock) apply(s *State, _ namespace.Caller) (Applied, error) {
	f, err := s.fileUC(r.FileID)
	if err != nil {
		return Applied{}, err
	}
	i := f.BlockIndex(r.BlockID)
	if i < 0 || i != len(f.Blocks)-1 {
		return Applied{}, fmt.Errorf("block %d is not the last block of %s", r.BlockID, f.Path())
	}
	return Applied{File: f, Dropped: s.tree.TruncateBlocks(f, i)}, nil
}

// AllocGS records a generation stamp handed out (pipeline recovery, block
// recovery), so that it is never handed out again.
type AllocGS struct {
	GS uint64
}

func (*AllocGS) Kind() Kind      { return kindAllocGS }
func (r *AllocGS) encode(e *enc) { e.u(r.GS) }
func (r *AllocGS) decode(d *dec) { r.GS = d.u() }
func (r *AllocGS) apply(s *State, _ namespace.Caller) (Applied, error) {
	s.blocks.Observe(0, r.GS)
	return Applied{}, nil
}

// UpdateBlock moves a block being written to a new stamp and length
// (updatePipeline).
type UpdateBlock struct {
	Block BlockRef
}

func (*UpdateBlock) Kind() Kind { return kindUpdateBlock }
func (r *UpdateBlock) fileOf(s *State) uint64 {
	if b := s.blocks.Get(r.Block.ID); b != nil {
		return b.FileID
	}
	return 0
}
func (r *UpdateBlock) encode(e *enc) { encRef(e, r.Block) }
func (r *UpdateBlock) decode(d *dec) { r.Block = decRef(d) }
func (r *UpdateBlock) apply(s *State, _ namespace.Caller) (Applied, error) {
	b := s.blocks.Get(r.Block.ID)
	if b == nil {
		return Applied{}, fmt.Errorf("update of unknown block %d", r.Block.ID)
	}
	b.GS, b.NumBytes = r.Block.GS, r.Block.Len
	s.blocks.Observe(b.ID, b.GS)
	return Applied{Blocks: []uint64{b.ID}}, nil
}

// CommitSync is the end of a block recovery (commitBlockSynchronization):
// the block at its recovered stamp and length, or dropped (Delete); the
// file closed with Close.
type CommitSync struct {
	FileID        uint64
	Block         BlockRef
	Delete, Close bool
	Now           int64
}

func (*CommitSync) Kind() Kind               { return kindCommitSync }
func (r *CommitSync) SetNow(ms int64)        { r.Now = ms }
func (r *CommitSync) fileOf(s *State) uint64 { return r.FileID }
func (r *CommitSync) encode(e *enc) {
	e.u(r.FileID)
	encRef(e, r.Block)
	e.bool(r.Delete)
	e.bool(r.Close)
	e.i(r.Now)
}
func (r *CommitSync) decode(d *dec) {
	r.FileID, r.Block = d.u(), decRef(d)
	r.Delete, r.Close, r.Now = d.bool(), d.bool(), d.i()
}
func (r *CommitSync) apply(s *State, _ namespace.Caller) (Applied, error) {
	f, err := s.fileUC(r.FileID)
	if err != nil {
		return Applied{}, err
	}
	i := f.BlockIndex(r.Block.ID)
	if i < 0 {
		return Applied{}, fmt.Errorf("block %d is not in %s", r.Block.ID, f.Path())
	}
	res := Applied{File: f}
	if r.Delete {
		res.Dropped = s.tree.TruncateBlocks(f, i)
	} else {
		b := f.Blocks[i]
		// Recovery may shorten a block and always moves it to the new
		// stamp, so it is committed afresh rather than through Commit.
		b.GS, b.NumBytes = r.Block.GS, r.Block.Len
		b.SetRecoveryID(0)
		if b.State == blockmap.UnderConstruction {
			b.State = blockmap.Committed
		}
		s.blocks.Observe(b.ID, b.GS)
		res.Blocks = []uint64{b.ID}
	}
	if r.Close {
		res.Dropped = s.releaseCopySource(f, res.Dropped)
		s.closeFile(f, r.Now)
	}
	return res, nil
}

// CloseFile closes an open file after lease recovery, keeping its first
// Keep blocks.
type CloseFile struct {
	FileID uint64
	Keep   int
	Now    int64
}

func (*CloseFile) Kind() Kind               { return kindCloseFile }
func (r *CloseFile) SetNow(ms int64)        { r.Now = ms }
func (r *CloseFile) fileOf(s *State) uint64 { return r.FileID }
func (r *CloseFile) encode(e *enc) {
	e.u(r.FileID)
	e.u(uint64(r.Keep))
	e.i(r.Now)
}
func (r *CloseFile) decode(d *dec) { r.FileID, r.Keep, r.Now = d.u(), int(d.u()), d.i() }
func (r *CloseFile) apply(s *State, _ namespace.Caller) (Applied, error) {
	f, err := s.fileUC(r.FileID)
	if err != nil {
		return Applied{}, err
	}
	res := Applied{File: f, Dropped: s.tree.TruncateBlocks(f, r.Keep)}
	res.Dropped = s.releaseCopySource(f, res.Dropped)
	s.closeFile(f, r.Now)
	return res, nil
}

// fileUC returns the open file with id, or an error for replay.
func (s *State) fileUC(id uint64) (*namespace.INode, error) {
	f := s.tree.ByID(id)
	switch {
	case f == nil:
		return nil, fmt.Errorf("inode %d not found", id)
	case f.IsDir():
		return nil, fmt.Errorf("inode %d (%s) is a directory", id, f.Path())
	case f.Writer() == nil:
		return nil, fmt.Errorf("%s is not open for writing", f.Path())
	}
	return f, nil
}

// closeFile ends writing: every block is complete from now on (the live
// path checked their replicas first).
func (s *State) closeFile(f *namespace.INode, now int64) {
	for _, b := range f.Blocks {
		b.State = blockmap.Complete
		b.SetRecoveryID(0)
		b.SetTargets(nil)
	}
	s.tree.CloseFile(f, now)
}
