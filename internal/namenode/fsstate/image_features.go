package fsstate

import (
	"fmt"
	"slices"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// Image records of ACLs, storage policies and snapshots, after the cache
// records. Lower-case tags keep them apart from the others'.
const (
	recImageACL           = 'a' // live inode id, stored ACL entries
	recImagePolicy        = 'p' // live inode id, own storage policy
	recImageSnapshottable = 's' // live directory id
	recImageSnapshot      = 't' // directory id, number of inodes; its inodes follow
	recImageSnapInode     = 'n' // an inode of a snapshot (inode record, ACL, policy)
	recImageRetained      = 'r' // a block only snapshots hold: ref, state, file id, replication
	recImageAppended      = 'b' // a file open for append: inode id, its reopened block as it was (ref)
	recImageCopySource    = 'c' // a file in copy-on-truncate: inode id, the block copied from (ref)
	recImageWriterUser    = 'w' // an open file: inode id, the user who opened it (namespace.Writer.User)
)

func isFeatureRecord(b []byte) bool {
	switch b[0] {
	case recImageACL, recImagePolicy, recImageSnapshottable, recImageSnapshot, recImageSnapInode, recImageRetained, recImageAppended,
		recImageCopySource, recImageWriterUser, recImageToken:
		return true
	}
	return false
}

// eachFeatureRecord emits the ACLs and policies of live inodes, the
// snapshottable directories with their snapshots, and the blocks kept
// only for snapshots.
func (s *State) eachFeatureRecord(e *enc, emit func([]byte)) {
	t := s.tree
	var retained []uint64
	t.Walk(func(n *namespace.INode) bool {
		if acl := t.StoredACL(n); acl != nil {
			e.b = append(e.b[:0], recImageACL)
			e.u(n.ID)
			encodeACL(e, acl)
			emit(e.b)
		}
		if id, ok := t.OwnStoragePolicy(n); ok {
			e.b = append(e.b[:0], recImagePolicy)
			e.u(n.ID)
			e.u(uint64(id))
			emit(e.b)
		}
		if w := n.Writer(); w != nil && w.Appended.ID != 0 {
			e.b = append(e.b[:0], recImageAppended)
			e.u(n.ID)
			encRef(e, BlockRef{ID: w.Appended.ID, GS: w.Appended.GS, Len: w.Appended.NumBytes})
			emit(e.b)
		}
		if w := n.Writer(); w != nil && w.User != "" {
			// A record of its own rather than a field of the inode's, so
			// that images written before it still load (their open files
			// have no user: see fileForWriteLocked).
			e.b = append(e.b[:0], recImageWriterUser)
			e.u(n.ID)
			e.s(w.User)
			emit(e.b)
		}
		if w := n.Writer(); w != nil && w.CopySource.ID != 0 {
			e.b = append(e.b[:0], recImageCopySource)
			e.u(n.ID)
			encRef(e, BlockRef{ID: w.CopySource.ID, GS: w.CopySource.GS, Len: w.CopySource.NumBytes})
			emit(e.b)
			// The source is in no live file; it is kept even if the
			// snapshots that held it are gone, until the copy is done.
			if s.blocks.Get(w.CopySource.ID) != nil {
				retained = append(retained, w.CopySource.ID)
			}
		}
		return true
	})
	t.EachSnapshot(func(dir *namespace.INode, snaps []namespace.SnapshotInfo) {
		e.b = append(e.b[:0], recImageSnapshottable)
		e.u(dir.ID)
		emit(e.b)
		for _, sn := range snaps {
			var nodes []*namespace.INode
			walkSnapshot(sn.Root, func(n *namespace.INode) { nodes = append(nodes, n) })
			e.b = append(e.b[:0], recImageSnapshot)
			e.u(dir.ID)
			e.u(uint64(len(nodes)))
			emit(e.b)
			var ie enc
			for _, n := range nodes {
				ie.b = ie.b[:0]
				encodeINode(&ie, n)
				e.b = append(e.b[:0], recImageSnapInode)
				e.s(string(ie.b))
				encodeACL(e, t.StoredACL(n))
				id, _ := t.OwnStoragePolicy(n)
				e.u(uint64(id))
				emit(e.b)
				for _, b := range n.Blocks {
					if lb := s.blocks.Get(b.ID); lb != nil && !s.liveBlock(lb) {
						retained = append(retained, b.ID)
					}
				}
			}
		}
	})
	slices.Sort(retained)
	for _, id := range slices.Compact(retained) {
		b := s.blocks.Get(id)
		e.b = append(e.b[:0], recImageRetained)
		encRef(e, BlockRef{ID: b.ID, GS: b.GS, Len: b.NumBytes})
		e.u(uint64(b.State))
		e.u(b.FileID)
		e.u(uint64(b.Expected))
		emit(e.b)
	}
}

// walkSnapshot visits a snapshot's inodes, parents first, children in
// name order.
func walkSnapshot(n *namespace.INode, fn func(*namespace.INode)) {
	fn(n)
	for _, c := range n.Children() {
		walkSnapshot(c, fn)
	}
}

// loadFeatureRecords restores what eachFeatureRecord wrote; the inodes
// are loaded by then.
func (s *State) loadFeatureRecords(recs [][]byte) error {
	t := s.tree
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		d := &dec{b: r[1:]}
		switch r[0] {
		case recImageToken:
			if err := s.loadTokenRecord(d); err != nil {
				return err
			}
		case recImageACL, recImagePolicy:
			id := d.u()
			var acl []namespace.ACLEntry
			var policy uint64
			if r[0] == recImageACL {
				acl = decodeACL(d)
			} else {
				policy = d.u()
			}
			if err := d.done(); err != nil {
				return fmt.Errorf("image %c record: %w", r[0], err)
			}
			n := t.ByID(id)
			if n == nil {
				return fmt.Errorf("image %c record of unknown inode %d", r[0], id)
			}
			if r[0] == recImageACL {
				t.RestoreACL(n, acl)
			} else {
				t.RestoreStoragePolicy(n, uint8(policy))
			}
		case recImageSnapshottable:
			id := d.u()
			if err := d.done(); err != nil {
				return fmt.Errorf("image snapshottable record: %w", err)
			}
			if err := t.RestoreSnapshottable(id); err != nil {
				return err
			}
		case recImageSnapshot:
			dirID, count := d.u(), d.u()
			if err := d.done(); err != nil {
				return fmt.Errorf("image snapshot record: %w", err)
			}
			if count == 0 || count > uint64(len(recs)-i-1) {
				return fmt.Errorf("image snapshot of inode %d: %d inodes, %d records left", dirID, count, len(recs)-i-1)
			}
			root, err := s.loadSnapshotInodes(recs[i+1 : i+1+int(count)])
			if err != nil {
				return fmt.Errorf("image snapshot of inode %d: %w", dirID, err)
			}
			if err := t.RestoreSnapshot(dirID, root); err != nil {
				return err
			}
			i += int(count)
		case recImageRetained:
			ref := decRef(d)
			st, file, expected := blockmap.State(d.u()), d.u(), int(d.u())
			if err := d.done(); err != nil {
				return fmt.Errorf("image retained block: %w", err)
			}
			if s.blocks.Get(ref.ID) != nil {
				return fmt.Errorf("retained block %d is also a live file's", ref.ID)
			}
			s.blocks.Add(&blockmap.Block{ID: ref.ID, GS: ref.GS, NumBytes: ref.Len, State: st, FileID: file, Expected: expected})
		case recImageAppended:
			id, ref := d.u(), decRef(d)
			if err := d.done(); err != nil {
				return fmt.Errorf("image appended-block record: %w", err)
			}
			n := t.ByID(id)
			if n == nil || n.IsDir() || n.Writer() == nil || n.BlockIndex(ref.ID) < 0 {
				return fmt.Errorf("image appended-block record: inode %d is not an open file with block %d", id, ref.ID)
			}
			n.Writer().Appended = namespace.AppendedBlock{ID: ref.ID, GS: ref.GS, NumBytes: ref.Len}
		case recImageWriterUser:
			id, user := d.u(), d.s()
			if err := d.done(); err != nil {
				return fmt.Errorf("image writer-user record: %w", err)
			}
			n := t.ByID(id)
			if n == nil || n.IsDir() || n.Writer() == nil {
				return fmt.Errorf("image writer-user record: inode %d is not an open file", id)
			}
			n.Writer().User = user
		case recImageCopySource:
			id, ref := d.u(), decRef(d)
			if err := d.done(); err != nil {
				return fmt.Errorf("image copy-on-truncate record: %w", err)
			}
			n := t.ByID(id)
			if n == nil || n.IsDir() || n.Writer() == nil || ref.ID == 0 || n.BlockIndex(ref.ID) >= 0 {
				return fmt.Errorf("image copy-on-truncate record: inode %d is not a file being truncated from block %d", id, ref.ID)
			}
			if s.blocks.Get(ref.ID) != nil {
				// Only live files' blocks are loaded yet (the source comes
				// with the retained blocks, last): a live file's block is
				// no copy source, and saving it as retained would make an
				// image that does not load.
				return fmt.Errorf("image copy-on-truncate record: inode %d's source block %d is a live file's", id, ref.ID)
			}
			n.Writer().CopySource = namespace.AppendedBlock{ID: ref.ID, GS: ref.GS, NumBytes: ref.Len}
		case recImageSnapInode:
			return fmt.Errorf("snapshot inode record outside a snapshot")
		}
	}
	return nil
}

