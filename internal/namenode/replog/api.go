package replog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// IsLeader reports whether this node is the ready leader (Writable nil).
func (l *Log) IsLeader() bool { return l.Writable() == nil }

// Leader is the leader this node knows of (empty during an election).
func (l *Log) Leader() (id, addr string) {
	a, i := l.raft.LeaderWithID()
	return string(i), string(a)
}

// Term is raft's current term: the fencing epoch of the leader (HDFS's
// QJM epoch). Anything a leader stamps with its term (datanode commands)
// is obeyed only while no higher term is known.
func (l *Log) Term() uint64 { return l.raft.CurrentTerm() }

// VerifyLeader returns nil only if a majority accepted an entry of this
// leader's term after the call began: a read served after it is
// linearizable (it sees every write acknowledged before the read
// began), because a majority that had voted for a newer leader would
// have refused the entry. It is a barrier entry, not raft's
// VerifyLeader: that one counts heartbeat and append responses that
// arrive after the call even when they answer requests sent before it
// (TestVerifyLeader saw it pass in 65 µs on a leader whose followers had
// just been closed). The barrier costs a raft round and waits for the
// entries before it; the caller shares one among concurrent readers.
//
// With Config.ReadLease, its success also grants the read lease from
// the moment it began (lease.go).
func (l *Log) VerifyLeader(ctx context.Context) error {
	if err := l.Writable(); err != nil {
		return err
	}
	return l.verifyLease(func() error { return l.wait(ctx, l.raft.Barrier(0)) })
}

