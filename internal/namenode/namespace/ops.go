package namespace

import (
	"maps"
	"slices"

	"smarth/internal/namenode/blockmap"
)

// Stat returns the inode at path; every directory on the way must be
// searchable (x).
func (t *Tree) Stat(c Caller, op, path string) (*INode, error) {
	r, err := t.resolve(op, path)
	if err != nil {
		return nil, err
	}
	if !r.found() {
		return nil, errorf(op, r.path, NotFound, "no such file or directory")
	}
	if err := t.traverse(op, r.path, c, r.nodes[:len(r.nodes)-1]); err != nil {
		return nil, err
	}
	return r.last(), nil
}

// List returns up to limit entries of a directory whose names sort after
// startAfter, and how many remain after them. Listing a file returns the
// file itself.
func (t *Tree) List(c Caller, path, startAfter string, limit int) ([]*INode, int, error) {
	n, err := t.Stat(c, "list", path)
	if err != nil {
		return nil, 0, err
	}
	if !n.IsDir() {
		return []*INode{n}, 0, nil
	}
	if err := t.check("list", n.Path(), c, n, Read|Execute); err != nil {
		return nil, 0, err
	}
	i := 0
	if startAfter != "" {
		i, _ = n.childIndex(startAfter)
		if i < len(n.Children()) && n.Children()[i].Name == startAfter {
			i++
		}
	}
	end := len(n.Children())
	if limit > 0 && i+limit < end {
		end = i + limit
	}
	return slices.Clone(n.Children()[i:end]), len(n.Children()) - end, nil
}

// Mkdirs creates the directory at path with mode perm (and, with
// createParent, its missing parents with mode parentPerm). An existing
// directory is success.
func (t *Tree) Mkdirs(c Caller, path string, perm, parentPerm uint16, createParent bool, now int64) error {
	const op = "mkdir"
	r, err := t.resolve(op, path)
	if err != nil {
		return err
	}
	if r.found() {
		if !r.last().IsDir() {
			return errorf(op, r.path, Exists, "file exists (not a directory)")
		}
		return t.traverse(op, r.path, c, r.nodes[:len(r.nodes)-1])
	}
	var user uint32
	if r, user, err = t.makeParents(op, c, r, createParent, parentPerm, now); err != nil {
		return err
	}
	parent := r.last()
	d := t.newINode(r.name(), true, perm, user, parent, now)
	t.inheritACL(parent, d)
	parent.addChildAt(r.slot, d)
	parent.MTime = now
	return nil
}

// makeParents checks that the deepest existing directory of r may be
// written and, with createParent, creates the missing directories between
// it and r's last name, extending r. Without createParent a missing parent
// is an error. It returns the serial of the caller's name, the owner of
// what is made.
func (t *Tree) makeParents(op string, c Caller, r resolution, createParent bool, perm uint16, now int64) (resolution, uint32, error) {
	missing := len(r.names) + 1 - len(r.nodes)
	if missing > 1 && !createParent {
		return r, 0, errorf(op, r.path, NotFound, "parent directory %s does not exist", Join(r.names[:len(r.names)-1]))
	}
	if err := t.traverse(op, r.path, c, r.nodes[:len(r.nodes)-1]); err != nil {
		return r, 0, err
	}
	if err := t.check(op, r.path, c, r.last(), Write|Execute); err != nil {
		return r, 0, err
	}
	// The caller creates the last name once this returns, so the quota
	// check and charge cover it too: nothing can fail in between.
	if err := verifyQuota(op, r.path, r.last(), nil, int64(missing), 0); err != nil {
		return r, 0, err
	}
	user, err := userSerial(op, r.path, c) // every check passed: see userSerial
	if err != nil {
		return r, 0, err
	}
	charge(r.last(), nil, int64(missing), 0)
	for len(r.nodes) < len(r.names) {
		parent := r.last()
		d := t.newINode(r.names[len(r.nodes)-1], true, perm, user, parent, now)
		t.inheritACL(parent, d)
		parent.addChildAt(r.slot, d)
		parent.MTime = now
		r.nodes = append(r.nodes, d)
		r.slot = 0 // the next name goes into d, which is empty
	}
	return r, user, nil
}

// CreateOptions are the attributes of a new file.
type CreateOptions struct {
	Perm         uint16
	ParentPerm   uint16 // for directories made by CreateParent
	Replication  int
	BlockSize    int64
	Writer       Writer
	Overwrite    bool
	CreateParent bool
}

