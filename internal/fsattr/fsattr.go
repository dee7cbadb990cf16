// Package fsattr holds the file attributes the namenode keeps and clients
// speak about in the same terms: POSIX ACL entries and HDFS's ACL spec
// syntax (hdfs dfs -setfacl), the built-in storage policies, and the lines
// of a snapshot diff report. It is a leaf package so that clients (the Go
// client, WebHDFS, the CLI) parse and print these without importing the
// namenode's namespace (docs/architecture.md, layering).
package fsattr

import (
	"fmt"
	"strings"
)

// Permission bits of an ACL entry (rwx).
const (
	Read    uint16 = 4
	Write   uint16 = 2
	Execute uint16 = 1
)

// ACLScope says whether an entry is checked (access) or inherited by new
// children (default; directories only).
type ACLScope uint8

const (
	ScopeAccess ACLScope = iota
	ScopeDefault
)

// ACLType is the kind of an entry.
type ACLType uint8

const (
	ACLUser ACLType = iota
	ACLGroup
	ACLMask
	ACLOther
)

// ACLEntry is one entry; Name is empty for the owner ("user::"), the
// file's group ("group::"), the mask and other.
type ACLEntry struct {
	Scope ACLScope
	Type  ACLType
	Name  string
	Perm  uint16 // rwx bits
}

func (e ACLEntry) String() string {
	var b strings.Builder
	if e.Scope == ScopeDefault {
		b.WriteString("default:")
	}
	b.WriteString([...]string{"user", "group", "mask", "other"}[e.Type&3])
	b.WriteByte(':')
	b.WriteString(e.Name)
	b.WriteByte(':')
	b.WriteString(AccessName(e.Perm))
	return b.String()
}

// ParseACLSpec parses an ACL spec as hdfs dfs -setfacl takes it:
// comma-separated entries "[default:]type:[name][:perm]" (perm as rwx or
// "---"; with includePerm false, as for -x, entries carry no perm).
func ParseACLSpec(spec string, includePerm bool) ([]ACLEntry, error) {
	var out []ACLEntry
	for _, s := range strings.Split(spec, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		e, err := parseACLEntry(s, includePerm)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty ACL spec %q", spec)
	}
	return out, nil
}

func parseACLEntry(s string, includePerm bool) (ACLEntry, error) {
	var e ACLEntry
	parts := strings.Split(s, ":")
	if len(parts) > 0 && parts[0] == "default" {
		e.Scope = ScopeDefault
		parts = parts[1:]
	}
	if len(parts) == 0 || parts[0] == "" {
		return e, fmt.Errorf("invalid ACL entry %q: no type", s)
	}
	switch parts[0] {
	case "user":
		e.Type = ACLUser
	case "group":
		e.Type = ACLGroup
	case "mask":
		e.Type = ACLMask
	case "other":
		e.Type = ACLOther
	default:
		return e, fmt.Errorf("invalid ACL entry %q: invalid type %q (user, group, mask or other)", s, parts[0])
	}
	if len(parts) > 1 {
		e.Name = parts[1]
	}
	if e.Name != "" && (e.Type == ACLMask || e.Type == ACLOther) {
		return e, fmt.Errorf("invalid ACL entry %q: %s entries take no name", s, parts[0])
	}
	want := 2
	for !includePerm && len(parts) > want && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // "mask::" in a -x spec, as Java's split reads it
	}
	if includePerm {
		want = 3
		if len(parts) < 3 {
			return e, fmt.Errorf("invalid ACL entry %q: no permission (rwx)", s)
		}
		p, err := ParseAccess(parts[2])
		if err != nil {
			return e, fmt.Errorf("invalid ACL entry %q: %v", s, err)
		}
		e.Perm = p
	}
	if len(parts) > want {
		return e, fmt.Errorf("invalid ACL entry %q: too many fields", s)
	}
	return e, nil
}

// ParseAccess reads "rwx", "r-x", "---" (and HDFS's shorter forms like
// "rw").
func ParseAccess(s string) (uint16, error) {
	if len(s) == 0 || len(s) > 3 {
		return 0, fmt.Errorf("invalid permission %q", s)
	}
	var p uint16
	for i, ch := range s {
		switch {
		case ch == '-':
		case ch == 'r' && i == 0:
			p |= Read
		case ch == 'w' && i == 1:
			p |= Write
		case ch == 'x' && i == 2:
			p |= Execute
		default:
			return 0, fmt.Errorf("invalid permission %q", s)
		}
	}
	return p, nil
}

// AccessName renders rwx bits as "rwx", "r-x", "---".
func AccessName(want uint16) string {
	s := []byte("---")
	if want&Read != 0 {
		s[0] = 'r'
	}
	if want&Write != 0 {
		s[1] = 'w'
	}
	if want&Execute != 0 {
		s[2] = 'x'
	}
	return string(s)
}

