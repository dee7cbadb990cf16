package namenode

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// opKind numbers the edit-log operations. Never renumber: they are on disk.
type opKind uint8

const (
	opMkdirs opKind = iota + 1
	opCreate
	opAddBlock
	opComplete
	opAbandonBlock
	opAllocGS
	opUpdateBlock
	opDelete
	opRename
	opSetReplication
	opSetPermission
	opSetOwner
	opCommitSync
	opCloseFile
	opAddCachePool
	opRemoveCachePool
	opAddCacheDirective
	opRemoveCacheDirective
	opSetTimes
	opSetQuota
	opSetXAttr
	opRemoveXAttr
	// append, truncate and concat (ops_filedata.go)
	opAppend
	opTruncate
	opConcat
	opLimit // first unused
)

var opNames = map[opKind]string{
	opMkdirs: "mkdirs", opCreate: "create", opAddBlock: "addBlock", opComplete: "complete",
	opAbandonBlock: "abandonBlock", opAllocGS: "allocGS", opUpdateBlock: "updateBlock",
	opDelete: "delete", opRename: "rename", opSetReplication: "setReplication",
	opSetPermission: "setPermission", opSetOwner: "setOwner", opCommitSync: "commitBlockSync",
	opCloseFile: "closeFile", opAddCachePool: "addCachePool", opRemoveCachePool: "removeCachePool",
	opAddCacheDirective: "addCacheDirective", opRemoveCacheDirective: "removeCacheDirective",
	opSetTimes: "setTimes", opSetQuota: "setQuota", opSetXAttr: "setXAttr", opRemoveXAttr: "removeXAttr",
	opAppend: "append", opTruncate: "truncate", opConcat: "concat",
}