// Create makes a new file open for writing by opts.Writer. With Overwrite an
// existing file is replaced; the replaced file is returned so the caller can
// drop its blocks and lease.
func (t *Tree) Create(c Caller, path string, opts CreateOptions, now int64) (*INode, *INode, error) {
	const op = "create"
	r, err := t.resolve(op, path)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case opts.Replication < 0 || opts.Replication > MaxReplication:
		return nil, nil, errorf(op, r.path, Invalid, "replication %d is outside 0..%d", opts.Replication, MaxReplication)
	case opts.BlockSize < 0 || opts.BlockSize > MaxBlockSize:
		return nil, nil, errorf(op, r.path, Invalid, "block size %d is outside 0..%d", opts.BlockSize, int64(MaxBlockSize))
	}
	var user uint32
	var replaced *INode
	if r.found() {
		old := r.last()
		switch {
		case old.IsDir():
			return nil, nil, errorf(op, r.path, Exists, "is a directory")
		case !opts.Overwrite:
			return nil, nil, errorf(op, r.path, Exists, "file exists")
		}
		parent := old.Parent
		if err := t.traverse(op, r.path, c, r.nodes[:len(r.nodes)-1]); err != nil {
			return nil, nil, err
		}
		if err := t.check(op, r.path, c, parent, Write|Execute); err != nil {
			return nil, nil, err
		}
		if err := t.checkSticky(op, r.path, c, parent, old); err != nil {
			return nil, nil, err
		}
		if user, err = userSerial(op, r.path, c); err != nil {
			return nil, nil, err
		}
		parent.removeChildAt(r.slot, old) // the new file goes to the same slot
		t.forget(old, nil)
		charge(parent, nil, 0, -DiskCharge(old)) // the new file takes its inode's place
		replaced = old
		r.nodes = r.nodes[:len(r.nodes)-1]
	} else if r, user, err = t.makeParents(op, c, r, opts.CreateParent, opts.ParentPerm, now); err != nil {
		return nil, nil, err
	}
	parent := r.last()
	f := t.newINode(r.name(), false, opts.Perm, user, parent, now)
	f.SetReplication(opts.Replication)
	f.SetBlockSize(opts.BlockSize)
	t.inheritACL(parent, f)
	w := opts.Writer
	f.SetWriter(&w)
	parent.addChildAt(r.slot, f)
	parent.MTime = now
	return f, replaced, nil
}

// Delete removes path; a non-empty directory only with recursive. It
// returns the files removed, so the caller can drop their blocks and leases.
func (t *Tree) Delete(c Caller, path string, recursive bool, now int64) ([]*INode, error) {
	const op = "delete"
	r, err := t.resolve(op, path)
	if err != nil {
		return nil, err
	}
	if !r.found() {
		return nil, errorf(op, r.path, NotFound, "no such file or directory")
	}
	n := r.last()
	if n == t.root {
		return nil, errorf(op, r.path, Invalid, "cannot delete the root directory")
	}
	if n.IsDir() && len(n.Children()) > 0 && !recursive {
		return nil, errorf(op, r.path, NotEmpty, "directory is not empty (%d entries); delete it recursively", len(n.Children()))
	}
	parent := n.Parent
	if err := t.traverse(op, r.path, c, r.nodes[:len(r.nodes)-1]); err != nil {
		return nil, err
	}
	if err := t.check(op, r.path, c, parent, Write|Execute); err != nil {
		return nil, err
	}
	if err := t.checkSticky(op, r.path, c, parent, n); err != nil {
		return nil, err
	}
	if err := t.checkSubtree(op, r.path, c, n); err != nil {
		return nil, err
	}
	if err := t.checkDeleteSnapshottable(op, "deleted", r.path, n); err != nil {
		return nil, err
	}
	ns, ds := usage(n)
	charge(parent, nil, -ns, -ds)
	parent.removeChildAt(r.slot, n)
	parent.MTime = now
	return t.forget(n, nil), nil
}

