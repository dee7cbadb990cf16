package namespace

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
)

// This file holds the namespace side of append, truncate and concat (HDFS
// FSDirAppendOp, FSDirTruncateOp, FSDirConcatOp): the checks and the tree
// changes. What happens to the blocks (a partial last block reopened, a
// block cut by recovery) is the namenode's.

// CheckAppend returns the file at path if c may append to it: it must be
// a file, closed (a file being written belongs to its writer), and c needs
// write access to it (HDFS checks WRITE on the file).
func (t *Tree) CheckAppend(c Caller, path string) (*INode, error) {
	const op = "append"
	f, err := t.Stat(c, op, path)
	if err != nil {
		return nil, err
	}
	if f.IsDir() {
		return nil, errorf(op, f.Path(), Precondition, "is a directory; only files can be appended to")
	}
	if err := t.check(op, f.Path(), c, f, Write); err != nil {
		return nil, err
	}
	if f.Writer() != nil {
		return nil, errorf(op, f.Path(), Precondition, "file is open for writing by %s", writerOf(c, f.Writer()))
	}
	return f, nil
}

// writerOf names the writer of an open file for c: its client for the
// same user, else no name (client names are the writer's, not everyone's).
func writerOf(c Caller, w *Writer) string {
	if w.User == c.User {
		return "client " + w.Client
	}
	return "another user's client"
}

// ReopenFile makes a closed file open for writing by w again (append, or a
// truncate waiting for its last block's recovery).
func (t *Tree) ReopenFile(f *INode, w Writer) {
	f.SetWriter(&w)
}

// CheckTruncate returns the file at path if c may truncate it to
// newLength: a closed file, write access to it, and 0 <= newLength <=
// its length (the FileSystem specification's preconditions, in HDFS's
// words). A cut inside a block a snapshot holds is made on a copy (see
// CopyOnTruncate); blocks dropped whole are kept for snapshots.
func (t *Tree) CheckTruncate(c Caller, path string, newLength int64) (*INode, error) {
	const op = "truncate"
	if newLength < 0 {
		return nil, errorf(op, path, Invalid, "Cannot truncate to a negative file size: %d.", newLength)
	}
	f, err := t.Stat(c, op, path)
	if err != nil {
		return nil, err
	}
	if f.IsDir() {
		return nil, errorf(op, f.Path(), Precondition, "is a directory; only files can be truncated")
	}
	if err := t.check(op, f.Path(), c, f, Write); err != nil {
		return nil, err
	}
	if f.Writer() != nil {
		return nil, errorf(op, f.Path(), Precondition, "file is open for writing by %s", writerOf(c, f.Writer()))
	}
	if l := f.Length(); newLength > l {
		return nil, errorf(op, f.Path(), Invalid, "Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", l, newLength)
	}
	return f, nil
}

// Concat moves the blocks of the files srcs, in order, to the end of the
// file target and removes srcs, with HDFS's rules (FSDirConcatOp): all in
// one directory, no file twice, target and sources closed and not empty,
// the same replication, every block full except the last block of the
// last source. The caller needs write access to target, read access to
// each source and write access to the directory (the sources are
// deleted; in a sticky directory they must be the caller's). It returns
// the target.
func (t *Tree) Concat(c Caller, target string, srcs []string, now int64) (*INode, error) {
	const op = "concat"
	if len(srcs) == 0 {
		return nil, errorf(op, target, Invalid, "No sources given")
	}
	trg, err := t.Stat(c, op, target)
	if err != nil {
		return nil, err
	}
	label := trg.Path()
	files := make([]*INode, 0, len(srcs))
	for _, s := range srcs {
		r, err := t.resolve(op, s)
		if err != nil {
			return nil, err
		}
		if r.parent() != trg.Parent || len(r.names) == 0 {
			return nil, errorf(op, r.path, Invalid, "Sources and target are not in the same directory (target %s)", label)
		}
		if !r.found() {
			return nil, errorf(op, r.path, NotFound, "no such file or directory")
		}
		files = append(files, r.last())
	}
	if err := t.check(op, label, c, trg, Write); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := t.check(op, f.Path(), c, f, Read); err != nil {
			return nil, err
		}
	}
	if err := t.check(op, label, c, trg.Parent, Write); err != nil {
		return nil, err
	}
	// The sources are deleted: in a sticky directory each must be the
	// caller's (HDFS checks the sticky bit with the parent's WRITE).
	for _, f := range files {
		if err := t.checkSticky(op, f.Path(), c, trg.Parent, f); err != nil {
			return nil, err
		}
	}
	if err := checkConcat(trg, files, t.SnapshotRefs); err != nil {
		return nil, err
	}
	// Every source is in the target's directory: the directory and its
	// ancestors lose one inode per source and no space (same replication).
	parent := trg.Parent
	for _, f := range files {
		for _, b := range f.Blocks {
			b.FileID = trg.ID
			b.Expected = trg.Replication()
		}
		trg.Blocks = append(trg.Blocks, f.Blocks...)
		f.Blocks = nil
		parent.removeChild(f)
		t.forget(f, nil)
	}
	charge(parent, nil, -int64(len(files)), 0)
	trg.MTime = now
	parent.MTime = now
	return trg, nil
}

