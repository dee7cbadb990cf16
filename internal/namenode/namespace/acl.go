package namespace

import (
	"fmt"
	"slices"
	"smarth/internal/fsattr"
	"strings"
)

// POSIX ACLs as HDFS has them (the HDFS Permissions Guide, "ACLs", and
// its AclTransformation / AclStorage / FSPermissionChecker).
//
// Storage follows HDFS's AclFeature: an inode with an ACL keeps its owner,
// mask (or, for a minimal access ACL, group) and other permissions in the
// ordinary mode bits, and the rest of its entries (named users, the
// unnamed group, named groups, then the whole default ACL) in a side map
// of the tree keyed by the inode. Inodes without an ACL, nearly all of
// them, pay nothing: no field was added to INode, and permission checks
// look at the map only when some ACL exists at all. chmod on an inode with
// an ACL therefore changes the mask, as in HDFS.

// The value types and the spec syntax live in internal/fsattr, which
// clients share; these aliases keep the namespace's code reading as before.
type (
	ACLScope  = fsattr.ACLScope
	ACLType   = fsattr.ACLType
	ACLEntry  = fsattr.ACLEntry
	ACLStatus = fsattr.ACLStatus
)

const (
	ScopeAccess  = fsattr.ScopeAccess
	ScopeDefault = fsattr.ScopeDefault
	ACLUser      = fsattr.ACLUser
	ACLGroup     = fsattr.ACLGroup
	ACLMask      = fsattr.ACLMask
	ACLOther     = fsattr.ACLOther
)

// ParseACLSpec and ParseAccess: see fsattr.
var (
	ParseACLSpec = fsattr.ParseACLSpec
	ParseAccess  = fsattr.ParseAccess
)

// maxACLEntries is HDFS's limit per scope (MAX_ENTRIES).
const maxACLEntries = 32