func (k opKind) String() string {
	if n, ok := opNames[k]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// blockRef is a block's id, stamp and length in a record.
type blockRef struct {
	ID  uint64
	GS  uint64
	Len int64
}

// editOp is one logged namespace mutation. Each kind uses some fields; the
// record carries everything needed to apply it again identically (times,
// ids, stamps), so replay never consults the clock or counters.
type editOp struct {
	Kind         opKind
	Path         string
	Dst          string // rename
	User         string
	Client       string
	Host         string
	Owner        string
	Group        string
	Perm         uint32
	ParentPerm   uint32
	CreateParent bool
	Overwrite    bool
	Recursive    bool
	Delete       bool // commitBlockSync: drop the block
	Close        bool // commitBlockSync: close the file
	Replication  int
	BlockSize    int64
	FileID       uint64
	Block        blockRef            // addBlock (new block), updateBlock, commitBlockSync, abandonBlock
	Prev         *blockRef           // addBlock: the previous block, committed
	Blocks       []blockRef          // complete: final lengths
	Keep         int                 // closeFile: blocks kept
	Now          int64               // unix ms
	Pool         string              // cache pool and directive ops
	Limit        int64               // addCachePool: byte limit
	DirectiveID  int64               // cache directive ops
	MTime        int64               // setTimes: unix ms, or namespace.KeepTime
	ATime        int64               // setTimes: unix ms, or namespace.KeepTime
	NSQuota      int64               // setQuota: limit, namespace.QuotaReset or QuotaDontSet
	DSQuota      int64               // setQuota: likewise, in bytes; setTypeQuota: the type's quota
	StorageType  string              // setTypeQuota: a Hadoop StorageType name
	XAttr        namespace.XAttr     // setXAttr (name, value), removeXAttr (name)
	XAttrFlags   namespace.XAttrFlag // setXAttr
	ACLOp        namespace.ACLOp     // ACL changes (ops_features.go)
	ACL          []namespace.ACLEntry
	Policy       uint8    // setStoragePolicy: id, 0 unsets
	Snapshot     string   // snapshot ops: the snapshot's name
	SnapshotNew  string   // renameSnapshot: the new name
	NewLength    int64    // truncate: the file's new length
	Srcs         []string // concat: the source files, in order
}

func (o *editOp) encode() []byte {
	e := enc{b: make([]byte, 0, 64+len(o.Path)+len(o.Dst))}
	e.b = append(e.b, byte(o.Kind))
	switch o.Kind {
	case opMkdirs:
		e.s(o.Path)
		e.u(uint64(o.Perm))
		e.u(uint64(o.ParentPerm))
		e.bool(o.CreateParent)
		e.s(o.User)
		e.i(o.Now)
	case opCreate:
		e.s(o.Path)
		e.u(uint64(o.Perm))
		e.u(uint64(o.ParentPerm))
		e.bool(o.CreateParent)
		e.bool(o.Overwrite)
		e.u(uint64(o.Replication))
		e.i(o.BlockSize)
		e.s(o.User)
		e.s(o.Client)
		e.s(o.Host)
		e.i(o.Now)
	case opAddBlock:
		e.u(o.FileID)
		e.bool(o.Prev != nil)
		if o.Prev != nil {
			encRef(&e, *o.Prev)
		}
		encRef(&e, o.Block)
	case opComplete:
		e.u(o.FileID)
		e.u(uint64(len(o.Blocks)))
		for _, b := range o.Blocks {
			encRef(&e, b)
		}
		e.i(o.Now)
	case opAbandonBlock:
		e.u(o.FileID)
		e.u(o.Block.ID)
	case opAllocGS:
		e.u(o.Block.GS)
	case opUpdateBlock:
		encRef(&e, o.Block)
	case opDelete:
		e.s(o.Path)
		e.bool(o.Recursive)
		e.i(o.Now)
	case opRename:
		e.s(o.Path)
		e.s(o.Dst)
		e.i(o.Now)
	case opSetReplication:
		e.s(o.Path)
		e.u(uint64(o.Replication))
	case opSetPermission:
		e.s(o.Path)
		e.u(uint64(o.Perm))
	case opSetOwner:
		e.s(o.Path)
		e.s(o.Owner)
		e.s(o.Group)
	case opCommitSync:
		e.u(o.FileID)
		encRef(&e, o.Block)
		e.bool(o.Delete)
		e.bool(o.Close)
		e.i(o.Now)
	case opCloseFile:
		e.u(o.FileID)
		e.u(uint64(o.Keep))
		e.i(o.Now)
	default:
		switch {
		case isCacheOp(o.Kind):
			encodeCacheOp(&e, o)
		case isAttrOp(o.Kind):
			encodeAttrOp(&e, o)
		case isFeatureOp(o.Kind):
			encodeFeatureOp(&e, o)
		case isFileDataOp(o.Kind):
			encodeFileDataOp(&e, o)
		case o.Kind == opRename2:
			encodeRename2(&e, o)
		default:
			panic(fmt.Sprintf("namenode: encode of unknown op %d", o.Kind))
		}
	}
	return e.b
}

func encRef(e *enc, b blockRef) {
	e.u(b.ID)
	e.u(b.GS)
	e.i(b.Len)
}

func decRef(d *dec) blockRef { return blockRef{ID: d.u(), GS: d.u(), Len: d.i()} }

// decodeOp parses a record written by encode.
func decodeOp(b []byte) (*editOp, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty edit record")
	}
	o := &editOp{Kind: opKind(b[0])}
	d := &dec{b: b[1:]}
	switch o.Kind {
	case opMkdirs:
		o.Path, o.Perm, o.ParentPerm = d.s(), uint32(d.u()), uint32(d.u())
		o.CreateParent, o.User, o.Now = d.bool(), d.s(), d.i()
	case opCreate:
		o.Path, o.Perm, o.ParentPerm = d.s(), uint32(d.u()), uint32(d.u())
		o.CreateParent, o.Overwrite = d.bool(), d.bool()
		o.Replication, o.BlockSize = int(d.u()), d.i()
		o.User, o.Client, o.Host, o.Now = d.s(), d.s(), d.s(), d.i()
	case opAddBlock:
		o.FileID = d.u()
		if d.bool() {
			p := decRef(d)
			o.Prev = &p
		}
		o.Block = decRef(d)
	case opComplete:
		o.FileID = d.u()
		n := d.count(3)
		for i := 0; i < n && d.err == nil; i++ {
			o.Blocks = append(o.Blocks, decRef(d))
		}
		o.Now = d.i()
	case opAbandonBlock:
		o.FileID, o.Block.ID = d.u(), d.u()
	case opAllocGS:
		o.Block.GS = d.u()
	case opUpdateBlock:
		o.Block = decRef(d)
	case opDelete:
		o.Path, o.Recursive, o.Now = d.s(), d.bool(), d.i()
	case opRename:
		o.Path, o.Dst, o.Now = d.s(), d.s(), d.i()
	case opSetReplication:
		o.Path, o.Replication = d.s(), int(d.u())
	case opSetPermission:
		o.Path, o.Perm = d.s(), uint32(d.u())
	case opSetOwner:
		o.Path, o.Owner, o.Group = d.s(), d.s(), d.s()
	case opCommitSync:
		o.FileID, o.Block = d.u(), decRef(d)
		o.Delete, o.Close, o.Now = d.bool(), d.bool(), d.i()
	case opCloseFile:
		o.FileID, o.Keep, o.Now = d.u(), int(d.u()), d.i()
	default:
		switch {
		case isCacheOp(o.Kind):
			decodeCacheOp(d, o)
		case isAttrOp(o.Kind):
			decodeAttrOp(d, o)
		case isFeatureOp(o.Kind):
			decodeFeatureOp(d, o)
		case isFileDataOp(o.Kind):
			decodeFileDataOp(d, o)
		case o.Kind == opRename2:
			decodeRename2(d, o)
		default:
			return nil, fmt.Errorf("unknown edit op %d", b[0])
		}
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("edit op %s: %w", o.Kind, err)
	}
	return o, nil
}

