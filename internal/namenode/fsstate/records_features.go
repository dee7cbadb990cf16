package fsstate

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// Records of ACLs, storage policies and snapshots (kinds from 48 up).
// Each begins with its path.

func encodeACL(e *enc, acl []namespace.ACLEntry) {
	e.u(uint64(len(acl)))
	for _, a := range acl {
		e.u(uint64(a.Scope)<<2 | uint64(a.Type))
		e.s(a.Name)
		e.u(uint64(a.Perm))
	}
}

func decodeACL(d *dec) []namespace.ACLEntry {
	n := d.count(3) // scope/type, name length, perm: a byte each at least
	var out []namespace.ACLEntry
	for i := 0; i < n && d.err == nil; i++ {
		st := d.u()
		a := namespace.ACLEntry{Scope: namespace.ACLScope(st >> 2), Type: namespace.ACLType(st & 3), Name: d.s(), Perm: uint16(d.u())}
		if st>>2 > uint64(namespace.ScopeDefault) || a.Perm > 7 {
			d.err = fmt.Errorf("bad ACL entry %d", i)
		}
		out = append(out, a)
	}
	return out
}

// ACL changes a path's ACL (modify, remove entries, remove all, set...).
type ACL struct {
	Path    string
	Op      namespace.ACLOp
	Entries []namespace.ACLEntry
}

func (*ACL) Kind() Kind { return kindACL }
func (r *ACL) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(r.Op))
	encodeACL(e, r.Entries)
}
func (r *ACL) decode(d *dec) {
	r.Path, r.Op = d.s(), namespace.ACLOp(d.u())
	r.Entries = decodeACL(d)
}
func (r *ACL) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.ChangeACL(c, r.Path, r.Op, r.Entries)
}

// SetStoragePolicy sets a path's own storage policy; 0 unsets it.
type SetStoragePolicy struct {
	Path   string
	Policy uint8
}

func (*SetStoragePolicy) Kind() Kind { return kindSetStoragePolicy }
func (r *SetStoragePolicy) encode(e *enc) {
	e.s(r.Path)
	e.u(uint64(r.Policy))
}
func (r *SetStoragePolicy) decode(d *dec) {
	r.Path = d.s()
	p := d.u()
	if p > 255 {
		d.err = fmt.Errorf("storage policy id %d", p)
	}
	r.Policy = uint8(p)
}
func (r *SetStoragePolicy) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.SetStoragePolicy(c, r.Path, r.Policy)
}

// AllowSnapshot makes a directory snapshottable.
type AllowSnapshot struct{ Path string }

func (*AllowSnapshot) Kind() Kind      { return kindAllowSnapshot }
func (r *AllowSnapshot) encode(e *enc) { e.s(r.Path) }
func (r *AllowSnapshot) decode(d *dec) { r.Path = d.s() }
func (r *AllowSnapshot) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.AllowSnapshot(c, r.Path)
}

// DisallowSnapshot makes a directory without snapshots unsnapshottable.
type DisallowSnapshot struct{ Path string }

func (*DisallowSnapshot) Kind() Kind      { return kindDisallowSnapshot }
func (r *DisallowSnapshot) encode(e *enc) { e.s(r.Path) }
func (r *DisallowSnapshot) decode(d *dec) { r.Path = d.s() }
func (r *DisallowSnapshot) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.DisallowSnapshot(c, r.Path)
}

// CreateSnapshot takes a snapshot of a snapshottable directory.
type CreateSnapshot struct {
	Path, Snapshot string
	Now            int64
}

func (*CreateSnapshot) Kind() Kind        { return kindCreateSnapshot }
func (r *CreateSnapshot) SetNow(ms int64) { r.Now = ms }
func (r *CreateSnapshot) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Snapshot)
	e.i(r.Now)
}
func (r *CreateSnapshot) decode(d *dec) { r.Path, r.Snapshot, r.Now = d.s(), d.s(), d.i() }
func (r *CreateSnapshot) apply(s *State, c namespace.Caller) (res Applied, err error) {
	res.Path, err = s.tree.CreateSnapshot(c, r.Path, r.Snapshot, r.Now)
	return res, err
}

// DeleteSnapshot deletes a snapshot; blocks only it held leave the block
// map.
type DeleteSnapshot struct {
	Path, Snapshot string
}

func (*DeleteSnapshot) Kind() Kind { return kindDeleteSnapshot }
func (r *DeleteSnapshot) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Snapshot)
}
func (r *DeleteSnapshot) decode(d *dec) { r.Path, r.Snapshot = d.s(), d.s() }
func (r *DeleteSnapshot) apply(s *State, c namespace.Caller) (res Applied, err error) {
	freed, err := s.tree.DeleteSnapshot(c, r.Path, r.Snapshot)
	for _, id := range freed {
		if b := s.blocks.Get(id); b != nil && !s.liveBlock(b) && !s.isCopySource(b) {
			res.Dropped = append(res.Dropped, b)
		}
	}
	return res, err
}

// RenameSnapshot renames a snapshot.
type RenameSnapshot struct {
	Path, Snapshot, NewName string
}

func (*RenameSnapshot) Kind() Kind { return kindRenameSnapshot }
func (r *RenameSnapshot) encode(e *enc) {
	e.s(r.Path)
	e.s(r.Snapshot)
	e.s(r.NewName)
}
func (r *RenameSnapshot) decode(d *dec) { r.Path, r.Snapshot, r.NewName = d.s(), d.s(), d.s() }
func (r *RenameSnapshot) apply(s *State, c namespace.Caller) (Applied, error) {
	return Applied{}, s.tree.RenameSnapshot(c, r.Path, r.Snapshot, r.NewName)
}

// liveBlock reports whether a live file still holds b.
func (s *State) liveBlock(b *blockmap.Block) bool {
	f := s.tree.ByID(b.FileID)
	return f != nil && !f.IsDir() && f.BlockIndex(b.ID) >= 0
}

// keepSnapshotted removes from dropped the blocks a snapshot still
// references: they leave the live namespace but stay in the block map,
// with their replicas, until the last snapshot holding them is deleted.
func (s *State) keepSnapshotted(dropped []*blockmap.Block) []*blockmap.Block {
	if len(dropped) == 0 {
		return dropped
	}
	out := dropped[:0:0]
	for _, b := range dropped {
		if s.tree.SnapshotRefs(b.ID) == 0 {
			out = append(out, b)
		}
	}
	return out
}
