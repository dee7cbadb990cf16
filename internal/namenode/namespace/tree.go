package namespace

import (
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/idtable"
)

// DefaultSupergroup is the group whose members are superusers, and the
// group of the root directory.
const DefaultSupergroup = "supergroup"

// RootID is the inode id of "/".
const RootID = 1

// INode is a directory or a file. It is kept small (HDFS's INode is too):
// a namespace holds millions. Owner, group, permission and the directory
// flag are one word of serials and bits, a file's replication and block
// size another, and what few inodes have (children, quota, extended
// attributes, a writer) hangs off one pointer that is nil for most files.
type INode struct {
	ID     uint64
	Name   string
	Parent *INode
	status uint64 // owner and group serials, dir flag, permission (names.go)
	MTime  int64  // unix milliseconds
	ATime  int64
	header uint64 // files: replication and preferred block size (names.go)
	feat   *features

	// Files only.
	Blocks []*blockmap.Block
}

// features is what only some inodes have (HDFS's INode features).
type features struct {
	children []*INode // directories: sorted by name
	// keys, in a directory that has held keyedMin entries or more, is
	// each child's name key (nameKey), in children's order: a lookup
	// binary-searches these contiguous numbers and reads one inode at the
	// end, instead of following a pointer to every probed inode and its
	// name (a cache miss or two per probe in a directory of thousands).
	// 8 bytes per entry, in large directories only.
	keys []uint64
	// quota is set on directories with a name or space quota (HDFS's
	// DirectoryWithQuotaFeature); it also caches their subtree's usage.
	quota *Quota
	// xattrs are the extended attributes, sorted by name.
	xattrs []XAttr
	writer *Writer // non-nil while the file is open for writing
}

// NewINode returns a detached inode with the given attributes (for
// decoding an image; Restore links it into a tree).
func NewINode(id uint64, name string, dir bool, perm uint16, owner, group string, mtime, atime int64) (*INode, error) {
	n := &INode{ID: id, Name: name, MTime: mtime, ATime: atime}
	if err := n.setStatus(dir, perm, owner, group); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *INode) setStatus(dir bool, perm uint16, owner, group string) error {
	u, err := nameSerial(owner)
	if err != nil {
		return err
	}
	g, err := nameSerial(group)
	if err != nil {
		return err
	}
	n.status = packStatus(dir, perm, u, g)
	return nil
}

// IsDir tells a directory from a file.
func (n *INode) IsDir() bool { return n.status&dirBit != 0 }

// Perm is the permission bits, sticky bit included (01000).
func (n *INode) Perm() uint16 { return uint16(n.status & permMask) }

// SetPerm replaces the permission bits (bits outside 07777 are dropped).
func (n *INode) SetPerm(perm uint16) { n.status = n.status&^permMask | uint64(perm&permMask) }

// Owner and Group are the inode's owner and group names.
func (n *INode) Owner() string { return nameOf(uint32(n.status >> userShift & serialMask)) }
func (n *INode) Group() string { return nameOf(uint32(n.status >> groupShift & serialMask)) }

// SetOwner replaces the owner and group ("" keeps the current one). It
// fails only when the process has seen too many distinct names.
func (n *INode) SetOwner(owner, group string) error {
	s := n.status
	if owner != "" {
		v, err := nameSerial(owner)
		if err != nil {
			return err
		}
		s = s&^(serialMask<<userShift) | uint64(v)<<userShift
	}
	if group != "" {
		v, err := nameSerial(group)
		if err != nil {
			return err
		}
		s = s&^(serialMask<<groupShift) | uint64(v)<<groupShift
	}
	n.status = s
	return nil
}

// sameStatus tells whether two inodes have the same owner, group,
// permission and kind.
func sameStatus(x, y *INode) bool { return x.status == y.status }

// Replication is a file's replication factor.
func (n *INode) Replication() int { return int(n.header >> blockSizeBits) }

// BlockSize is a file's preferred block size.
func (n *INode) BlockSize() int64 { return int64(n.header & MaxBlockSize) }