// checkConcat applies HDFS's rules for the files of a concat, with its
// messages.
func checkConcat(trg *INode, srcs []*INode, refs func(block uint64) int) error {
	const op = "concat"
	target := trg.Path()
	switch {
	case trg.IsDir():
		return errorf(op, target, Precondition, "%s is a directory, not a file", target)
	case trg.Writer() != nil:
		return errorf(op, target, Precondition, "concat: target file %s is under construction", target)
	case len(trg.Blocks) == 0:
		return errorf(op, target, Invalid, "concat: target file %s is empty", target)
	}
	bs := trg.BlockSize()
	if last := trg.Blocks[len(trg.Blocks)-1]; last.NumBytes != bs {
		return errorf(op, target, Invalid, "The last block in %s is not full; last block size = %d but file block size = %d", target, last.NumBytes, bs)
	}
	seen := map[*INode]bool{trg: true}
	for i, s := range srcs {
		src := s.Path()
		switch {
		case s == trg:
			return errorf(op, src, Invalid, "concat: the src file %s is the same with the target file %s", src, target)
		case seen[s]:
			return errorf(op, src, Invalid, "concat: at least two of the source files are the same")
		case s.IsDir():
			return errorf(op, src, Precondition, "%s is a directory, not a file", src)
		case s.Writer() != nil || len(s.Blocks) == 0:
			return errorf(op, src, Invalid, "concat: source file %s is invalid or empty or underConstruction", src)
		case s.Replication() != trg.Replication():
			return errorf(op, src, Invalid, "concat: the source file %s and the target file %s should have the same replication: source replication is %d but target replication is %d",
				src, target, s.Replication(), trg.Replication())
		}
		seen[s] = true
		// Every block full, except the last block of the last source.
		end := len(s.Blocks)
		if i == len(srcs)-1 {
			end--
		}
		for j := 0; j < end; j++ {
			if n := s.Blocks[j].NumBytes; n != bs {
				return errorf(op, src, Invalid, "concat: the source file %s and the target file %s should have the same blocks sizes: target block size is %d but the size of source block %d is %d",
					src, target, bs, j, n)
			}
		}
		if s.BlockSize() > bs {
			return errorf(op, src, Invalid, "concat: source file %s has preferred block size %d which is greater than the target file's preferred block size %d", src, s.BlockSize(), bs)
		}
		for _, b := range s.Blocks {
			if b.State != blockmap.Complete {
				return errorf(op, src, Precondition, "concat: block %d of %s is %s, not complete", b.ID, src, b.State)
			}
			if refs(b.ID) > 0 {
				return errorf(op, src, Precondition, "Concat: the source file %s is in snapshot", src)
			}
		}
	}
	return nil
}

// TruncatePoint says where newLength falls in f's blocks: the first keep
// blocks are kept whole, and when cut is true block keep is kept too, cut
// to within bytes (0 < within < its length).
func TruncatePoint(f *INode, newLength int64) (keep int, cut bool, within int64) {
	var off int64
	for i, b := range f.Blocks {
		if off == newLength {
			return i, false, 0
		}
		if off+b.NumBytes > newLength {
			return i, true, newLength - off
		}
		off += b.NumBytes
	}
	if off != newLength {
		panic(fmt.Sprintf("namespace: TruncatePoint(%d) beyond %s's length %d", newLength, f.Path(), off))
	}
	return len(f.Blocks), false, 0
}

// CopyOnTruncate says whether a truncate of f to newLength cuts inside a
// block a snapshot holds. HDFS then cuts a copy (copy-on-truncate): the
// file gets a new block, with a new id, holding the block's first bytes,
// and the snapshot keeps the block as it was.
func (t *Tree) CopyOnTruncate(f *INode, newLength int64) bool {
	if newLength < 0 || newLength >= f.Length() {
		return false
	}
	keep, cut, _ := TruncatePoint(f, newLength)
	return cut && t.SnapshotRefs(f.Blocks[keep].ID) > 0
}
