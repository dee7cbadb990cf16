package replog

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The read lease (the Raft thesis §6.4.1; etcd's ReadOnlyLeaseBased):
// once a VerifyLeader that began at t0 succeeds, a majority had contact
// with this leader at or after t0, and no other leader can be elected
// before t0 + HeartbeatTimeout. Until then the namespace this leader
// holds is the group's newest, so a read may be served from it without
// a raft round.
//
// Why, in hashicorp/raft v1.7.3 (the version in go.mod):
//   - raft.go:requestVote and raft.go:requestPreVote refuse a candidate
//     while the follower knows a leader (LeaderWithID non-empty) other
//     than that candidate, before they look at its term.
//   - raft.go:runFollower forgets the leader (setLeader("", "")) only
//     when its heartbeat timer (randomTimeout: HeartbeatTimeout to twice
//     it) fires and time.Since(LastContact()) >= HeartbeatTimeout; and
//     raft.go:appendEntries, on success, calls setLastContact before its deferred
//     reply, so a follower that acknowledged the barrier had contact at
//     or after t0 (the barrier entry did not exist before t0). A follower
//     restarted after acknowledging starts its timer at its start, later
//     still.
//   - A member of the majority that is the leader itself refuses others
//     while it leads; when it steps down it may vote at once, which is
//     why the lease also ends with this node's leadership (Lease reads
//     raft's state, which changes before the step-down's first vote).
//
// So every majority that could elect another leader holds a member that
// refuses until t0 + HeartbeatTimeout on its own clock. The lease lasts
// HeartbeatTimeout × (1 − LeaseDriftMargin) on this node's clock: the
// margin absorbs a difference of clock rates between members (bounded
// drift, an assumption), and members must share the heartbeat timeout
// (an assumption the group cannot check: each has its own config).
//
// Exceptions:
//   - A leadership transfer: raft.go:timeoutNow makes the target a
//     candidate whose RequestVote carries LeadershipTransfer, for which
//     requestVote ignores the known leader. TransferLeadership ends the
//     lease before it asks raft, and no lease is granted again in this
//     term: a failed transfer's TimeoutNow may still reach the target
//     later (raft.go:timeoutNow does not check the term), and a
//     VerifyLeader that began before the transfer may end after it.
//     (A TimeoutNow delayed across a whole later term is a hole of
//     raft's own we cannot close here.)
//   - A change of term or losing leadership: the lease names its term.
//
// A paused leader (SIGSTOP, a long GC, a VM stall): Lease compares with
// the clock read at the call, after any pause before it, so a read whose
// check comes after a pause longer than the lease is not served from it.
// A read that passed the check before a pause returns what this member
// holds, which includes every write acknowledged before the check (no
// other leader existed yet); the check lies inside the read's interval,
// so that answer is linearizable even if the reply leaves much later.
// The clock is CLOCK_BOOTTIME on Linux (leaseClock), which also counts a
// suspend of the host, where Go's monotonic clock stops.

// LeaseDriftMargin is the share of the heartbeat timeout a lease gives
// up to clock-rate differences between members. The danger is this
// leader's clock running slow against a follower's (its lease would
// outlast the follower's wait; a follower whose clock is slower only
// waits longer): 0.2 tolerates a member whose clock runs up to 25%
// faster than this one's, i.e. this one losing up to 0.2 × the heartbeat
// timeout per lease. ntp keeps rates within 500 ppm; a leader's VM whose
// clock stops during a stall and does not catch up loses more than that
// and is not covered.
const LeaseDriftMargin = 0.2

// lease is this leader's read lease (zero: none).
type lease struct {
	mu    sync.Mutex
	term  uint64        // the term it was granted in
	until time.Duration // leaseClock reading at which it ends
	// noLeaseTerm is a term in which this node started a transfer: no
	// lease is granted in it, not even by a VerifyLeader that began
	// before the transfer.
	noLeaseTerm uint64
}

// LeaseDuration is how long a VerifyLeader's lease lasts from its start
// (0: the lease is off, Config.ReadLease).
func (l *Log) LeaseDuration() time.Duration { return l.cfg.ReadLease }

// Lease reports the time left of the read lease, with ok false when
// there is none (expired, never granted, another term, not the ready
// leader, a transfer started in this term). Call it after the read
// arrived and right before reading the state.
func (l *Log) Lease() (left time.Duration, ok bool) {
	if l.cfg.ReadLease <= 0 {
		return 0, false
	}
	l.lease.mu.Lock()
	term, until := l.lease.term, l.lease.until
	l.lease.mu.Unlock()
	if term == 0 {
		return 0, false
	}
	// Raft's own state first: it turns Follower before this node votes
	// for anyone after a step-down; the term changes with any election it
	// sees.
	if l.raft.State() != raft.Leader || l.raft.CurrentTerm() != term || l.Writable() != nil {
		return 0, false
	}
	now, ok := leaseClock()
	if !ok {
		return 0, false
	}
	left = until - now
	return left, left > 0
}

// verifyLease is VerifyLeader recording the lease its success grants.
func (l *Log) verifyLease(verify func() error) error {
	if l.cfg.ReadLease <= 0 {
		return verify()
	}
	// t0 and the term are read before the barrier is proposed.
	t0, clockOK := leaseClock()
	term := l.raft.CurrentTerm()
	if err := verify(); err != nil {
		return err
	}
	if !clockOK || l.raft.State() != raft.Leader || l.raft.CurrentTerm() != term {
		return nil // the read index held; no lease from a term that ended
	}
	l.lease.mu.Lock()
	defer l.lease.mu.Unlock()
	if l.lease.noLeaseTerm == term {
		return nil
	}
	if until := t0 + l.cfg.ReadLease; l.lease.term != term || until > l.lease.until {
		l.lease.term, l.lease.until = term, until
	}
	return nil
}

// endLease ends the lease before this node starts a leadership transfer
// and forbids one for the rest of the term (see the exceptions above).
func (l *Log) endLease() {
	term := l.raft.CurrentTerm()
	l.lease.mu.Lock()
	l.lease.noLeaseTerm = term
	l.lease.term, l.lease.until = 0, 0
	l.lease.mu.Unlock()
}