// Rename moves src to dst with HDFS semantics: if dst is an existing
// directory, src moves into it under its own name; an existing file at the
// destination is an error. It returns the new path.
func (t *Tree) Rename(c Caller, src, dst string, now int64) (string, error) {
	const op = "rename"
	rs, err := t.resolve(op, src)
	if err != nil {
		return "", err
	}
	rd, err := t.resolve(op, dst)
	if err != nil {
		return "", err
	}
	label := rs.path + " to " + rd.path
	if !rs.found() {
		return "", errorf(op, label, NotFound, "%s: no such file or directory", rs.path)
	}
	s := rs.last()
	if s == t.root {
		return "", errorf(op, label, Invalid, "cannot rename the root directory")
	}
	var dparent *INode
	dname, dslot := rd.name(), rd.slot
	switch {
	case rd.found() && rd.last() == s:
		return s.Path(), nil
	case rd.found() && rd.last().IsDir():
		dparent, dname = rd.last(), s.Name
		var exists bool
		if dslot, exists = dparent.childIndex(dname); exists {
			if existing := dparent.feat.children[dslot]; existing != s {
				return "", errorf(op, label, Exists, "destination %s exists", existing.Path())
			}
			return s.Path(), nil
		}
	case rd.found():
		return "", errorf(op, label, Exists, "destination %s exists", rd.path)
	case len(rd.nodes) < len(rd.names):
		return "", errorf(op, label, NotFound, "destination's parent %s does not exist", Join(rd.names[:len(rd.names)-1]))
	default:
		dparent = rd.last()
	}
	for p := dparent; p != nil; p = p.Parent {
		if p == s {
			return "", errorf(op, label, Invalid, "cannot move %s into itself", rs.path)
		}
	}
	if err := t.checkMove(op, label, c, rs, s, rd, dparent); err != nil {
		return "", err
	}
	// Replay (trusted) applies what was accepted when logged: this check
	// came later than renames of such directories, which edit logs may
	// hold. (Delete's check is as old as snapshots: a logged delete passed
	// it, and trash housekeeping, also trusted, must not drop snapshots.)
	if s.IsDir() && !c.Trusted {
		if err := t.checkDeleteSnapshottable(op, "renamed", label, s); err != nil {
			return "", err
		}
	}
	if err := moveQuota(op, label, s, dparent); err != nil {
		return "", err
	}
	s.Parent.MTime = now
	move(s, rs.slot, dparent, dslot, dname)
	dparent.MTime = now
	return s.Path(), nil
}

// move takes s out of its parent, where it sits at sslot, and puts it into
// dparent under name, whose place there was dslot before s left (slots
// from resolutions; each is checked before it is trusted).
func move(s *INode, sslot int, dparent *INode, dslot int, name string) {
	from := s.Parent
	if from == dparent {
		// Within one directory (a job's commit, a temporary name made
		// final) only the entries between the two places shift.
		ch := from.Children()
		prev := dslot - 1 // the entry that will precede name, s aside
		if prev == sslot {
			prev--
		}
		if sslot >= 0 && sslot < len(ch) && ch[sslot] == s && dslot >= 0 && dslot <= len(ch) &&
			(prev < 0 || ch[prev].Name < name) && (dslot == len(ch) || ch[dslot].Name > name) {
			s.Name = name
			to := dslot // s's index once moved
			if dslot > sslot {
				to--
			}
			shift(ch, sslot, to, s)
			if keys := from.feat.keys; keys != nil {
				shift(keys, sslot, to, nameKey(name))
			}
			return
		}
	}
	from.removeChildAt(sslot, s)
	if from == dparent && sslot >= 0 && dslot > sslot {
		dslot--
	}
	s.Name = name
	dparent.addChildAt(dslot, s)
}

// shift moves the element at i of s to j, shifting those between, and
// sets it to v.
func shift[T any](s []T, i, j int, v T) {
	if j > i {
		copy(s[i:j], s[i+1:j+1])
	} else {
		copy(s[j+1:i+1], s[j:i])
	}
	s[j] = v
}

func (t *Tree) checkMove(op, label string, c Caller, rs resolution, s *INode, rd resolution, dparent *INode) error {
	if err := t.traverse(op, label, c, rs.nodes[:len(rs.nodes)-1]); err != nil {
		return err
	}
	if err := t.check(op, label, c, s.Parent, Write|Execute); err != nil {
		return err
	}
	if err := t.checkSticky(op, label, c, s.Parent, s); err != nil {
		return err
	}
	for _, n := range rd.nodes {
		if n == dparent {
			break
		}
		if err := t.traverse(op, label, c, []*INode{n}); err != nil {
			return err
		}
	}
	return t.check(op, label, c, dparent, Write|Execute)
}

// SetReplication changes a file's replication factor and returns the file.
func (t *Tree) SetReplication(c Caller, path string, repl int) (*INode, error) {
	const op = "setrep"
	n, err := t.Stat(c, op, path)
	if err != nil {
		return nil, err
	}
	if n.IsDir() {
		return nil, errorf(op, n.Path(), Precondition, "is a directory; replication is set per file")
	}
	if repl < 0 || repl > MaxReplication {
		return nil, errorf(op, n.Path(), Invalid, "replication %d is outside 0..%d", repl, MaxReplication)
	}
	if err := t.check(op, n.Path(), c, n, Write); err != nil {
		return nil, err
	}
	before := DiskCharge(n)
	old := n.Replication()
	n.SetReplication(repl)
	delta := DiskCharge(n) - before
	if err := verifyQuota(op, n.Path(), n.Parent, nil, 0, delta); err != nil {
		n.SetReplication(old)
		return nil, err
	}
	charge(n.Parent, nil, 0, delta)
	return n, nil
}