// applied is what an operation changed beyond the tree, for the live
// caller to act on (leases, replica deletion).
type applied struct {
	file    *namespace.INode   // created / completed / changed file
	removed []*namespace.INode // files that disappeared (delete, overwrite)
	dropped []*blockmap.Block  // blocks that left the namespace (and the block map)
	orphans []orphan           // their replicas, which the datanodes must delete
	path    string             // rename: the resulting path
}

// orphan is a replica of a block that no longer exists.
type orphan struct {
	node  string
	block blockRef
}

// apply performs op on the tree and block map. The live path calls it with
// the real caller (permission checks), replay with a trusted one. Callers
// hold nn.mu.
func (s *fsState) apply(o *editOp, c namespace.Caller) (applied, error) {
	// Block operations change what their file charges against space
	// quotas; the difference is charged once the operation is done.
	f := s.blockOpFile(o)
	var before int64
	if f != nil {
		before = namespace.DiskCharge(f)
	}
	res, err := s.applyOp(o, c)
	if f != nil && err == nil {
		s.tree.ChargeSpace(f, namespace.DiskCharge(f)-before)
	}
	res.dropped = s.keepSnapshotted(res.dropped)
	for _, b := range res.dropped {
		for _, r := range s.blocks.Remove(b.ID) {
			res.orphans = append(res.orphans, orphan{node: r.Node, block: blockRef{ID: b.ID, GS: r.GS, Len: r.NumBytes}})
		}
	}
	return res, err
}

func (s *fsState) applyOp(o *editOp, c namespace.Caller) (applied, error) {
	var res applied
	var err error
	switch o.Kind {
	case opMkdirs:
		err = s.tree.Mkdirs(c, o.Path, uint16(o.Perm), uint16(o.ParentPerm), o.CreateParent, o.Now)
	case opCreate:
		res, err = s.applyCreate(o, c)
	case opAddBlock:
		res, err = s.applyAddBlock(o)
	case opComplete:
		res, err = s.applyComplete(o)
	case opAbandonBlock:
		res, err = s.applyAbandon(o)
	case opAllocGS:
		s.blocks.Observe(0, o.Block.GS)
	case opUpdateBlock:
		b := s.blocks.Get(o.Block.ID)
		if b == nil {
			return res, fmt.Errorf("update of unknown block %d", o.Block.ID)
		}
		b.GS, b.NumBytes = o.Block.GS, o.Block.Len
		s.blocks.Observe(b.ID, b.GS)
	case opDelete:
		res.removed, err = s.tree.Delete(c, o.Path, o.Recursive, o.Now)
		res.dropped = s.dropFiles(res.removed)
	case opRename:
		res.path, err = s.tree.Rename(c, o.Path, o.Dst, o.Now)
	case opSetReplication:
		res.file, err = s.tree.SetReplication(c, o.Path, o.Replication)
		if err == nil {
			for _, b := range res.file.Blocks {
				b.Expected = o.Replication
			}
		}
	case opSetPermission:
		err = s.tree.SetPermission(c, o.Path, uint16(o.Perm))
	case opSetOwner:
		err = s.tree.SetOwner(c, o.Path, o.Owner, o.Group)
	case opCommitSync:
		res, err = s.applyCommitSync(o)
	case opCloseFile:
		res, err = s.applyCloseFile(o)
	default:
		switch {
		case isCacheOp(o.Kind):
			err = s.applyCacheOp(o)
		case isAttrOp(o.Kind):
			res, err = s.applyAttrOp(o, c)
		case isFeatureOp(o.Kind):
			res, err = s.applyFeatureOp(o, c)
		case isFileDataOp(o.Kind):
			res, err = s.applyFileDataOp(o, c)
		case o.Kind == opRename2:
			res, err = s.applyRename2(o, c)
		default:
			return res, fmt.Errorf("unknown edit op %d", o.Kind)
		}
	}
	return res, err
}

func (s *fsState) applyCreate(o *editOp, c namespace.Caller) (applied, error) {
	f, replaced, err := s.tree.Create(c, o.Path, namespace.CreateOptions{
		Perm: uint16(o.Perm), ParentPerm: uint16(o.ParentPerm), Replication: o.Replication,
		BlockSize: o.BlockSize, Writer: namespace.Writer{Client: o.Client, Host: o.Host, User: o.User},
		Overwrite: o.Overwrite, CreateParent: o.CreateParent,
	}, o.Now)
	res := applied{file: f}
	if replaced != nil {
		res.removed = []*namespace.INode{replaced}
		res.dropped = s.dropFiles(res.removed)
	}
	return res, err
}

