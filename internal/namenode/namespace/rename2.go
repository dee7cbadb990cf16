package namespace

// Rename2 is HDFS's rename2 (FileContext.rename with Options.Rename,
// FSDirRenameOp.renameTo): dst names the result exactly (an existing
// directory is not moved into), an existing dst is an error unless
// overwrite, and with overwrite it is replaced in the same step, so no
// reader ever sees dst missing. As in HDFS's validateOverwrite, the
// replaced inode must be of src's type and, if a directory, empty. It
// returns the files removed with the replaced dst (their blocks and leases
// go) and the new path.
func (t *Tree) Rename2(c Caller, src, dst string, overwrite bool, now int64) (string, []*INode, error) {
	const op = "rename"
	rs, err := t.resolve(op, src)
	if err != nil {
		return "", nil, err
	}
	rd, err := t.resolve(op, dst)
	if err != nil {
		return "", nil, err
	}
	label := rs.path + " to " + rd.path
	if !rs.found() {
		return "", nil, errorf(op, label, NotFound, "source %s not found", rs.path)
	}
	s := rs.last()
	if s == t.root {
		return "", nil, errorf(op, label, Invalid, "cannot rename the root directory")
	}
	if rs.path == rd.path {
		return "", nil, errorf(op, label, Exists, "the source %s and destination %s are the same", rs.path, rd.path)
	}
	var old *INode
	switch {
	case rd.found():
		old = rd.last()
		if old == t.root {
			return "", nil, errorf(op, label, Invalid, "cannot replace the root directory")
		}
	case len(rd.nodes) < len(rd.names):
		return "", nil, errorf(op, label, NotFound, "rename destination parent %s not found", Join(rd.names[:len(rd.names)-1]))
	}
	var dparent *INode
	if old != nil {
		dparent = old.Parent
	} else {
		dparent = rd.last()
	}
	if !dparent.IsDir() {
		return "", nil, errorf(op, label, NotDirectory, "rename destination parent %s is not a directory", dparent.Path())
	}
	for p := dparent; p != nil; p = p.Parent {
		if p == s {
			return "", nil, errorf(op, label, Precondition, "rename destination %s lies under the source %s", rd.path, rs.path)
		}
	}
	if old != nil {
		if old.IsDir() != s.IsDir() {
			what := "files"
			if s.IsDir() {
				what = "directories"
			}
			return "", nil, errorf(op, label, Precondition, "source %s and destination %s must both be %s", rs.path, rd.path, what)
		}
		if !overwrite {
			return "", nil, errorf(op, label, Exists, "rename destination %s already exists", rd.path)
		}
		if old.IsDir() && len(old.Children()) > 0 {
			// Worded without "not empty", which the clients read as
			// PathIsNotEmptyDirectoryException; HDFS raises IOException.
			return "", nil, errorf(op, label, Precondition, "rename destination directory %s has %d entries and cannot be overwritten", rd.path, len(old.Children()))
		}
	}
	// The destination's ancestors are traversed by the move's check; the
	// replaced inode needs what deleting it needs (write on the parent,
	// which the move checks too, and the sticky bit).
	rdParent := rd
	if old != nil {
		rdParent.nodes = rd.nodes[:len(rd.nodes)-1]
	}
	if err := t.checkMove(op, label, c, rs, s, rdParent, dparent); err != nil {
		return "", nil, err
	}
	// As Rename: a directory holding snapshots stays put (skipped on
	// replay, which applies what was accepted when logged).
	if s.IsDir() && !c.Trusted {
		if err := t.checkDeleteSnapshottable(op, "renamed", label, s); err != nil {
			return "", nil, err
		}
	}
	if old != nil {
		if err := t.checkSticky(op, rd.path, c, dparent, old); err != nil {
			return "", nil, err
		}
		if err := t.checkDeleteSnapshottable(op, "deleted", rd.path, old); err != nil {
			return "", nil, err
		}
	}
	if err := moveQuota(op, label, s, dparent); err != nil {
		return "", nil, err
	}
	var removed []*INode
	if old != nil {
		ns, ds := usage(old)
		charge(dparent, nil, -ns, -ds)
		dparent.removeChildAt(rd.slot, old)
		removed = t.forget(old, nil)
	}
	sslot := rs.slot
	if old != nil && s.Parent == dparent && sslot > rd.slot {
		sslot-- // old sat before s
	}
	s.Parent.MTime = now
	move(s, sslot, dparent, rd.slot, rd.name())
	dparent.MTime = now
	return s.Path(), removed, nil
}
