package store

import "fmt"

// Append reopens a replica for a client appending to its block (HDFS's
// FsDatasetImpl append and recoverAppend), under the new generation stamp
// newGS the namenode gave the writer:
//
//   - a finalized replica must have the block's stamp gs and exactly length
//     bytes (the namenode's length of the block); it goes back to being
//     written, in rbw/;
//   - a replica being written that an earlier attempt of the same append
//     reopened (a stamp from gs up to, not including, newGS) is cut back to
//     length and resumed, so a pipeline whose set-up failed on another node
//     can be built again.
//
// The writer continues at length; when length ends inside a checksum
// chunk, the chunk's stored checksum is extended by the appended bytes.
func (s *Store) Append(id, gs, newGS uint64, length int64, bpc int) (*Writer, error) {
	if newGS <= gs {
		return nil, fmt.Errorf("append to %s needs a newer generation stamp, got %d", BlockName(id, gs), newGS)
	}
	r, err := s.lockIdle(id)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	switch {
	case r.Corrupt:
		return nil, fmt.Errorf("%w: %s cannot be appended to", ErrCorrupt, r.Name())
	case r.State == Finalized && r.GS != gs:
		return nil, fmt.Errorf("%w: cannot append to %s: the block's generation stamp is %d", ErrNotFound, r.Name(), gs)
	case r.State == Finalized && r.Length != length:
		return nil, fmt.Errorf("cannot append to %s: it has %d bytes, the block has %d", r.Name(), r.Length, length)
	case r.State == RBW && (r.GS < gs || r.GS >= newGS):
		return nil, fmt.Errorf("%w: cannot append to %s, being written under generation stamp %d (append from %d to %d)", ErrExists, r.Name(), r.GS, gs, newGS)
	case r.State == RBW && r.Length < length:
		return nil, fmt.Errorf("cannot append to %s: it has %d bytes, fewer than the block's %d", r.Name(), r.Length, length)
	case r.State != Finalized && r.State != RBW:
		return nil, fmt.Errorf("%w: cannot append to %s: it is %s", ErrNotFound, r.Name(), r.State)
	case bpc != r.BytesPerChecksum:
		return nil, fmt.Errorf("%s uses %d-byte checksum chunks, not %d", r.Name(), r.BytesPerChecksum, bpc)
	}
	if r.State == Finalized {
		s.changedLocked(r)
		if err := s.unfinalizeLocked(r); err != nil {
			return nil, err
		}
		r.State = RBW
	}
	if err := s.retruncateLocked(r, length, newGS); err != nil {
		return nil, err
	}
	return s.resumeLocked(r, length, bpc)
}

// CutRecovery ends truncate recovery of a replica: like UpdateRecovery,
// but a finalized replica is cut to newLength too (a truncate shortens a
// complete block on purpose; plain lease recovery never shortens one).
func (s *Store) CutRecovery(id, recoveryID uint64, newLength int64) (Replica, error) {
	return s.updateRecovery(id, recoveryID, newLength, true)
}

// unfinalizeLocked moves a finalized replica's files back to rbw/, block
// file first: a crash between the two renames leaves the meta file in
// finalized/ and the block file in rbw/, which the next scan moves back
// to a finalized replica as it was (moveLocked's order, meta first, would
// leave each file alone in its directory and the scan would delete both).
func (s *Store) unfinalizeLocked(r *replica) error {
	oldData, oldMeta, oldDir := r.dataPath(), r.metaPath(), r.dir
	r.dir = r.vol.rbw
	if err := s.fs.Rename(oldData, r.dataPath()); err != nil {
		r.dir = oldDir
		return err
	}
	if err := s.fs.Rename(oldMeta, r.metaPath()); err != nil {
		_ = s.fs.Rename(r.dataPath(), oldData)
		r.dir = oldDir
		return err
	}
	return nil
}