// dropFiles removes the blocks of removed files from the block map.
func (s *fsState) dropFiles(files []*namespace.INode) []*blockmap.Block {
	var out []*blockmap.Block
	for _, f := range files {
		for _, b := range f.Blocks {
			out = append(out, b)
		}
		out = s.releaseCopySource(f, out)
	}
	return out
}

// fileUC returns the open file with id, or an error for replay.
func (s *fsState) fileUC(id uint64) (*namespace.INode, error) {
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

func (s *fsState) applyAddBlock(o *editOp) (applied, error) {
	f, err := s.fileUC(o.FileID)
	if err != nil {
		return applied{}, err
	}
	if err := s.tree.CheckSpace("addBlock", f, addBlockCharge(f, o.Prev, s.blocks)); err != nil {
		return applied{}, err
	}
	if o.Prev != nil {
		prev := s.blocks.Get(o.Prev.ID)
		if prev == nil || f.BlockIndex(prev.ID) < 0 {
			return applied{}, fmt.Errorf("previous block %d is not in %s", o.Prev.ID, f.Path())
		}
		if err := s.blocks.Commit(prev, o.Prev.GS, o.Prev.Len); err != nil {
			return applied{}, err
		}
	}
	b := &blockmap.Block{ID: o.Block.ID, GS: o.Block.GS, State: blockmap.UnderConstruction, FileID: f.ID, Expected: f.Replication()}
	s.blocks.Add(b)
	s.tree.AddBlock(f, b)
	return applied{file: f}, nil
}

func (s *fsState) applyComplete(o *editOp) (applied, error) {
	f, err := s.fileUC(o.FileID)
	if err != nil {
		return applied{}, err
	}
	for _, ref := range o.Blocks {
		b := s.blocks.Get(ref.ID)
		if b == nil || f.BlockIndex(ref.ID) < 0 {
			return applied{}, fmt.Errorf("block %d is not in %s", ref.ID, f.Path())
		}
		if err := s.blocks.Commit(b, ref.GS, ref.Len); err != nil {
			return applied{}, err
		}
	}
	s.closeFile(f, o.Now)
	return applied{file: f}, nil
}

// closeFile ends writing: every block is complete from now on (the live
// path checked their replicas first).
func (s *fsState) closeFile(f *namespace.INode, now int64) {
	for _, b := range f.Blocks {
		b.State = blockmap.Complete
		b.SetRecoveryID(0)
		b.SetTargets(nil)
	}
	s.tree.CloseFile(f, now)
}

func (s *fsState) applyAbandon(o *editOp) (applied, error) {
	f, err := s.fileUC(o.FileID)
	if err != nil {
		return applied{}, err
	}
	i := f.BlockIndex(o.Block.ID)
	if i < 0 || i != len(f.Blocks)-1 {
		return applied{}, fmt.Errorf("block %d is not the last block of %s", o.Block.ID, f.Path())
	}
	dropped := s.tree.TruncateBlocks(f, i)
	return applied{file: f, dropped: dropped}, nil
}

func (s *fsState) applyCommitSync(o *editOp) (applied, error) {
	f, err := s.fileUC(o.FileID)
	if err != nil {
		return applied{}, err
	}
	i := f.BlockIndex(o.Block.ID)
	if i < 0 {
		return applied{}, fmt.Errorf("block %d is not in %s", o.Block.ID, f.Path())
	}
	res := applied{file: f}
	if o.Delete {
		res.dropped = s.tree.TruncateBlocks(f, i)
	} else {
		b := f.Blocks[i]
		// Recovery may shorten a block and always moves it to the new
		// stamp, so it is committed afresh rather than through Commit.
		b.GS, b.NumBytes = o.Block.GS, o.Block.Len
		b.SetRecoveryID(0)
		if b.State == blockmap.UnderConstruction {
			b.State = blockmap.Committed
		}
		s.blocks.Observe(b.ID, b.GS)
	}
	if o.Close {
		res.dropped = s.releaseCopySource(f, res.dropped)
		s.closeFile(f, o.Now)
	}
	return res, nil
}

func (s *fsState) applyCloseFile(o *editOp) (applied, error) {
	f, err := s.fileUC(o.FileID)
	if err != nil {
		return applied{}, err
	}
	res := applied{file: f, dropped: s.tree.TruncateBlocks(f, o.Keep)}
	res.dropped = s.releaseCopySource(f, res.dropped)
	s.closeFile(f, o.Now)
	return res, nil
}