// loadSnapshotInodes rebuilds one snapshot's tree; the first record is
// its root.
func (s *State) loadSnapshotInodes(recs [][]byte) (*namespace.INode, error) {
	byID := map[uint64]*namespace.INode{}
	var root *namespace.INode
	for _, r := range recs {
		if r[0] != recImageSnapInode {
			return nil, fmt.Errorf("record %q where a snapshot inode was expected", r[0])
		}
		d := &dec{b: r[1:]}
		raw := d.s()
		acl := decodeACL(d)
		policy := d.u()
		if err := d.done(); err != nil {
			return nil, err
		}
		parent, n, _, oldBS, err := decodeINode([]byte(raw), imageVersion)
		if err != nil {
			return nil, err
		}
		if oldBS != 0 {
			// Its path in the snapshot is known only once linked; the
			// live file, if any, is named by its own warning.
			s.warnCappedBlockSize("image snapshot", fmt.Sprintf("inode %d (%q) of a snapshot", n.ID, n.Name), oldBS)
		}
		if byID[n.ID] != nil {
			return nil, fmt.Errorf("inode %d twice", n.ID)
		}
		if root == nil {
			root = n
		} else {
			p := byID[parent]
			if p == nil {
				return nil, fmt.Errorf("inode %d: parent %d not seen", n.ID, parent)
			}
			if err := namespace.AttachSnapshotChild(p, n); err != nil {
				return nil, err
			}
		}
		byID[n.ID] = n
		if len(acl) > 0 {
			s.tree.RestoreACL(n, acl)
		}
		if policy != 0 {
			s.tree.RestoreStoragePolicy(n, uint8(policy))
		}
	}
	return root, nil
}
