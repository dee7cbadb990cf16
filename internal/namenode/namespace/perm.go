package namespace

import (
	"slices"

	"smarth/internal/fsattr"
)

// Caller is who asks for an operation.
type Caller struct {
	User   string
	Groups []string
	// Trusted skips permission checks: edit log replay, and the namenode's
	// own housekeeping.
	Trusted bool
}

// Access bits, as in rwx.
const (
	Read    uint16 = 4
	Write   uint16 = 2
	Execute uint16 = 1
)

// StickyBit on a directory: only an entry's owner, the directory's owner
// or a superuser may delete or rename the entry (like /tmp).
const StickyBit uint16 = 0o1000

func (t *Tree) isSuper(c Caller) bool {
	return c.Trusted || !t.cfg.Permissions || c.User == t.cfg.Superuser || slices.Contains(c.Groups, t.cfg.Supergroup)
}

// IsSuper reports whether c bypasses permission checks.
func (t *Tree) IsSuper(c Caller) bool { return t.isSuper(c) }

// allowed checks want (rwx bits) against n's mode for c, HDFS style: the
// owner class if c owns it, else the group class if c is in its group,
// else other.
func (t *Tree) allowed(c Caller, n *INode, want uint16) bool {
	if t.isSuper(c) {
		return true
	}
	var bits uint16
	switch {
	case c.User == n.Owner():
		bits = n.Perm() >> 6 & 7
	case hasAccessACL(t.acl(n)):
		return aclAllowed(c, n, t.acl(n), want)
	case slices.Contains(c.Groups, n.Group()):
		bits = n.Perm() >> 3 & 7
	default:
		bits = n.Perm() & 7
	}
	return bits&want == want
}

func accessName(want uint16) string { return fsattr.AccessName(want) }

// check requires want on n.
func (t *Tree) check(op, path string, c Caller, n *INode, want uint16) error {
	if t.allowed(c, n, want) {
		return nil
	}
	return errorf(op, path, Denied, "permission denied: user %s needs %s on %s (%s %s %s)",
		c.User, accessName(want), n.Path(), ModeString(n), n.Owner(), n.Group())
}

// traverse requires execute on every directory in nodes.
func (t *Tree) traverse(op, path string, c Caller, nodes []*INode) error {
	if t.isSuper(c) {
		return nil
	}
	for _, n := range nodes {
		if n.IsDir() {
			if err := t.check(op, path, c, n, Execute); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSticky enforces the sticky bit of dir for removing or renaming
// entry.
func (t *Tree) checkSticky(op, path string, c Caller, dir, entry *INode) error {
	if dir.Perm()&StickyBit == 0 || t.isSuper(c) || c.User == dir.Owner() || c.User == entry.Owner() {
		return nil
	}
	return errorf(op, path, Denied, "permission denied: %s has the sticky bit; only the owner of %s (%s) may remove it", dir.Path(), entry.Path(), entry.Owner())
}

// CheckTrashable requires of c what deleting path recursively would (rwx
// on every non-empty directory of its subtree): HDFS's check for a rename
// with Options.Rename.TO_TRASH, since what goes to the trash is deleted
// later by the emptier, a superuser. A missing path passes; the rename
// that follows reports it.
func (t *Tree) CheckTrashable(c Caller, path string) error {
	const op = "rename"
	r, err := t.resolve(op, path)
	if err != nil || !r.found() {
		return err
	}
	return t.checkSubtree(op, r.path, c, r.last())
}

// checkSubtree requires read, write and execute on every directory below
// and including n, as HDFS does for a recursive delete.
func (t *Tree) checkSubtree(op, path string, c Caller, n *INode) error {
	if t.isSuper(c) || !n.IsDir() {
		return nil
	}
	if len(n.Children()) > 0 {
		if err := t.check(op, path, c, n, Read|Write|Execute); err != nil {
			return err
		}
	}
	for _, ch := range n.Children() {
		if err := t.checkSubtree(op, path, c, ch); err != nil {
			return err
		}
	}
	return nil
}

// ModeString renders n's mode like ls: "drwxr-xr-x", "-rw-r--r--", with
// "t"/"T" for the sticky bit.
func ModeString(n *INode) string {
	b := []byte("-rwxrwxrwx")
	if n.IsDir() {
		b[0] = 'd'
	}
	for i := 0; i < 9; i++ {
		if n.Perm()&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	if n.Perm()&StickyBit != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}