// ACLStatus is what getAclStatus answers.
type ACLStatus struct {
	Owner, Group string
	Perm         uint16 // the mode bits incl. sticky; the group bits are the mask with an ACL
	Entries      []ACLEntry
}

// DiffEntry is a line of a snapshot diff report: Kind is "M", "+", "-" or
// "R"; paths are relative to the snapshot root ("." for itself), Target
// set for renames.
type DiffEntry struct {
	Kind   string
	Path   string
	Target string
}

// StoragePolicy is one of HDFS's built-in block storage policies.
type StoragePolicy struct {
	ID                   uint8
	Name                 string
	StorageTypes         []string // where the replicas go, in order
	CreationFallbacks    []string
	ReplicationFallbacks []string
	CopyOnCreateFile     bool
}

// PolicyUnspecified is the id of "no policy set here or above".
const PolicyUnspecified uint8 = 0

// HOT is the default policy (id 7).
const PolicyHot uint8 = 7

// StoragePolicies are HDFS's built-in policies, by id.
var StoragePolicies = []StoragePolicy{
	{ID: 1, Name: "PROVIDED", StorageTypes: []string{"PROVIDED", "DISK"}, CreationFallbacks: []string{"PROVIDED", "DISK"}, ReplicationFallbacks: []string{"PROVIDED", "DISK"}},
	{ID: 2, Name: "COLD", StorageTypes: []string{"ARCHIVE"}},
	{ID: 5, Name: "WARM", StorageTypes: []string{"DISK", "ARCHIVE"}, CreationFallbacks: []string{"DISK", "ARCHIVE"}, ReplicationFallbacks: []string{"DISK", "ARCHIVE"}},
	{ID: 7, Name: "HOT", StorageTypes: []string{"DISK"}, ReplicationFallbacks: []string{"ARCHIVE"}},
	{ID: 10, Name: "ONE_SSD", StorageTypes: []string{"SSD", "DISK"}, CreationFallbacks: []string{"SSD", "DISK"}, ReplicationFallbacks: []string{"SSD", "DISK"}},
	{ID: 12, Name: "ALL_SSD", StorageTypes: []string{"SSD"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}},
	{ID: 15, Name: "LAZY_PERSIST", StorageTypes: []string{"RAM_DISK", "DISK"}, CreationFallbacks: []string{"DISK"}, ReplicationFallbacks: []string{"DISK"}, CopyOnCreateFile: false},
}

// PolicyByName finds a policy by name, ignoring case.
func PolicyByName(name string) (StoragePolicy, bool) {
	for _, p := range StoragePolicies {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return StoragePolicy{}, false
}

// PolicyByID finds a policy by id.
func PolicyByID(id uint8) (StoragePolicy, bool) {
	for _, p := range StoragePolicies {
		if p.ID == id {
			return p, true
		}
	}
	return StoragePolicy{}, false
}

// StickyBit is the restricted-deletion bit of a directory's mode.
const StickyBit uint16 = 0o1000

// fullACL expands n's mode and stored entries into the whole ACL (HDFS
// AclUtil.getAclFromPermAndEntries): user::, named users, group::, named
// groups, mask, other, then default entries.
func FullACL(perm uint16, stored []ACLEntry) []ACLEntry {
	owner, group, other := perm>>6&7, perm>>3&7, perm&7
	if len(stored) == 0 {
		return []ACLEntry{{Type: ACLUser, Perm: owner}, {Type: ACLGroup, Perm: group}, {Type: ACLOther, Perm: other}}
	}
	var access, def []ACLEntry
	for _, e := range stored {
		if e.Scope == ScopeAccess {
			access = append(access, e)
		} else {
			def = append(def, e)
		}
	}
	out := []ACLEntry{{Type: ACLUser, Perm: owner}}
	if len(access) == 0 { // only a default ACL: the access ACL is minimal
		out = append(out, ACLEntry{Type: ACLGroup, Perm: group})
	} else {
		out = append(out, access...)
		out = append(out, ACLEntry{Type: ACLMask, Perm: group})
	}
	out = append(out, ACLEntry{Type: ACLOther, Perm: other})
	return append(out, def...)
}

// ACLString renders whole ACL entries one per line as hdfs dfs -getfacl
// does, with "#effective:" where the mask takes something away.
func ACLString(perm uint16, stored []ACLEntry) []string {
	acl := FullACL(perm, stored)
	masks := map[ACLScope]uint16{}
	hasMask := map[ACLScope]bool{}
	for _, e := range acl {
		if e.Type == ACLMask {
			masks[e.Scope], hasMask[e.Scope] = e.Perm, true
		}
	}
	var out []string
	for _, e := range acl {
		s := e.String()
		affected := e.Type == ACLUser && e.Name != "" || e.Type == ACLGroup
		if affected && hasMask[e.Scope] && e.Perm&masks[e.Scope] != e.Perm {
			s += "\t#effective:" + AccessName(e.Perm&masks[e.Scope])
		}
		out = append(out, s)
	}
	return out
}
