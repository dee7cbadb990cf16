package namespace

import (
	"fmt"
	"slices"
	"smarth/internal/fsattr"
	"sort"
	"strings"
	"time"

	"smarth/internal/namenode/blockmap"
)

// Snapshots, with HDFS's documented semantics (the "HDFS Snapshots"
// guide): a directory made snapshottable by a superuser gets read-only
// images of its subtree under DIR/.snapshot/NAME; ".snapshot" is a reserved
// name; nested snapshottable directories are refused; a snapshottable
// directory with snapshots can neither be deleted nor renamed (nor any
// directory above it) nor be made unsnapshottable.
//
// Design (simple and stated): a snapshot is a copy of the subtree's inode
// metadata made at creation time: new INode values with the same ids,
// names, modes, owners, times, extended attributes, ACLs and storage
// policies, files with a frozen copy of their complete blocks (id, stamp,
// length) and of a partial last block an open append reopened (as it was
// when reopened), sharing the blocks themselves by id. Reading a snapshot file
// therefore reads the same replicas up to the length the file had. It
// costs one INode per file and directory of the subtree per snapshot
// (HDFS's copy-on-write diffs cost only what changed), so it suits
// snapshots of modest subtrees; docs/architecture.md says so.
//
// Block lifetime: every frozen block adds one to a reference count per
// block id. Blocks leaving the live namespace (delete, overwrite,
// truncation) that a snapshot still references stay in the block map
// (their replicas stay on the datanodes) until the last snapshot that
// references them is deleted; DeleteSnapshot returns the ids whose count
// dropped to zero so that the namenode can drop those no live file holds.

// SnapshotDir is the reserved name through which snapshots are reached.
const SnapshotDir = ".snapshot"

// MaxSnapshots is HDFS's limit of snapshots per directory.
const MaxSnapshots = 65536

// snapDir is a snapshottable directory and its snapshots.
type snapDir struct {
	dir *INode
	// dot is the parent of the snapshot roots, named ".snapshot" with dir
	// as its parent, so that a snapshot inode's Path() is its snapshot
	// path; it is never in dir's children. Its children are the roots,
	// sorted by snapshot name.
	dot *INode
}

func (sd *snapDir) roots() []*INode { return sd.dot.Children() }

// extras are the tree's side structures for what few inodes have: ACLs,
// storage policies, snapshots. Inodes without them pay nothing.
type extras struct {
	acls     map[*INode][]ACLEntry
	policies map[*INode]uint8
	snaps    map[*INode]*snapDir
	snapRefs map[uint64]int32 // block id -> frozen copies in snapshots
}

// forgetExtras drops what a removed live inode had in the side maps.
func (t *Tree) forgetExtras(n *INode) {
	if t.acls != nil {
		delete(t.acls, n)
	}
	if t.policies != nil {
		delete(t.policies, n)
	}
	if t.snaps != nil {
		delete(t.snaps, n)
	}
}

// readOnlyOps are the operations allowed on paths under .snapshot.
// Anything else is refused there: a new operation is read-write until it
// is listed here, so that no mutation can reach a snapshot by omission.
var readOnlyOps = map[string]bool{
	"stat": true, "list": true, "open": true, "summary": true, "getXAttrs": true,
	"listXAttrs": true, "getAclStatus": true, "getStoragePolicy": true, "fsck": true,
	"checksum": true, "snapshotDiff": true, "checkAccess": true,
}

func hasSnapshotComponent(names []string) bool {
	for _, n := range names {
		if n == SnapshotDir {
			return true
		}
	}
	return false
}