// wait waits for f or ctx, and maps raft's leadership errors to ours.
func (l *Log) wait(ctx context.Context, f raft.Future) error {
	ch := make(chan error, 1)
	go func() { ch <- f.Error() }()
	select {
	case err := <-ch:
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return l.notLeader()
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TransferLeadership hands leadership to id (any up-to-date voter when
// id is empty): the planned failover of `haadmin -failover`. Pending
// Syncs of this node fail with ErrNotLeader. The read lease ends first,
// for the rest of the term: the target's election ignores the
// followers' loyalty to this leader (lease.go).
//
// raft gives the target one election timeout to win; on a loaded host
// that can pass while the target is still campaigning, and raft answers
// "leadership transfer timeout" and stays leader. The transfer is then
// asked again while ctx allows, unless the target won after all.
func (l *Log) TransferLeadership(ctx context.Context, id string) error {
	l.endLease()
	op := l.raft.LeadershipTransfer
	if id != "" {
		addr, err := l.addrOf(id)
		if err != nil {
			return err
		}
		op = func() raft.Future { return l.raft.LeadershipTransferToServer(raft.ServerID(id), addr) }
	}
	for retry := false; ; retry = true {
		err := l.untilNoTransfer(ctx, op)
		if err == nil {
			return nil
		}
		// After a timeout this node may have stepped down since: the
		// target's election can end after raft's timer (a slow TimeoutNow,
		// a busy target), and an attempt asked meanwhile finds this node a
		// follower. Judge by who leads once someone does.
		if (retry || isTransferTimeout(err)) && l.raft.State() != raft.Leader {
			if leader := l.awaitLeader(ctx); id == "" && leader != l.cfg.ID || leader == id {
				return nil
			}
			return err
		}
		if !isTransferTimeout(err) || ctx.Err() != nil {
			return err
		}
	}
}

// awaitLeader returns the leader's id once one is known, or "" when ctx
// ends first.
func (l *Log) awaitLeader(ctx context.Context) string {
	for {
		if id, _ := l.Leader(); id != "" {
			return id
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// isTransferTimeout: raft's timeout is an unexported fmt error.
func isTransferTimeout(err error) bool {
	return strings.Contains(err.Error(), "leadership transfer timeout")
}

// untilNoTransfer runs op again while raft refuses it because a
// leadership transfer is in progress. raft keeps that state until its
// transfer goroutine ends, which can be seconds after a failed transfer
// returned (a TimeoutNow to a dead node waits for the transport's
// timeout), and refuses appends, barriers and membership changes until
// then.
func (l *Log) untilNoTransfer(ctx context.Context, op func() raft.Future) error {
	for {
		err := l.wait(ctx, op())
		if !errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waiting for it to end: %v)", err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Settle returns once this leader takes entries again after a
// leadership transfer that failed (a barrier entry is committed), or
// with the error that stops it (not the leader any more, ctx).
func (l *Log) Settle(ctx context.Context) error {
	return l.untilNoTransfer(ctx, func() raft.Future { return l.raft.Barrier(0) })
}

func (l *Log) addrOf(id string) (raft.ServerAddress, error) {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return "", err
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == id {
			return s.Address, nil
		}
	}
	return "", fmt.Errorf("replog: %s is not a member of the group", id)
}

// AddVoter adds a node (or changes its address); it first catches up as
// raft replicates to it, then votes. Only the leader can.
func (l *Log) AddVoter(ctx context.Context, id, addr string) error {
	l.followers.forget(raft.ServerID(id))
	return l.untilNoTransfer(ctx, func() raft.Future { return l.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0) })
}

// RemoveServer removes a node from the group. Only the leader can.
// Removing itself, the leader steps down once the change commits, and
// the others may elect at once: its read lease ends first.
func (l *Log) RemoveServer(ctx context.Context, id string) error {
	if id == l.cfg.ID {
		l.endLease()
	}
	defer l.followers.forget(raft.ServerID(id))
	return l.untilNoTransfer(ctx, func() raft.Future { return l.raft.RemoveServer(raft.ServerID(id), 0, 0) })
}

// Snapshot takes a snapshot now (as a checkpoint does) and compacts the
// log behind it.
func (l *Log) Snapshot(ctx context.Context) error {
	return l.wait(ctx, l.raft.Snapshot())
}

// Member is one voter of the group.
type Member struct {
	ID, Addr string
	Voter    bool
}

// Stats is what `smarth admin ha status` and the console show of a node.
type Stats struct {
	ID, Role          string // Leader, Follower, Candidate, Shutdown
	Leader            string
	Ready             bool // the leader takes writes
	Term              uint64
	CommitIndex       uint64 // raft indexes
	AppliedIndex      uint64
	LastLogIndex      uint64
	AppliedTxID       uint64 // records applied here, in log order
	AppendedTxID      uint64 // last record appended (leader) or applied
	LastContact       time.Duration
	Diverged          bool
	Members           []Member
	SnapshotLastIndex uint64
	// Batches and Records this node proposed as leader: Records/Batches
	// is the group commit's batch size.
	Batches, Records uint64
}

// Stats reads the node's state. Per-follower lag in entries is the
// leader's Followers (followers.go): the library does not expose it.
func (l *Log) Stats() Stats {
	s := l.raft.Stats()
	u := func(k string) uint64 { v, _ := strconv.ParseUint(s[k], 10, 64); return v }
	st := Stats{
		ID:                l.cfg.ID,
		Role:              l.raft.State().String(),
		Term:              u("term"),
		CommitIndex:       u("commit_index"),
		AppliedIndex:      u("applied_index"),
		LastLogIndex:      u("last_log_index"),
		SnapshotLastIndex: u("last_snapshot_index"),
	}
	st.Leader, _ = l.Leader()
	if lc := l.raft.LastContact(); !lc.IsZero() {
		st.LastContact = time.Since(lc)
	}
	if f := l.raft.GetConfiguration(); f.Error() == nil {
		for _, m := range f.Configuration().Servers {
			st.Members = append(st.Members, Member{ID: string(m.ID), Addr: string(m.Address), Voter: m.Suffrage == raft.Voter})
		}
	}
	l.mu.Lock()
	st.Ready, st.AppliedTxID, st.AppendedTxID, st.Diverged = l.token != 0, l.applied, l.lastTxID, l.diverged
	st.Batches, st.Records = l.batches, l.records
	l.mu.Unlock()
	return st
}

// Err is the error that stopped this node's log, or nil.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close stops the node: pending Syncs fail, raft shuts down, the stores
// close. The data directory stays for the next Open.
func (l *Log) Close() error {
	err := l.raft.Shutdown().Error()
	close(l.done)
	l.wg.Wait()
	l.mu.Lock()
	if l.open != nil && !l.open.sent {
		l.failLocked(l.open, raft.ErrRaftShutdown)
		l.open = nil
	}
	// raft has stopped: what it has not answered it never will (see
	// await). The outcome is unknown, as for any failed Sync.
	for b := range l.inflight {
		l.failLocked(b, raft.ErrRaftShutdown)
	}
	clear(l.inflight)
	l.token = 0
	l.gen++ // a becomeReady still waiting on its barrier must not make this node ready
	l.mu.Unlock()
	// The transport's Close stops accepting but leaves the connections
	// peers already hold being served; a closed node must fall silent.
	terr := l.trans.Close()
	l.trans.CloseStreams()
	return errors.Join(err, terr, l.store.Close())
}