// compareACL is HDFS's natural order of entries: access before default,
// then user, group, mask, other; unnamed before named, names in order.
func compareACL(a, b ACLEntry) int {
	switch {
	case a.Scope != b.Scope:
		return int(a.Scope) - int(b.Scope)
	case a.Type != b.Type:
		return int(a.Type) - int(b.Type)
	case (a.Name == "") != (b.Name == ""):
		if a.Name == "" {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

func sameKey(a, b ACLEntry) bool { return a.Scope == b.Scope && a.Type == b.Type && a.Name == b.Name }

// acl returns n's stored entries (HDFS feature form) or nil.
func (t *Tree) acl(n *INode) []ACLEntry {
	if len(t.acls) == 0 {
		return nil
	}
	return t.acls[n]
}

// HasACL reports whether n has an ACL (ls shows "+").
func (t *Tree) HasACL(n *INode) bool { return t.acl(n) != nil }

// StoredACL is n's ACL in HDFS's stored form (what getAclStatus returns):
// named users, the unnamed group and named groups of a non-minimal access
// ACL, then the default ACL. Callers must not modify it.
func (t *Tree) StoredACL(n *INode) []ACLEntry { return t.acl(n) }

// RestoreACL attaches entries read from an image to n.
func (t *Tree) RestoreACL(n *INode, entries []ACLEntry) {
	t.setStored(n, entries)
}

func (t *Tree) setStored(n *INode, entries []ACLEntry) {
	if len(entries) == 0 {
		if t.acls != nil {
			delete(t.acls, n)
		}
		return
	}
	if t.acls == nil {
		t.acls = map[*INode][]ACLEntry{}
	}
	t.acls[n] = entries
}

func fullACL(perm uint16, stored []ACLEntry) []ACLEntry { return fsattr.FullACL(perm, stored) }

// storeACL writes a whole, valid ACL back to n: mode bits and stored
// entries (HDFS AclStorage.updateINodeAcl).
func (t *Tree) storeACL(n *INode, acl []ACLEntry) {
	var access, def []ACLEntry
	for _, e := range acl {
		if e.Scope == ScopeAccess {
			access = append(access, e)
		} else {
			def = append(def, e)
		}
	}
	var owner, group, other, mask uint16
	hasMask := false
	var stored []ACLEntry
	for _, e := range access {
		switch {
		case e.Type == ACLUser && e.Name == "":
			owner = e.Perm
		case e.Type == ACLGroup && e.Name == "":
			group = e.Perm
		case e.Type == ACLOther:
			other = e.Perm
		case e.Type == ACLMask:
			mask, hasMask = e.Perm, true
		}
	}
	if len(access) > 3 {
		for _, e := range access {
			if !(e.Type == ACLUser && e.Name == "") && e.Type != ACLOther && e.Type != ACLMask {
				stored = append(stored, e)
			}
		}
	}
	if hasMask {
		group = mask
	}
	stored = append(stored, def...)
	n.SetPerm(n.Perm()&StickyBit | owner<<6 | group<<3 | other)
	t.setStored(n, stored)
}

// aclBuild holds an ACL being transformed, as HDFS's AclTransformation
// does: the entries without masks, the masks provided (by the spec, or
// kept from the existing ACL), and which scopes had their mask or any
// entry named by the spec.
type aclBuild struct {
	entries      []ACLEntry
	providedMask map[ACLScope]ACLEntry
	maskDirty    map[ACLScope]bool
	scopeDirty   map[ACLScope]bool
}

func newACLBuild() *aclBuild {
	return &aclBuild{providedMask: map[ACLScope]ACLEntry{}, maskDirty: map[ACLScope]bool{}, scopeDirty: map[ACLScope]bool{}}
}

// copyDefaultsIfNeeded gives a default ACL missing its user::, group:: or
// other:: entry the access ACL's one.
func (b *aclBuild) copyDefaultsIfNeeded() {
	if !slices.ContainsFunc(b.entries, func(e ACLEntry) bool { return e.Scope == ScopeDefault }) {
		return
	}
	var copied []ACLEntry
	for _, typ := range []ACLType{ACLUser, ACLGroup, ACLOther} {
		d := ACLEntry{Scope: ScopeDefault, Type: typ}
		if slices.ContainsFunc(b.entries, func(e ACLEntry) bool { return sameKey(e, d) }) {
			continue
		}
		if i := slices.IndexFunc(b.entries, func(e ACLEntry) bool { return sameKey(e, ACLEntry{Type: typ}) }); i >= 0 {
			d.Perm = b.entries[i].Perm
			copied = append(copied, d)
		}
	}
	b.entries = append(b.entries, copied...)
}

// calculateMasks adds each scope's mask (HDFS calculateMasks): the one
// provided if the spec gave it or the scope is untouched; else, when the
// scope has named entries or had a mask, the union of its group class
// (named users, group::, named groups). Removing a mask that named
// entries need is an error.
func (b *aclBuild) calculateMasks() error {
	found := map[ACLScope]bool{}
	union := map[ACLScope]uint16{}
	needed := map[ACLScope]bool{}
	for _, e := range b.entries {
		found[e.Scope] = true
		if e.Type == ACLGroup || e.Name != "" {
			union[e.Scope] |= e.Perm
		}
		if e.Name != "" {
			needed[e.Scope] = true
		}
	}
	for _, scope := range []ACLScope{ScopeAccess, ScopeDefault} {
		if !found[scope] {
			continue
		}
		m, provided := b.providedMask[scope]
		switch {
		case !provided && needed[scope] && b.maskDirty[scope]:
			return fmt.Errorf("Invalid ACL: mask is required and cannot be deleted if ACL contains named entries.")
		case provided && (!b.scopeDirty[scope] || b.maskDirty[scope]):
			b.entries = append(b.entries, m)
		case needed[scope] || provided:
			b.entries = append(b.entries, ACLEntry{Scope: scope, Type: ACLMask, Perm: union[scope]})
		}
	}
	return nil
}

// finish computes masks, sorts and validates (HDFS buildAndValidateAcl).
func (b *aclBuild) finish(dir bool) ([]ACLEntry, error) {
	b.copyDefaultsIfNeeded()
	if err := b.calculateMasks(); err != nil {
		return nil, err
	}
	acl := b.entries
	slices.SortFunc(acl, compareACL)
	for i := 1; i < len(acl); i++ {
		if sameKey(acl[i-1], acl[i]) {
			return nil, fmt.Errorf("Invalid ACL: multiple entries with same scope, type and name.")
		}
	}
	for _, scope := range []ACLScope{ScopeAccess, ScopeDefault} {
		n := 0
		for _, e := range acl {
			if e.Scope == scope {
				n++
			}
		}
		if n > maxACLEntries {
			name := [...]string{"access", "default"}[scope]
			return nil, fmt.Errorf("Invalid ACL: ACL has %d %s entries, which exceeds maximum of %d.", n, name, maxACLEntries)
		}
	}
	hasDefault := slices.ContainsFunc(acl, func(e ACLEntry) bool { return e.Scope == ScopeDefault })
	for _, typ := range []ACLType{ACLUser, ACLGroup, ACLOther} {
		if !slices.ContainsFunc(acl, func(e ACLEntry) bool { return sameKey(e, ACLEntry{Type: typ}) }) {
			return nil, fmt.Errorf("Invalid ACL: the user, group and other entries are required.")
		}
		if hasDefault && !slices.ContainsFunc(acl, func(e ACLEntry) bool { return sameKey(e, ACLEntry{Scope: ScopeDefault, Type: typ}) }) {
			return nil, fmt.Errorf("Invalid default ACL: the user, group and other entries are required.")
		}
	}
	if hasDefault && !dir {
		return nil, fmt.Errorf("Invalid ACL: only directories may have a default ACL.")
	}
	return acl, nil
}

// ACLOp is the kind of ACL change (HDFS's five ClientProtocol calls).
type ACLOp uint8

const (
	ACLModify        ACLOp = iota + 1 // modifyAclEntries
	ACLRemoveEntries                  // removeAclEntries
	ACLRemoveDefault                  // removeDefaultAcl
	ACLRemoveAll                      // removeAcl
	ACLSet                            // setAcl
)

func (o ACLOp) String() string {
	switch o {
	case ACLModify:
		return "modifyAclEntries"
	case ACLRemoveEntries:
		return "removeAclEntries"
	case ACLRemoveDefault:
		return "removeDefaultAcl"
	case ACLRemoveAll:
		return "removeAcl"
	case ACLSet:
		return "setAcl"
	}
	return fmt.Sprintf("aclOp(%d)", uint8(o))
}

// ChangeACL applies one of HDFS's ACL operations to path. Only the owner
// or a superuser may change an ACL (HDFS checkOwner).
func (t *Tree) ChangeACL(c Caller, path string, kind ACLOp, spec []ACLEntry) error {
	op := kind.String()
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	if !t.isSuper(c) && c.User != n.Owner() {
		return errorf(op, n.Path(), Denied, "permission denied: only the owner (%s) or a superuser may change the ACL", n.Owner())
	}
	for _, e := range spec {
		if e.Type > ACLOther || e.Scope > ScopeDefault || e.Perm > 7 {
			return errorf(op, n.Path(), Invalid, "invalid ACL entry %+v", e)
		}
		if e.Name != "" && (e.Type == ACLMask || e.Type == ACLOther) {
			return errorf(op, n.Path(), Invalid, "invalid ACL entry %s: %s entries take no name", e, [...]string{"user", "group", "mask", "other"}[e.Type])
		}
	}
	// HDFS ValidatedAclSpec: no key twice in a spec.
	for i, e := range spec {
		if slices.ContainsFunc(spec[:i], func(s ACLEntry) bool { return sameKey(e, s) }) {
			return errorf(op, n.Path(), Invalid, "Invalid ACL: the ACL spec has duplicate entries (%s).", e)
		}
	}
	existing := fullACL(n.Perm(), t.acl(n))
	b := newACLBuild()
	switch kind {
	case ACLModify: // HDFS mergeAclEntries
		for _, s := range spec {
			b.scopeDirty[s.Scope] = true
			if s.Type == ACLMask {
				b.maskDirty[s.Scope] = true
			}
		}
		for _, e := range existing {
			if i := slices.IndexFunc(spec, func(s ACLEntry) bool { return sameKey(e, s) }); i >= 0 {
				e = spec[i]
			}
			if e.Type == ACLMask {
				b.providedMask[e.Scope] = e
			} else {
				b.entries = append(b.entries, e)
			}
		}
		for _, s := range spec {
			if slices.ContainsFunc(existing, func(e ACLEntry) bool { return sameKey(e, s) }) {
				continue
			}
			if s.Type == ACLMask {
				b.providedMask[s.Scope] = s
			} else {
				b.entries = append(b.entries, s)
			}
		}
	case ACLRemoveEntries: // HDFS filterAclEntriesByAclSpec
		for _, e := range existing {
			if slices.ContainsFunc(spec, func(s ACLEntry) bool { return sameKey(e, s) }) {
				b.scopeDirty[e.Scope] = true
				if e.Type == ACLMask {
					b.maskDirty[e.Scope] = true
				}
				continue
			}
			if e.Type == ACLMask {
				b.providedMask[e.Scope] = e
			} else {
				b.entries = append(b.entries, e)
			}
		}
	case ACLRemoveDefault: // HDFS filterDefaultAclEntries
		for _, e := range existing {
			if e.Scope != ScopeAccess {
				continue
			}
			if e.Type == ACLMask {
				b.providedMask[e.Scope] = e
			} else {
				b.entries = append(b.entries, e)
			}
		}
	case ACLRemoveAll:
		// HDFS removeAcl: back to the mode bits; the group bits become
		// the unnamed group entry again (they held the mask).
		group := n.Perm() >> 3 & 7
		for _, e := range existing {
			if e.Scope == ScopeAccess && e.Type == ACLGroup && e.Name == "" {
				group = e.Perm
			}
		}
		n.SetPerm(n.Perm()&^0o070 | group<<3)
		t.setStored(n, nil)
		return nil
	case ACLSet: // HDFS replaceAclEntries: the scopes the spec names are replaced
		for _, s := range spec {
			b.scopeDirty[s.Scope] = true
			if s.Type == ACLMask {
				b.providedMask[s.Scope] = s
				b.maskDirty[s.Scope] = true
			} else {
				b.entries = append(b.entries, s)
			}
		}
		for _, e := range existing {
			if b.scopeDirty[e.Scope] {
				continue
			}
			if e.Type == ACLMask {
				b.providedMask[e.Scope] = e
			} else {
				b.entries = append(b.entries, e)
			}
		}
	default:
		return errorf(op, n.Path(), Invalid, "unknown ACL operation %d", kind)
	}
	acl, err := b.finish(n.IsDir())
	if err != nil {
		return errorf(op, n.Path(), Invalid, "%v", err)
	}
	t.storeACL(n, acl)
	return nil
}

// GetACLStatus returns path's ACL as HDFS's getAclStatus: owner, group,
// mode, and the stored entries (named users, group::, named groups of the
// access ACL, then the default ACL). Like HDFS it needs only the right
// to reach the path.
func (t *Tree) GetACLStatus(c Caller, path string) (ACLStatus, error) {
	n, err := t.Stat(c, "getAclStatus", path)
	if err != nil {
		return ACLStatus{}, err
	}
	return ACLStatus{Owner: n.Owner(), Group: n.Group(), Perm: n.Perm(), Entries: slices.Clone(t.acl(n))}, nil
}

// hasAccessACL reports whether stored entries include an access ACL
// beyond the mode bits. A directory may hold only a default ACL; its
// access is then the mode bits' alone (HDFS FSPermissionChecker checks
// the first stored entry's scope), and its group bits are the group's,
// not a mask.
func hasAccessACL(stored []ACLEntry) bool {
	return len(stored) > 0 && stored[0].Scope == ScopeAccess
}

// aclAllowed is HDFS FSPermissionChecker.hasAclPermission for a caller
// who is not the owner: the first matching named user entry decides
// (masked); else every group entry matching the caller's groups is tried
// (masked) and any one granting the access is enough, while a match that
// grants nothing denies; else other.
func aclAllowed(c Caller, n *INode, stored []ACLEntry, want uint16) bool {
	mask := n.Perm() >> 3 & 7
	groupMatched := false
	for _, e := range stored {
		if e.Scope != ScopeAccess {
			break // default entries follow the access ones
		}
		switch e.Type {
		case ACLUser:
			if e.Name == c.User {
				return e.Perm&mask&want == want
			}
		case ACLGroup:
			g := e.Name
			if g == "" {
				g = n.Group()
			}
			if slices.Contains(c.Groups, g) {
				groupMatched = true
				if e.Perm&mask&want == want {
					return true
				}
			}
		}
	}
	if groupMatched {
		return false
	}
	return n.Perm()&7&want == want
}

// inheritACL gives a new child the default ACL of its parent, if the
// parent has one (HDFS AclStorage.copyINodeDefaultAcl): every default
// entry becomes an access entry of the child, and of a directory also a
// default entry; the child's requested mode (already filtered by the
// umask, as the HDFS Permissions Guide describes) filters the owner, mask
// (or group) and other entries, so a file created 0644 gets no execute
// bits. It reports whether the parent had a default ACL.
func (t *Tree) inheritACL(parent, child *INode) bool {
	stored := t.acl(parent)
	var def []ACLEntry
	for _, e := range stored {
		if e.Scope == ScopeDefault {
			def = append(def, e)
		}
	}
	if len(def) == 0 {
		return false
	}
	mode := child.Perm()
	var acl []ACLEntry
	for _, e := range def {
		a := e
		a.Scope = ScopeAccess
		acl = append(acl, a)
	}
	hasMask := slices.ContainsFunc(acl, func(e ACLEntry) bool { return e.Type == ACLMask })
	for i := range acl {
		e := &acl[i]
		switch {
		case e.Type == ACLUser && e.Name == "":
			e.Perm &= mode >> 6 & 7
		case e.Type == ACLMask, e.Type == ACLGroup && e.Name == "" && !hasMask:
			e.Perm &= mode >> 3 & 7
		case e.Type == ACLOther:
			e.Perm &= mode & 7
		}
	}
	if child.IsDir() {
		acl = append(acl, def...)
	}
	child.SetPerm(child.Perm() & StickyBit)
	t.storeACL(child, acl)
	return true
}

// ACLString: see fsattr.
var ACLString = fsattr.ACLString

// FullACL exposes fullACL for the namenode and tools.
func FullACL(perm uint16, stored []ACLEntry) []ACLEntry { return fullACL(perm, stored) }