// SetReplication sets a file's replication factor, which must be within
// 0..MaxReplication (callers check user input against their own limits).
func (n *INode) SetReplication(r int) {
	n.header = n.header&MaxBlockSize | uint64(uint16(r))<<blockSizeBits
}

// SetBlockSize sets a file's preferred block size, within 0..MaxBlockSize.
func (n *INode) SetBlockSize(bs int64) {
	n.header = n.header&^MaxBlockSize | uint64(bs)&MaxBlockSize
}

// feature returns the inode's side structure, made if missing.
func (n *INode) feature() *features {
	if n.feat == nil {
		n.feat = &features{}
	}
	return n.feat
}

// dropEmptyFeature frees the side structure once nothing is in it.
func (n *INode) dropEmptyFeature() {
	if f := n.feat; f != nil && f.children == nil && f.quota == nil && f.xattrs == nil && f.writer == nil {
		n.feat = nil
	}
}

// Quota is a directory's quota and usage, nil without a quota.
func (n *INode) Quota() *Quota {
	if n.feat == nil {
		return nil
	}
	return n.feat.quota
}

// SetQuota sets or (nil) clears a directory's quota.
func (n *INode) SetQuota(q *Quota) {
	if q == nil && n.feat == nil {
		return
	}
	n.feature().quota = q
	n.dropEmptyFeature()
}

// XAttrs are the extended attributes, sorted by name (shared; do not
// modify).
func (n *INode) XAttrs() []XAttr {
	if n.feat == nil {
		return nil
	}
	return n.feat.xattrs
}

// SetXAttrs replaces the extended attributes (sorted by name).
func (n *INode) SetXAttrs(x []XAttr) {
	if len(x) == 0 {
		x = nil
		if n.feat == nil {
			return
		}
	}
	n.feature().xattrs = x
	n.dropEmptyFeature()
}

// Writer is the client writing the file, nil when it is not open.
func (n *INode) Writer() *Writer {
	if n.feat == nil {
		return nil
	}
	return n.feat.writer
}

// SetWriter sets or (nil) clears the file's writer.
func (n *INode) SetWriter(w *Writer) {
	if w == nil && n.feat == nil {
		return
	}
	n.feature().writer = w
	n.dropEmptyFeature()
}

// Writer is the client writing a file (the lease holder).
type Writer struct {
	Client string
	Host   string
	// User is the authenticated user who opened the file (create or
	// append): every later call on the open file must come from them,
	// whatever client name it quotes, since client names are not
	// secrets. Empty for files opened before the user was recorded.
	User string
	// Appended is the partial last block an append reopened as it was
	// then (id, stamp, length): its bytes were closed before the append,
	// so a snapshot taken while the append is open holds them (HDFS
	// records the file's length at snapshot time). Zero ID: none.
	Appended AppendedBlock
	// CopySource is, while a truncate cuts inside a block a snapshot
	// holds (copy-on-truncate), that block as it was (id, stamp, length):
	// the file's last block is a new block that recovery fills with its
	// prefix, and the source stays for the snapshot. Zero ID: none.
	CopySource AppendedBlock
}

// AppendedBlock is a block reopened by an append, as it was when closed
// (or the source of a copy-on-truncate).
type AppendedBlock struct {
	ID, GS   uint64
	NumBytes int64
}

// Path is the inode's absolute path.
func (n *INode) Path() string {
	if n.Parent == nil {
		return "/"
	}
	// One allocation, filled from the end: a path is built for every
	// rename's result and many messages, and the parent walk is cheap.
	size := 0
	for p := n; p.Parent != nil; p = p.Parent {
		size += 1 + len(p.Name)
	}
	b := make([]byte, size)
	i := size
	for p := n; p.Parent != nil; p = p.Parent {
		i -= len(p.Name)
		copy(b[i:], p.Name)
		i--
		b[i] = '/'
	}
	return unsafe.String(&b[0], size) // b is not touched again
}

