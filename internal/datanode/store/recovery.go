package store

import "fmt"

// InitRecovery starts lease recovery of a replica (InterDatanodeProtocol's
// InitReplicaRecovery): a writer still attached is stopped, an RBW replica
// becomes RUR, and recoveryID (the new generation stamp) is recorded so an
// older recovery cannot interfere. It returns the replica as stored and its
// state before recovery.
func (s *Store) InitRecovery(id, recoveryID uint64) (Replica, State, error) {
	r, err := s.lockIdle(id)
	if err != nil {
		return Replica{}, 0, err
	}
	defer s.mu.Unlock()
	if r.State == Temporary {
		return Replica{}, 0, fmt.Errorf("%w: %s is a temporary copy", ErrNotFound, r.Name())
	}
	if recoveryID <= r.recoveryID {
		return Replica{}, 0, fmt.Errorf("%s: recovery %d is older than recovery %d already started", r.Name(), recoveryID, r.recoveryID)
	}
	if recoveryID <= r.GS {
		return Replica{}, 0, fmt.Errorf("%s: recovery id %d is not newer than its generation stamp", r.Name(), recoveryID)
	}
	r.recoveryID = recoveryID
	// Recovery ends with a new generation stamp and maybe a shorter
	// replica: a cached copy is stale from here on.
	s.changedLocked(r)
	switch r.State {
	case RBW:
		r.original, r.State = RBW, RUR
	case Finalized:
		r.original = Finalized
	}
	return r.Replica, r.original, nil
}

// UpdateRecovery ends lease recovery of a replica
// (UpdateReplicaUnderRecovery): it is truncated to newLength, moved to
// generation stamp recoveryID and finalized.
func (s *Store) UpdateRecovery(id, recoveryID uint64, newLength int64) (Replica, error) {
	return s.updateRecovery(id, recoveryID, newLength, false)
}

func (s *Store) updateRecovery(id, recoveryID uint64, newLength int64, cut bool) (Replica, error) {
	r, err := s.lockIdle(id)
	if err != nil {
		return Replica{}, err
	}
	defer s.mu.Unlock()
	switch {
	case r.recoveryID != recoveryID:
		return Replica{}, fmt.Errorf("%s: recovery id %d, replica is under recovery %d", r.Name(), recoveryID, r.recoveryID)
	case r.State != RUR && r.State != Finalized:
		return Replica{}, fmt.Errorf("%s is %s, not under recovery", r.Name(), r.State)
	case r.Length < newLength:
		return Replica{}, fmt.Errorf("%s has %d bytes, fewer than the new length %d", r.Name(), r.Length, newLength)
	case r.State == Finalized && r.Length != newLength && !cut:
		return Replica{}, fmt.Errorf("%s is finalized with %d bytes, not %d", r.Name(), r.Length, newLength)
	}
	if err := s.retruncateLocked(r, newLength, recoveryID); err != nil {
		return Replica{}, err
	}
	if r.State != Finalized {
		if err := s.moveLocked(r, r.vol.finalized); err != nil {
			return Replica{}, err
		}
		r.State = Finalized
	}
	return r.Replica, nil
}