// SetPermission changes the mode bits; only the owner or a superuser may.
func (t *Tree) SetPermission(c Caller, path string, perm uint16) error {
	const op = "chmod"
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	if !t.isSuper(c) && c.User != n.Owner() {
		return errorf(op, n.Path(), Denied, "permission denied: only the owner (%s) or a superuser may change the mode", n.Owner())
	}
	n.SetPerm(perm)
	return nil
}

// SetOwner changes owner and/or group ("" keeps the current one). Only a
// superuser may change the owner; the owner may change the group to one of
// their own groups.
func (t *Tree) SetOwner(c Caller, path, owner, group string) error {
	const op = "chown"
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	if !t.isSuper(c) {
		switch {
		case owner != "" && owner != n.Owner():
			return errorf(op, n.Path(), Denied, "permission denied: only a superuser may change the owner")
		case c.User != n.Owner():
			return errorf(op, n.Path(), Denied, "permission denied: only the owner (%s) or a superuser may change the group", n.Owner())
		case group != "" && !slices.Contains(c.Groups, group):
			return errorf(op, n.Path(), Denied, "permission denied: %s is not a member of group %s", c.User, group)
		}
	}
	if err := n.SetOwner(owner, group); err != nil {
		return errorf(op, n.Path(), Invalid, "%v", err)
	}
	return nil
}

// Summary totals a subtree.
type Summary struct {
	Length        int64
	Files         int64
	Directories   int64 // including the root of the subtree if it is one
	SpaceConsumed int64 // length x replication
	// The subtree root's quotas, QuotaReset when not set.
	Quota, SpaceQuota int64
	// TypeQuotas are its storage-type quotas (nil when none); what counts
	// against each is TypeUsage(type, SpaceConsumed).
	TypeQuotas map[string]int64
}

// ContentSummary totals the subtree at path.
func (t *Tree) ContentSummary(c Caller, path string) (Summary, error) {
	n, err := t.Stat(c, "summary", path)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Quota: QuotaReset, SpaceQuota: QuotaReset}
	if n.Quota() != nil {
		s.Quota, s.SpaceQuota = n.Quota().NS, n.Quota().DS
		s.TypeQuotas = maps.Clone(n.Quota().Types)
	}
	var walk func(*INode)
	walk = func(n *INode) {
		if !n.IsDir() {
			l := n.Length()
			s.Files++
			s.Length = AddSpace(s.Length, l)
			s.SpaceConsumed = AddSpace(s.SpaceConsumed, Space(l, n.Replication()))
			return
		}
		s.Directories++
		for _, ch := range n.Children() {
			walk(ch)
		}
	}
	walk(n)
	return s, nil
}

// CloseFile marks a file complete: no writer any more.
func (t *Tree) CloseFile(f *INode, now int64) {
	f.SetWriter(nil)
	f.MTime = now
}

// AddBlock appends a block to a file being written.
func (t *Tree) AddBlock(f *INode, b *blockmap.Block) {
	f.Blocks = append(f.Blocks, b)
}

// TruncateBlocks drops the file's blocks from index i on and returns them.
func (t *Tree) TruncateBlocks(f *INode, i int) []*blockmap.Block {
	if i >= len(f.Blocks) {
		return nil
	}
	dropped := slices.Clone(f.Blocks[i:])
	f.Blocks = f.Blocks[:i]
	return dropped
}

// BlockIndex is the position of block id in the file, or -1.
func (f *INode) BlockIndex(id uint64) int {
	for i, b := range f.Blocks {
		if b.ID == id {
			return i
		}
	}
	return -1
}

// Open returns the file at path for reading: it must be a file and the
// caller must be allowed to read it.
func (t *Tree) Open(c Caller, path string) (*INode, error) {
	n, err := t.Stat(c, "open", path)
	if err != nil {
		return nil, err
	}
	if n.IsDir() {
		return nil, errorf("open", n.Path(), Precondition, "is a directory")
	}
	if err := t.check("open", n.Path(), c, n, Read); err != nil {
		return nil, err
	}
	return n, nil
}