// resolveSnapshot is resolve for a path with a ".snapshot" component:
// under a snapshottable directory it enters the snapshots, read-only;
// elsewhere ".snapshot" is a reserved name that no operation may create.
func (t *Tree) resolveSnapshot(op string, r resolution) (resolution, error) {
	cur := t.root
	for i, n := range r.names {
		if !cur.IsDir() {
			return r, errorf(op, r.path, NotDirectory, "%s is not a directory", Join(r.names[:i]))
		}
		if n == SnapshotDir && t.ByID(cur.ID) == cur {
			sd := t.snaps[cur]
			if !readOnlyOps[op] {
				if sd == nil {
					return r, errorf(op, r.path, Invalid, "%q is a reserved name", SnapshotDir)
				}
				return r, errorf(op, r.path, Denied, "Modification on a read-only snapshot is disallowed")
			}
			if sd == nil {
				return r, errorf(op, r.path, NotFound, "no such file or directory (%s is not a snapshottable directory)", cur.Path())
			}
			// A fresh view of .snapshot with the directory's attributes
			// (listing it needs what listing the directory needs).
			v := &INode{ID: cur.ID, Name: SnapshotDir, Parent: cur, status: cur.status, MTime: cur.MTime, ATime: cur.ATime,
				feat: &features{children: sd.roots()}}
			r.nodes = append(r.nodes, v)
			cur = v
			continue
		}
		next := cur.child(n)
		if next == nil {
			break
		}
		r.nodes = append(r.nodes, next)
		cur = next
	}
	if !readOnlyOps[op] {
		// Only reached when ".snapshot" is the missing last name of a path
		// in a snapshot copy or the like: refuse anyway.
		return r, errorf(op, r.path, Denied, "Modification on a read-only snapshot is disallowed")
	}
	return r, nil
}

// InSnapshot reports whether n is an inode of a snapshot (or the
// .snapshot view), i.e. not the live inode of its id.
func (t *Tree) InSnapshot(n *INode) bool { return t.byID.Get(n.ID) != n }

// IsSnapshottable reports whether the live directory n is snapshottable.
func (t *Tree) IsSnapshottable(n *INode) bool { return t.snaps != nil && t.snaps[n] != nil }

// SnapshotRefs is how many snapshot copies of files reference block id.
func (t *Tree) SnapshotRefs(id uint64) int {
	if t.snapRefs == nil {
		return 0
	}
	return int(t.snapRefs[id])
}

// snapshotDirOf resolves path to a live directory for a snapshot
// operation.
func (t *Tree) snapshotDirOf(c Caller, op, path string) (*INode, error) {
	n, err := t.Stat(c, op, path)
	if err != nil {
		return nil, err
	}
	if !n.IsDir() {
		return nil, errorf(op, n.Path(), NotDirectory, "%s is not a directory", n.Path())
	}
	return n, nil
}

// AllowSnapshot makes a directory snapshottable (superusers only). Nested
// snapshottable directories are refused, as HDFS does by default.
func (t *Tree) AllowSnapshot(c Caller, path string) error {
	const op = "allowSnapshot"
	n, err := t.snapshotDirOf(c, op, path)
	if err != nil {
		return err
	}
	if !t.isSuper(c) {
		return errorf(op, n.Path(), Denied, "permission denied: only a superuser may allow snapshots (user %s)", c.User)
	}
	if t.snaps[n] != nil {
		return nil // already snapshottable: success, as HDFS
	}
	for d := range t.snaps {
		if isAncestor(d, n) || isAncestor(n, d) {
			return errorf(op, n.Path(), Precondition, "Nested snapshottable directories not allowed: path=%s, the ancestor or descendant %s is already a snapshottable directory.", n.Path(), d.Path())
		}
	}
	t.makeSnapshottable(n)
	return nil
}

func (t *Tree) makeSnapshottable(n *INode) *snapDir {
	if t.snaps == nil {
		t.snaps = map[*INode]*snapDir{}
	}
	sd := &snapDir{dir: n, dot: &INode{ID: n.ID, Name: SnapshotDir, Parent: n, status: dirBit}}
	t.snaps[n] = sd
	return sd
}

