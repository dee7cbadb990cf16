package namespace

import (
	"slices"
	"sort"
	"strings"
)

// XAttr is an extended attribute: a name with its namespace prefix
// ("user.checksum") and a value.
type XAttr struct {
	Name  string
	Value []byte
}

// XAttrFlag says what setXAttr may do (HDFS XAttrSetFlag).
type XAttrFlag uint8

const (
	XAttrCreate  XAttrFlag = 1 << iota // may add a new attribute
	XAttrReplace                       // may replace an existing one
)

// Extended attribute limits, HDFS's defaults
// (dfs.namenode.fs-limits.max-xattrs-per-inode / max-xattr-size).
const (
	DefaultMaxXAttrsPerInode = 32
	DefaultMaxXAttrSize      = 16384
)

// xattrNamespaces are HDFS's namespaces. Clients reach user (by the
// permission bits) and trusted (superusers only); system and security are
// HDFS's own, and raw only under /.reserved/raw, which smarth does not
// have, so nobody reaches those through the API.
var xattrNamespaces = []string{"user", "trusted", "system", "security", "raw"}

// NormalizeXAttrName checks a name's namespace prefix and lower-cases it
// (HDFS treats the prefix case-insensitively); "" for a bad name.
func NormalizeXAttrName(name string) string {
	i := strings.IndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return ""
	}
	ns := strings.ToLower(name[:i])
	if !slices.Contains(xattrNamespaces, ns) {
		return ""
	}
	return ns + name[i:]
}

func xattrNamespace(name string) string { return name[:strings.IndexByte(name, '.')] }

// xattrName validates and normalises name for op, naming path on error.
func xattrName(op, path, name string) (string, error) {
	n := NormalizeXAttrName(name)
	if n == "" {
		return "", errorf(op, path, Invalid, "an XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.' (got %q)", name)
	}
	return n, nil
}

// xattrAccess enforces HDFS's XAttrPermissionFilter: user attributes for
// everyone (the permission bits decide), trusted ones for superusers only,
// the rest for nobody.
func (t *Tree) xattrAccess(op, path string, c Caller, name string) error {
	switch xattrNamespace(name) {
	case "user":
		return nil
	case "trusted":
		if t.isSuper(c) {
			return nil
		}
	}
	if c.Trusted {
		return nil
	}
	return errorf(op, path, Denied, "User doesn't have permission for xattr: %s", name)
}

// Attribute errors that are not about the path itself are Precondition
// (HDFS raises plain IOExceptions for them), so that no client mistakes a
// missing attribute for a missing file.

// SetXAttr sets an extended attribute of path. flags say whether it may
// create a new one and/or replace an existing one; the caller needs write
// access (and, in a sticky directory, to own the entry or the directory).
func (t *Tree) SetXAttr(c Caller, path, name string, value []byte, flags XAttrFlag) error {
	const op = "setXAttr"
	n, name, err := t.xattrTarget(op, c, path, name, Write)
	if err != nil {
		return err
	}
	// Limits are the live path's: replay (trusted) applies what was
	// accepted under the limits of its day, whatever they are now.
	if size := len(name) + len(value); size > t.maxXAttrSize() && !c.Trusted {
		return errorf(op, n.Path(), Invalid, "The XAttr is too big. The maximum combined size of the name and value is %d, but the total size is %d", t.maxXAttrSize(), size)
	}
	i, found := xattrIndex(n.XAttrs(), name)
	switch {
	case found && flags&XAttrReplace == 0:
		return errorf(op, n.Path(), Precondition, "XAttr: %s already exists. The REPLACE flag must be specified.", name)
	case !found && flags&XAttrCreate == 0:
		return errorf(op, n.Path(), Precondition, "XAttr: %s does not exist. The CREATE flag must be specified.", name)
	case found:
		n.XAttrs()[i].Value = slices.Clone(value)
		return nil
	}
	if t.userVisibleCount(n) >= t.maxXAttrs() && xattrNamespace(name) != "system" && !c.Trusted {
		return errorf(op, n.Path(), Invalid, "Cannot add additional XAttr to inode, would exceed limit of %d", t.maxXAttrs())
	}
	n.SetXAttrs(slices.Insert(n.XAttrs(), i, XAttr{Name: name, Value: slices.Clone(value)}))
	return nil
}

