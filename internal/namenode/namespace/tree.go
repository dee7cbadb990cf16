package namespace

import (
	"sort"
	"strings"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/idtable"
)

// DefaultSupergroup is the group whose members are superusers, and the
// group of the root directory.
const DefaultSupergroup = "supergroup"

// RootID is the inode id of "/".
const RootID = 1

// INode is a directory or a file.
type INode struct {
	ID     uint64
	Name   string
	Parent *INode
	Dir    bool
	Perm   uint16 // permission bits incl. sticky (01000)
	Owner  string
	Group  string
	MTime  int64 // unix milliseconds
	ATime  int64

	children []*INode // directories: sorted by name
	// Quota is set on directories with a name or space quota (HDFS's
	// DirectoryWithQuotaFeature); it also caches their subtree's usage.
	Quota *Quota
	// XAttrs are the extended attributes, sorted by name.
	XAttrs []XAttr

	// Files only.
	Replication int
	BlockSize   int64
	Blocks      []*blockmap.Block
	Writer      *Writer // non-nil while the file is open for writing
}

// Writer is the client writing a file (the lease holder).
type Writer struct {
	Client string
	Host   string
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
	var names []string
	for p := n; p.Parent != nil; p = p.Parent {
		names = append(names, p.Name)
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return "/" + strings.Join(names, "/")
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
func (n *INode) NumChildren() int { return len(n.children) }

// Children returns a directory's entries in name order (shared; do not
// modify).
func (n *INode) Children() []*INode { return n.children }

func (n *INode) childIndex(name string) (int, bool) {
	i := sort.Search(len(n.children), func(i int) bool { return n.children[i].Name >= name })
	return i, i < len(n.children) && n.children[i].Name == name
}

func (n *INode) child(name string) *INode {
	if i, ok := n.childIndex(name); ok {
		return n.children[i]
	}
	return nil
}

func (n *INode) addChild(c *INode) {
	i, _ := n.childIndex(c.Name)
	n.children = append(n.children, nil)
	copy(n.children[i+1:], n.children[i:])
	n.children[i] = c
	c.Parent = n
}

func (n *INode) removeChild(c *INode) {
	if i, ok := n.childIndex(c.Name); ok && n.children[i] == c {
		n.children = append(n.children[:i], n.children[i+1:]...)
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
	// names interns owner and group names: a namespace has a handful of
	// them and millions of inodes, which would otherwise each hold their
	// own copies (decoded from an image record, or from the request that
	// made them). HDFS keeps them in a table too (SerialNumberManager).
	names  map[string]string
	extras // ACLs, storage policies, snapshots (snapshot.go)
}

// intern returns the table's copy of s, adding s if new.
func (t *Tree) intern(s string) string {
	if v, ok := t.names[s]; ok {
		return v
	}
	if t.names == nil {
		t.names = map[string]string{}
	}
	s = strings.Clone(s) // not a slice of a bigger buffer
	t.names[s] = s
	return s
}

// New returns a tree holding only "/".
func New(cfg Config) *Tree {
	if cfg.Supergroup == "" {
		cfg.Supergroup = DefaultSupergroup
	}
	if cfg.RootPerm == 0 {
		cfg.RootPerm = 0o755
	}
	root := &INode{ID: RootID, Dir: true, Perm: cfg.RootPerm, Owner: cfg.Superuser, Group: cfg.Supergroup, MTime: cfg.Now, ATime: cfg.Now}
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
	r := resolution{path: Join(names), names: names, nodes: []*INode{t.root}}
	if hasSnapshotComponent(names) {
		return t.resolveSnapshot(op, r)
	}
	cur := t.root
	for i, n := range names {
		if !cur.Dir {
			return r, errorf(op, r.path, NotDirectory, "%s is not a directory", Join(names[:i]))
		}
		next := cur.child(n)
		if next == nil {
			break
		}
		r.nodes = append(r.nodes, next)
		cur = next
	}
	return r, nil
}

func (t *Tree) newINode(name string, dir bool, perm uint16, owner, group string, now int64) *INode {
	t.lastID++
	n := &INode{ID: t.lastID, Name: name, Dir: dir, Perm: perm, Owner: t.intern(owner), Group: t.intern(group), MTime: now, ATime: now}
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
	if !n.Dir {
		t.files--
		return append(files, n)
	}
	t.dirs--
	for _, c := range n.children {
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
		for _, c := range n.children {
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
		t.root.Perm, t.root.Owner, t.root.Group, t.root.MTime, t.root.ATime = n.Perm, n.Owner, n.Group, n.MTime, n.ATime
		t.root.Quota, t.root.XAttrs = n.Quota, n.XAttrs
		return nil
	}
	p := t.byID.Get(parentID)
	switch {
	case p == nil:
		return errorf("restore", n.Name, Invalid, "parent inode %d not found", parentID)
	case !p.Dir:
		return errorf("restore", p.Path(), NotDirectory, "parent of inode %d is not a directory", n.ID)
	case p.child(n.Name) != nil:
		return errorf("restore", p.Path(), Exists, "duplicate entry %q", n.Name)
	case t.byID.Get(n.ID) != nil:
		return errorf("restore", n.Name, Exists, "duplicate inode id %d", n.ID)
	}
	n.children = nil
	n.Owner, n.Group = t.intern(n.Owner), t.intern(n.Group)
	p.addChild(n)
	t.byID.Put(n)
	if n.Dir {
		t.dirs++
	} else {
		t.files++
	}
	t.lastID = max(t.lastID, n.ID)
	return nil
}

// SetLastID restores the inode id counter from an image.
func (t *Tree) SetLastID(id uint64) { t.lastID = max(t.lastID, id) }