// isAncestor reports whether a is b or above it.
func isAncestor(a, b *INode) bool {
	for p := b; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// DisallowSnapshot makes a directory unsnapshottable; it fails while it
// has snapshots.
func (t *Tree) DisallowSnapshot(c Caller, path string) error {
	const op = "disallowSnapshot"
	n, err := t.snapshotDirOf(c, op, path)
	if err != nil {
		return err
	}
	if !t.isSuper(c) {
		return errorf(op, n.Path(), Denied, "permission denied: only a superuser may disallow snapshots (user %s)", c.User)
	}
	sd := t.snaps[n]
	if sd == nil {
		return nil
	}
	if k := len(sd.roots()); k > 0 {
		return errorf(op, n.Path(), Precondition, "The directory %s has snapshot(s). Please redo the operation after removing all the snapshots.", n.Path())
	}
	delete(t.snaps, n)
	return nil
}

// snapshotOwnerCheck: creating, deleting and renaming snapshots takes the
// directory's owner or a superuser (HDFS checkOwner), on a snapshottable
// directory.
func (t *Tree) snapshotTarget(c Caller, op, path string) (*snapDir, error) {
	n, err := t.snapshotDirOf(c, op, path)
	if err != nil {
		return nil, err
	}
	sd := t.snaps[n]
	if sd == nil {
		return nil, errorf(op, n.Path(), Precondition, "Directory is not a snapshottable directory: %s", n.Path())
	}
	if !t.isSuper(c) && c.User != n.Owner() {
		return nil, errorf(op, n.Path(), Denied, "permission denied: only the owner (%s) or a superuser may manage snapshots of %s", n.Owner(), n.Path())
	}
	return sd, nil
}

func validSnapshotName(op, path, name string) error {
	if err := ValidName(name); err != nil || name == SnapshotDir || strings.ContainsRune(name, '/') {
		return errorf(op, path, Invalid, "invalid snapshot name %q", name)
	}
	return nil
}

// DefaultSnapshotName is HDFS's name for a snapshot created without one:
// "s" followed by the time as yyyyMMdd-HHmmss.SSS (UTC here, so that a
// name does not depend on the namenode's zone).
func DefaultSnapshotName(nowMs int64) string {
	t := time.UnixMilli(nowMs).UTC()
	return fmt.Sprintf("s%04d%02d%02d-%02d%02d%02d.%03d", t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1e6)
}

// CreateSnapshot snapshots the directory at path under name and returns
// the snapshot's path.
func (t *Tree) CreateSnapshot(c Caller, path, name string, now int64) (string, error) {
	const op = "createSnapshot"
	sd, err := t.snapshotTarget(c, op, path)
	if err != nil {
		return "", err
	}
	if err := validSnapshotName(op, sd.dir.Path(), name); err != nil {
		return "", err
	}
	if sd.dot.child(name) != nil {
		return "", errorf(op, sd.dir.Path(), Exists, "Failed to add snapshot: there is already a snapshot with the same name \"%s\".", name)
	}
	if len(sd.roots()) >= MaxSnapshots {
		return "", errorf(op, sd.dir.Path(), Precondition, "Failed to add snapshot: there are already %d snapshot(s) and the snapshot quota is %d", len(sd.roots()), MaxSnapshots)
	}
	root := t.copySubtree(sd.dir, sd.dot)
	root.Name = name
	root.MTime = now // HDFS: a snapshot root's modification time is its creation time
	sd.dot.addChild(root)
	return root.Path(), nil
}

// copySubtree copies n and everything below it as a snapshot.
func (t *Tree) copySubtree(n, parent *INode) *INode {
	c := &INode{ID: n.ID, Name: n.Name, Parent: parent, status: n.status, MTime: n.MTime, ATime: n.ATime, header: n.header}
	if len(n.XAttrs()) > 0 {
		c.SetXAttrs(slices.Clone(n.XAttrs())) // values are replaced, never changed in place
	}
	if acl := t.acl(n); acl != nil {
		t.acls[c] = slices.Clone(acl)
	}
	if p, ok := t.policies[n]; ok {
		t.policies[c] = p
	}
	if !n.IsDir() {
		for _, b := range n.Blocks {
			gs, length := b.GS, b.NumBytes
			if b.State == blockmap.UnderConstruction {
				// Only what a reader sees: the length of the file now. A
				// partial block an append reopened keeps its closed bytes
				// (at the stamp and length it had then); bytes being
				// written are not the snapshot's.
				a := n.Writer()
				if a == nil || a.Appended.ID != b.ID {
					break
				}
				gs, length = a.Appended.GS, a.Appended.NumBytes
			}
			c.Blocks = append(c.Blocks, &blockmap.Block{ID: b.ID, GS: gs, NumBytes: length, State: blockmap.Complete, FileID: n.ID, Expected: n.Replication()})
			t.addRef(b.ID)
		}
		return c
	}
	if len(n.Children()) > 0 {
		children := make([]*INode, len(n.Children()))
		for i, ch := range n.Children() {
			children[i] = t.copySubtree(ch, c)
		}
		c.setChildren(children)
	}
	return c
}

func (t *Tree) addRef(id uint64) {
	if t.snapRefs == nil {
		t.snapRefs = map[uint64]int32{}
	}
	t.snapRefs[id]++
}

// DeleteSnapshot deletes a snapshot. It returns the ids of the blocks no
// snapshot references any more; those no live file holds either are the
// caller's to delete.
func (t *Tree) DeleteSnapshot(c Caller, path, name string) ([]uint64, error) {
	const op = "deleteSnapshot"
	sd, err := t.snapshotTarget(c, op, path)
	if err != nil {
		return nil, err
	}
	root := sd.dot.child(name)
	if root == nil {
		return nil, errorf(op, sd.dir.Path(), NotFound, "Cannot delete snapshot %s from path %s: the snapshot does not exist.", name, sd.dir.Path())
	}
	sd.dot.removeChild(root)
	return t.releaseSnapshot(root, nil), nil
}

// releaseSnapshot drops a snapshot copy's side entries and block
// references, collecting the ids whose count reached zero.
func (t *Tree) releaseSnapshot(n *INode, freed []uint64) []uint64 {
	if t.acls != nil {
		delete(t.acls, n)
	}
	if t.policies != nil {
		delete(t.policies, n)
	}
	for _, b := range n.Blocks {
		if t.snapRefs[b.ID]--; t.snapRefs[b.ID] <= 0 {
			delete(t.snapRefs, b.ID)
			freed = append(freed, b.ID)
		}
	}
	for _, ch := range n.Children() {
		freed = t.releaseSnapshot(ch, freed)
	}
	return freed
}

// RenameSnapshot renames a snapshot.
func (t *Tree) RenameSnapshot(c Caller, path, from, to string) error {
	const op = "renameSnapshot"
	sd, err := t.snapshotTarget(c, op, path)
	if err != nil {
		return err
	}
	if err := validSnapshotName(op, sd.dir.Path(), to); err != nil {
		return err
	}
	root := sd.dot.child(from)
	if root == nil {
		return errorf(op, sd.dir.Path(), NotFound, "The snapshot %s does not exist for directory %s", from, sd.dir.Path())
	}
	if from == to {
		return nil
	}
	if sd.dot.child(to) != nil {
		return errorf(op, sd.dir.Path(), Exists, "The snapshot %s already exists for directory %s", to, sd.dir.Path())
	}
	sd.dot.removeChild(root)
	root.Name = to
	sd.dot.addChild(root)
	return nil
}

// SnapshotInfo describes a snapshot.
type SnapshotInfo struct {
	Name  string
	CTime int64
	Root  *INode
}

// SnapshottableDir is a row of lsSnapshottableDir.
type SnapshottableDir struct {
	Dir       *INode
	Snapshots []SnapshotInfo // by name
}

// SnapshottableDirs lists the snapshottable directories (HDFS
// getSnapshottableDirListing: a superuser sees all of them, anyone else
// those they own), by path.
func (t *Tree) SnapshottableDirs(c Caller) []SnapshottableDir {
	var out []SnapshottableDir
	for d, sd := range t.snaps {
		if !t.isSuper(c) && d.Owner() != c.User {
			continue
		}
		row := SnapshottableDir{Dir: d}
		for _, r := range sd.roots() {
			row.Snapshots = append(row.Snapshots, SnapshotInfo{Name: r.Name, CTime: r.MTime, Root: r})
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir.Path() < out[j].Dir.Path() })
	return out
}

// EachSnapshot visits every snapshottable directory and its snapshots
// (for images), in path and name order.
func (t *Tree) EachSnapshot(fn func(dir *INode, snaps []SnapshotInfo)) {
	for _, row := range t.SnapshottableDirs(Caller{Trusted: true}) {
		fn(row.Dir, row.Snapshots)
	}
}

// RestoreSnapshottable marks the live directory id snapshottable (image
// load).
func (t *Tree) RestoreSnapshottable(id uint64) error {
	n := t.byID.Get(id)
	if n == nil || !n.IsDir() {
		return errorf("restore", fmt.Sprint(id), Invalid, "snapshottable inode %d is not a directory of the tree", id)
	}
	if t.snaps[n] == nil {
		t.makeSnapshottable(n)
	}
	return nil
}

// RestoreSnapshot attaches a snapshot read from an image: root and its
// subtree, built with AttachSnapshotChild; block references are counted.
func (t *Tree) RestoreSnapshot(dirID uint64, root *INode) error {
	sd := t.snaps[t.byID.Get(dirID)]
	if sd == nil {
		return errorf("restore", root.Name, Invalid, "snapshot %q of inode %d, which is not snapshottable", root.Name, dirID)
	}
	if sd.dot.child(root.Name) != nil {
		return errorf("restore", sd.dir.Path(), Exists, "duplicate snapshot %q", root.Name)
	}
	var count func(n *INode)
	count = func(n *INode) {
		for _, b := range n.Blocks {
			t.addRef(b.ID)
		}
		for _, c := range n.Children() {
			count(c)
		}
	}
	count(root)
	sd.dot.addChild(root)
	return nil
}

// AttachSnapshotChild adds c under p while a snapshot is rebuilt from an
// image (children must come in name order).
func AttachSnapshotChild(p, c *INode) error {
	if !p.IsDir() {
		return fmt.Errorf("snapshot inode %d: parent %d is not a directory", c.ID, p.ID)
	}
	if k := len(p.Children()); k > 0 && p.Children()[k-1].Name >= c.Name {
		return fmt.Errorf("snapshot inode %d: entry %q out of order", c.ID, c.Name)
	}
	c.setChildren(nil)
	p.addChildAt(len(p.Children()), c) // last: checked above
	return nil
}

// checkDeleteSnapshottable refuses to delete or rename n (verb says which)
// if it, or a directory below it, is snapshottable with snapshots (HDFS
// FSDirSnapshotOp.checkSnapshot; the HDFS Snapshots guide: such a
// directory "can be neither deleted nor renamed before all the snapshots
// are deleted").
func (t *Tree) checkDeleteSnapshottable(op, verb, path string, n *INode) error {
	for d, sd := range t.snaps {
		if len(sd.roots()) > 0 && isAncestor(n, d) {
			return errorf(op, path, Precondition, "The directory %s cannot be %s since %s is snapshottable and already has snapshots", n.Path(), verb, d.Path())
		}
	}
	return nil
}

// DiffEntry: see fsattr.
type DiffEntry = fsattr.DiffEntry

// SnapshotDiff compares two snapshots of the directory at path (HDFS
// getSnapshotDiffReport); "" or "." names the directory's current state.
func (t *Tree) SnapshotDiff(c Caller, path, from, to string) ([]DiffEntry, error) {
	const op = "snapshotDiff"
	n, err := t.snapshotDirOf(c, op, path)
	if err != nil {
		return nil, err
	}
	sd := t.snaps[n]
	if sd == nil {
		return nil, errorf(op, n.Path(), Precondition, "Directory is not a snapshottable directory: %s", n.Path())
	}
	if err := t.check(op, n.Path(), c, n, Read|Execute); err != nil {
		return nil, err
	}
	pick := func(name string) (*INode, error) {
		if name == "" || name == "." {
			return n, nil
		}
		r := sd.dot.child(name)
		if r == nil {
			return nil, errorf(op, n.Path(), NotFound, "Cannot find the snapshot of directory %s with name %s", n.Path(), name)
		}
		return r, nil
	}
	a, err := pick(from)
	if err != nil {
		return nil, err
	}
	b, err := pick(to)
	if err != nil {
		return nil, err
	}
	before, after := t.indexSubtree(a), t.indexSubtree(b)
	var out []DiffEntry
	for id, y := range after.nodes {
		x, ok := before.nodes[id]
		switch {
		case !ok:
			if _, parentOld := before.nodes[y.Parent.ID]; !parentOld {
				continue // inside a created directory: only its top is listed
			}
			out = append(out, DiffEntry{Kind: "+", Path: after.paths[id]})
		case id != b.ID && (x.Name != y.Name || x.Parent.ID != y.Parent.ID):
			out = append(out, DiffEntry{Kind: "R", Path: before.paths[id], Target: after.paths[id]})
		case t.changed(x, y):
			out = append(out, DiffEntry{Kind: "M", Path: after.paths[id]})
		}
	}
	for id, x := range before.nodes {
		if _, ok := after.nodes[id]; ok {
			continue
		}
		if _, parentKept := after.nodes[x.Parent.ID]; !parentKept {
			continue // inside a deleted directory
		}
		out = append(out, DiffEntry{Kind: "-", Path: before.paths[id]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Kind < out[j].Kind
	})
	return out, nil
}

type subtreeIndex struct {
	nodes map[uint64]*INode
	paths map[uint64]string
}

func (t *Tree) indexSubtree(root *INode) subtreeIndex {
	ix := subtreeIndex{nodes: map[uint64]*INode{}, paths: map[uint64]string{}}
	var walk func(n *INode, rel string)
	walk = func(n *INode, rel string) {
		ix.nodes[n.ID], ix.paths[n.ID] = n, rel
		for _, c := range n.Children() {
			walk(c, rel+"/"+c.Name)
		}
	}
	walk(root, ".")
	return ix
}

// changed reports whether an inode differs between two states: its
// attributes, a file's blocks, a directory's entries.
func (t *Tree) changed(x, y *INode) bool {
	if !sameStatus(x, y) || x.Replication() != y.Replication() ||
		!slices.EqualFunc(x.XAttrs(), y.XAttrs(), func(a, b XAttr) bool { return a.Name == b.Name && string(a.Value) == string(b.Value) }) ||
		!slices.Equal(t.acl(x), t.acl(y)) {
		return true
	}
	if !x.IsDir() {
		if x.Length() != y.Length() || len(x.Blocks) != len(y.Blocks) {
			return true
		}
		for i := range x.Blocks {
			if x.Blocks[i].ID != y.Blocks[i].ID || x.Blocks[i].NumBytes != y.Blocks[i].NumBytes {
				return true
			}
		}
		return x.MTime != y.MTime
	}
	if len(x.Children()) != len(y.Children()) {
		return true
	}
	for i := range x.Children() {
		if x.Children()[i].ID != y.Children()[i].ID || x.Children()[i].Name != y.Children()[i].Name {
			return true
		}
	}
	return false
}