// RemoveXAttr removes an extended attribute of path.
func (t *Tree) RemoveXAttr(c Caller, path, name string) error {
	const op = "removeXAttr"
	n, name, err := t.xattrTarget(op, c, path, name, Write)
	if err != nil {
		return err
	}
	i, found := xattrIndex(n.XAttrs(), name)
	if !found {
		return errorf(op, n.Path(), Precondition, "No matching attributes found for remove operation")
	}
	n.SetXAttrs(slices.Delete(n.XAttrs(), i, i+1))
	if len(n.XAttrs()) == 0 {
		n.SetXAttrs(nil)
	}
	return nil
}

// GetXAttrs returns the named attributes of path (all the caller may see
// when names is empty), in name order. Reading needs read access; a named
// attribute that is missing is an error, as in HDFS.
func (t *Tree) GetXAttrs(c Caller, path string, names []string) ([]XAttr, error) {
	const op = "getXAttrs"
	n, err := t.Stat(c, op, path)
	if err != nil {
		return nil, err
	}
	if err := t.check(op, n.Path(), c, n, Read); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return t.visibleXAttrs(c, n), nil
	}
	out := make([]XAttr, 0, len(names))
	for _, raw := range names {
		name, err := xattrName(op, n.Path(), raw)
		if err != nil {
			return nil, err
		}
		if err := t.xattrAccess(op, n.Path(), c, name); err != nil {
			return nil, err
		}
		i, found := xattrIndex(n.XAttrs(), name)
		if !found {
			return nil, errorf(op, n.Path(), Precondition, "At least one of the attributes provided was not found.")
		}
		out = append(out, XAttr{Name: name, Value: slices.Clone(n.XAttrs()[i].Value)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListXAttrs returns the names of path's attributes the caller may see;
// it needs only the right to traverse to path (HDFS: execute on the
// parent), not read access to it.
func (t *Tree) ListXAttrs(c Caller, path string) ([]string, error) {
	n, err := t.Stat(c, "listXAttrs", path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, x := range t.visibleXAttrs(c, n) {
		names = append(names, x.Name)
	}
	return names, nil
}

func (t *Tree) visibleXAttrs(c Caller, n *INode) []XAttr {
	var out []XAttr
	for _, x := range n.XAttrs() {
		if t.xattrAccess("", "", c, x.Name) == nil {
			out = append(out, XAttr{Name: x.Name, Value: slices.Clone(x.Value)})
		}
	}
	return out
}

// xattrTarget resolves path for a change of attribute name: the name
// valid and reachable by c, write access, the sticky-bit rule.
func (t *Tree) xattrTarget(op string, c Caller, path, name string, want uint16) (*INode, string, error) {
	n, err := t.Stat(c, op, path)
	if err != nil {
		return nil, "", err
	}
	if name, err = xattrName(op, n.Path(), name); err != nil {
		return nil, "", err
	}
	if err := t.xattrAccess(op, n.Path(), c, name); err != nil {
		return nil, "", err
	}
	// HDFS's checkXAttrChangeAccess: a sticky directory's attributes are
	// its owner's; elsewhere write access decides.
	if n.IsDir() && n.Perm()&StickyBit != 0 {
		if !t.isSuper(c) && c.User != n.Owner() {
			return nil, "", errorf(op, n.Path(), Denied, "permission denied: only the owner (%s) may change XAttrs of the sticky directory", n.Owner())
		}
		return n, name, nil
	}
	if err := t.check(op, n.Path(), c, n, want); err != nil {
		return nil, "", err
	}
	return n, name, nil
}

// userVisibleCount counts the attributes that count against the limit
// (HDFS does not count system ones).
func (t *Tree) userVisibleCount(n *INode) int {
	k := 0
	for _, x := range n.XAttrs() {
		if xattrNamespace(x.Name) != "system" {
			k++
		}
	}
	return k
}

func xattrIndex(xs []XAttr, name string) (int, bool) {
	return slices.BinarySearchFunc(xs, name, func(x XAttr, name string) int { return strings.Compare(x.Name, name) })
}

func (t *Tree) maxXAttrs() int {
	if t.cfg.MaxXAttrsPerInode > 0 {
		return t.cfg.MaxXAttrsPerInode
	}
	return DefaultMaxXAttrsPerInode
}

func (t *Tree) maxXAttrSize() int {
	if t.cfg.MaxXAttrSize > 0 {
		return t.cfg.MaxXAttrSize
	}
	return DefaultMaxXAttrSize
}
