package namenode

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// Edit records of ACLs, storage policies and snapshots. Their kinds are
// numbered from 48 up, apart from the iota block of ops.go, so that
// records added there by others never collide with these on disk.
const (
	opACL opKind = 48 + iota
	opSetStoragePolicy
	opAllowSnapshot
	opDisallowSnapshot
	opCreateSnapshot
	opDeleteSnapshot
	opRenameSnapshot
	opFeatureLimit // first unused of this block
)

func init() {
	for k, n := range map[opKind]string{
		opACL: "acl", opSetStoragePolicy: "setStoragePolicy", opAllowSnapshot: "allowSnapshot",
		opDisallowSnapshot: "disallowSnapshot", opCreateSnapshot: "createSnapshot",
		opDeleteSnapshot: "deleteSnapshot", opRenameSnapshot: "renameSnapshot",
	} {
		opNames[k] = n
	}
}

func isFeatureOp(k opKind) bool { return k >= opACL && k < opFeatureLimit }

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

func encodeFeatureOp(e *enc, o *editOp) {
	e.s(o.Path)
	switch o.Kind {
	case opACL:
		e.u(uint64(o.ACLOp))
		encodeACL(e, o.ACL)
	case opSetStoragePolicy:
		e.u(uint64(o.Policy))
	case opCreateSnapshot:
		e.s(o.Snapshot)
		e.i(o.Now)
	case opDeleteSnapshot:
		e.s(o.Snapshot)
	case opRenameSnapshot:
		e.s(o.Snapshot)
		e.s(o.SnapshotNew)
	}
}

func decodeFeatureOp(d *dec, o *editOp) {
	o.Path = d.s()
	switch o.Kind {
	case opACL:
		o.ACLOp = namespace.ACLOp(d.u())
		o.ACL = decodeACL(d)
	case opSetStoragePolicy:
		p := d.u()
		if p > 255 {
			d.err = fmt.Errorf("storage policy id %d", p)
		}
		o.Policy = uint8(p)
	case opCreateSnapshot:
		o.Snapshot, o.Now = d.s(), d.i()
	case opDeleteSnapshot:
		o.Snapshot = d.s()
	case opRenameSnapshot:
		o.Snapshot, o.SnapshotNew = d.s(), d.s()
	}
}

func (s *fsState) applyFeatureOp(o *editOp, c namespace.Caller) (applied, error) {
	var res applied
	var err error
	switch o.Kind {
	case opACL:
		err = s.tree.ChangeACL(c, o.Path, o.ACLOp, o.ACL)
	case opSetStoragePolicy:
		err = s.tree.SetStoragePolicy(c, o.Path, o.Policy)
	case opAllowSnapshot:
		err = s.tree.AllowSnapshot(c, o.Path)
	case opDisallowSnapshot:
		err = s.tree.DisallowSnapshot(c, o.Path)
	case opCreateSnapshot:
		res.path, err = s.tree.CreateSnapshot(c, o.Path, o.Snapshot, o.Now)
	case opDeleteSnapshot:
		var freed []uint64
		freed, err = s.tree.DeleteSnapshot(c, o.Path, o.Snapshot)
		for _, id := range freed {
			if b := s.blocks.Get(id); b != nil && !s.liveBlock(b) && !s.isCopySource(b) {
				res.dropped = append(res.dropped, b)
			}
		}
	case opRenameSnapshot:
		err = s.tree.RenameSnapshot(c, o.Path, o.Snapshot, o.SnapshotNew)
	default:
		err = fmt.Errorf("unknown op %d", o.Kind)
	}
	return res, err
}

// liveBlock reports whether a live file still holds b.
func (s *fsState) liveBlock(b *blockmap.Block) bool {
	f := s.tree.ByID(b.FileID)
	return f != nil && !f.IsDir() && f.BlockIndex(b.ID) >= 0
}

// keepSnapshotted removes from dropped the blocks a snapshot still
// references: they leave the live namespace but stay in the block map,
// with their replicas, until the last snapshot holding them is deleted.
func (s *fsState) keepSnapshotted(dropped []*blockmap.Block) []*blockmap.Block {
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