// Length is the file's length: the sum of its blocks whose length is known
// (a block still being written does not count).
func (n *INode) Length() int64 {
	var l int64
	for _, b := range n.Blocks {
		if b.State != blockmap.UnderConstruction {
			l += b.NumBytes
		}
	}
	return l
}

// NumChildren is the number of entries of a directory.
func (n *INode) NumChildren() int { return len(n.Children()) }

// Children returns a directory's entries in name order (shared; do not
// modify).
func (n *INode) Children() []*INode {
	if n.feat == nil {
		return nil
	}
	return n.feat.children
}

// setChildren replaces a directory's entries (sorted by name).
func (n *INode) setChildren(c []*INode) {
	if c == nil && n.feat == nil {
		return
	}
	f := n.feature()
	f.children = c
	f.rekey()
	n.dropEmptyFeature()
}

func (n *INode) childIndex(name string) (int, bool) {
	f := n.feat
	if f == nil {
		return 0, false
	}
	children := f.children
	if f.keys == nil {
		i := sort.Search(len(children), func(i int) bool { return children[i].Name >= name })
		return i, i < len(children) && children[i].Name == name
	}
	// The first entry whose key is at least name's, then, among those
	// sharing name's key (names alike in their first 8 bytes), the first
	// whose name is at least name.
	k, keys := nameKey(name), f.keys
	lo, hi := 0, len(keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if keys[m] < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for hi = len(keys); lo < hi; {
		m := int(uint(lo+hi) >> 1)
		if keys[m] == k && children[m].Name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(children) && keys[lo] == k && children[lo].Name == name
}

// keyedMin is the size at which a directory starts keeping name keys.
const keyedMin = 64

// nameKey is name's first 8 bytes as a big-endian number, zero-padded:
// names in byte order have keys in the same order (none holds a NUL byte,
// so a shorter name sorts below a longer one it begins), and names of at
// most 8 bytes have keys of their own.
func nameKey(name string) uint64 {
	var b [8]byte
	copy(b[:], name)
	return binary.BigEndian.Uint64(b[:])
}

// rekey builds f's keys from its children when it holds keyedMin entries
// or more, and drops them otherwise. After that, addChildAt and
// removeChildAt keep the keys in step (removeChildAt drops them when the
// directory empties).
func (f *features) rekey() {
	if len(f.children) < keyedMin {
		f.keys = nil
		return
	}
	f.keys = make([]uint64, len(f.children))
	for i, c := range f.children {
		f.keys[i] = nameKey(c.Name)
	}
}

func (n *INode) child(name string) *INode {
	if i, ok := n.childIndex(name); ok {
		return n.feat.children[i]
	}
	return nil
}

func (n *INode) addChild(c *INode) { n.addChildAt(-1, c) }

// addChildAt inserts c among n's children at hint, the slot a resolution
// found for c's name (resolution.slot), when that is still its place, else
// where a search puts it: an op that has just looked the name up need not
// search a large directory again.
func (n *INode) addChildAt(hint int, c *INode) {
	f := n.feature()
	ch := f.children
	i := hint
	if i < 0 || i > len(ch) || i > 0 && ch[i-1].Name >= c.Name || i < len(ch) && ch[i].Name < c.Name {
		i, _ = n.childIndex(c.Name)
	}
	f.children = slices.Insert(ch, i, c)
	c.Parent = n
	switch {
	case f.keys != nil:
		f.keys = slices.Insert(f.keys, i, nameKey(c.Name))
	case len(f.children) >= keyedMin:
		f.rekey()
	}
}

func (n *INode) removeChild(c *INode) { n.removeChildAt(-1, c) }

// removeChildAt removes c from n's children; hint is c's slot when the
// caller knows it (resolution.slot), checked before it is trusted.
func (n *INode) removeChildAt(hint int, c *INode) {
	ch := n.Children()
	i := hint
	if i < 0 || i >= len(ch) || ch[i] != c {
		var ok bool
		if i, ok = n.childIndex(c.Name); !ok || ch[i] != c {
			return
		}
	}
	// An empty directory keeps its (empty) slice: it is refilled as often
	// as not.
	f := n.feat
	f.children = append(ch[:i], ch[i+1:]...)
	if f.keys != nil {
		f.keys = append(f.keys[:i], f.keys[i+1:]...)
		if len(f.children) == 0 {
			f.keys = nil
		}
	}
}

// Config sets up a tree.
type Config struct {
	Superuser   string // owner of "/"; bypasses permission checks
	Supergroup  string // members are superusers too; default DefaultSupergroup
	Permissions bool   // check permission bits at all
	RootPerm    uint16 // default 0755
	Now         int64  // root's times
	// Extended attribute limits; 0 means HDFS's default.
	MaxXAttrsPerInode int
	MaxXAttrSize      int
}

// Tree is the namespace. It is not safe for concurrent use.
type Tree struct {
	cfg    Config
	root   *INode
	byID   *idtable.Table[INode]
	lastID uint64
	files  int
	dirs   int
	extras // ACLs, storage policies, snapshots (snapshot.go)
}

// New returns a tree holding only "/".
func New(cfg Config) *Tree {
	if cfg.Supergroup == "" {
		cfg.Supergroup = DefaultSupergroup
	}
	if cfg.RootPerm == 0 {
		cfg.RootPerm = 0o755
	}
	root := &INode{ID: RootID, MTime: cfg.Now, ATime: cfg.Now}
	if err := root.setStatus(true, cfg.RootPerm, cfg.Superuser, cfg.Supergroup); err != nil {
		panic(err) // the table is full before the namespace exists
	}
	byID := idtable.New(func(n *INode) uint64 { return n.ID })
	byID.Put(root)
	return &Tree{cfg: cfg, root: root, byID: byID, lastID: RootID, dirs: 1}
}

// Root returns "/".
func (t *Tree) Root() *INode { return t.root }

// Files and Dirs count the inodes (Dirs includes "/").
func (t *Tree) Files() int { return t.files }
func (t *Tree) Dirs() int  { return t.dirs }

// LastID is the last inode id handed out (persisted in images).
func (t *Tree) LastID() uint64 { return t.lastID }

// SetPermissions switches permission checking (a config change on restart).
func (t *Tree) SetPermissions(on bool) { t.cfg.Permissions = on }

// ByID returns the inode with the given id, or nil.
func (t *Tree) ByID(id uint64) *INode { return t.byID.Get(id) }

// Lookup returns the inode at path without permission checks.
func (t *Tree) Lookup(path string) (*INode, error) {
	r, err := t.resolve("lookup", path)
	if err != nil {
		return nil, err
	}
	if !r.found() {
		return nil, errorf("lookup", path, NotFound, "no such file or directory")
	}
	return r.last(), nil
}

// resolution is a path split into names and the inodes found along it:
// nodes[0] is "/", nodes[i] is the inode named names[i-1]. It stops at the
// first missing name.
type resolution struct {
	path  string
	names []string
	nodes []*INode
	// slot is where the walk's last lookup ended in the children of the
	// last node's parent (found) or of the last node (not found): the
	// found name's index, or where the missing name would go. -1 when
	// unknown (the root; snapshot paths).
	slot int
}

func (r resolution) found() bool  { return len(r.nodes) == len(r.names)+1 }
func (r resolution) last() *INode { return r.nodes[len(r.nodes)-1] }
func (r resolution) parent() *INode {
	if len(r.names) == 0 {
		return nil
	}
	if len(r.nodes) >= len(r.names) {
		return r.nodes[len(r.names)-1]
	}
	return nil
}
func (r resolution) name() string {
	if len(r.names) == 0 {
		return ""
	}
	return r.names[len(r.names)-1]
}

// resolve walks path. A file in the middle of the path is an error.
func (t *Tree) resolve(op, path string) (resolution, error) {
	names, err := Components(path)
	if err != nil {
		return resolution{}, errorf(op, path, Invalid, "%v", err)
	}
	r := resolution{path: path, names: names, nodes: make([]*INode, 1, len(names)+1), slot: -1}
	r.nodes[0] = t.root
	r.path = trimSlash(path)
	if hasSnapshotComponent(names) {
		return t.resolveSnapshot(op, r)
	}
	cur := t.root
	for i, n := range names {
		if !cur.IsDir() {
			return r, errorf(op, r.path, NotDirectory, "%s is not a directory", Join(names[:i]))
		}
		j, ok := cur.childIndex(n)
		r.slot = j
		if !ok {
			break
		}
		next := cur.feat.children[j]
		r.nodes = append(r.nodes, next)
		cur = next
	}
	return r, nil
}

// userSerial returns the serial of the caller's name, the owner of what
// it creates. Ops call it after every permission, existence and quota
// check has passed, and before changing anything: the table only grows,
// so interning the name of a caller the op then refuses would let anyone
// (in simple mode the client asserts its name) add a permanent entry per
// refused call; and a full table must still fail the op with nothing
// changed.
func userSerial(op, path string, c Caller) (uint32, error) {
	u, err := nameSerial(c.User)
	if err != nil {
		return 0, errorf(op, path, Invalid, "%v", err)
	}
	return u, nil
}

// newINode makes an inode owned by the user with serial user, in parent's
// group (as HDFS does).
func (t *Tree) newINode(name string, dir bool, perm uint16, user uint32, parent *INode, now int64) *INode {
	t.lastID++
	group := uint32(parent.status >> groupShift & serialMask)
	n := &INode{ID: t.lastID, Name: name, status: packStatus(dir, perm, user, group), MTime: now, ATime: now}
	t.byID.Put(n)
	if dir {
		t.dirs++
	} else {
		t.files++
	}
	return n
}

// forget drops a detached subtree from the id index and the counts and
// returns its files.
func (t *Tree) forget(n *INode, files []*INode) []*INode {
	t.byID.Delete(n.ID)
	t.forgetExtras(n)
	if !n.IsDir() {
		t.files--
		return append(files, n)
	}
	t.dirs--
	for _, c := range n.Children() {
		files = t.forget(c, files)
	}
	return files
}

// Walk visits every inode, parents before children, children in name
// order, until fn returns false.
func (t *Tree) Walk(fn func(*INode) bool) {
	var walk func(n *INode) bool
	walk = func(n *INode) bool {
		if !fn(n) {
			return false
		}
		for _, c := range n.Children() {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	walk(t.root)
}

// Restore inserts an inode read from an image under the inode parentID
// (root's attributes are replaced when n.ID is RootID). Children must come
// after their parents.
func (t *Tree) Restore(parentID uint64, n *INode) error {
	if n.ID == RootID {
		t.root.status, t.root.MTime, t.root.ATime = n.status|dirBit, n.MTime, n.ATime
		t.root.SetQuota(n.Quota())
		t.root.SetXAttrs(n.XAttrs())
		return nil
	}
	p := t.byID.Get(parentID)
	switch {
	case p == nil:
		return errorf("restore", n.Name, Invalid, "parent inode %d not found", parentID)
	case !p.IsDir():
		return errorf("restore", p.Path(), NotDirectory, "parent of inode %d is not a directory", n.ID)
	case p.child(n.Name) != nil:
		return errorf("restore", p.Path(), Exists, "duplicate entry %q", n.Name)
	case t.byID.Get(n.ID) != nil:
		return errorf("restore", n.Name, Exists, "duplicate inode id %d", n.ID)
	}
	if f := n.feat; f != nil && f.children != nil {
		// Its own side structure: n may be a copy of another tree's inode.
		g := *f
		g.children, g.keys = nil, nil
		n.feat = &g
		n.dropEmptyFeature()
	}
	p.addChild(n)
	t.byID.Put(n)
	if n.IsDir() {
		t.dirs++
	} else {
		t.files++
	}
	t.lastID = max(t.lastID, n.ID)
	return nil
}

// SetLastID restores the inode id counter from an image.
func (t *Tree) SetLastID(id uint64) { t.lastID = max(t.lastID, id) }
