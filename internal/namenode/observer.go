package namenode

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"smarth/internal/ipc"
	"smarth/internal/rpc/standby"
)

// Observer reads (issue 28, beyond HDFS's Observer NameNode): a standby
// serves the namespace reads of a client that asks for them with its
// state id, the highest edit it has seen acknowledged by any member of
// the group (every reply to a call that carries ipc.StateKey carries the
// member's own, stateID). Before serving, the standby waits until it
// has applied every edit up to the client's state id, at most
// observerWait: so a client reads its own writes and never sees the
// namespace go back in time, across members, as HDFS's AlignmentContext
// promises. A standby further behind refuses with the usual
// StandbyException, and the client asks the active.
//
// A client starts from the active's state: before its first observer
// read it calls Msync, which only the active answers, after verifying
// its leadership, so it sees every edit acknowledged before it started
// (HDFS-14272: `fs -put` then `fs -cat` from two processes).
//
// What this does not promise: a read served by a standby is not
// linearizable. A client sees every edit it, or a reply it received,
// has seen, but not one acknowledged to another client since its msync
// that it has not heard of (another Msync, or any call to the active,
// whose reply raises the client's state, catches up). Reads that need
// the active's view stay on the active: fsck (replication health), and a
// getBlockLocations that would update an access time (an edit), finds
// a block with no replica the standby knows of (its block reports may
// trail the edit) or is of a file being written is refused, as HDFS's
// observer throws ObserverRetryOnActiveException.

// observerWait bounds how long a standby holds an observer read for its
// log to catch up: a standby that heard from the active lately is
// milliseconds behind; one further behind than this is better left
// alone (cut off, or loaded) than waited for.
const observerWait = 500 * time.Millisecond

// observerRead are the calls a standby may serve as an observer: the
// namespace reads of the read index (linearRead) but fsck and msync, the
// list the client also uses.
var observerRead = standby.ObserverReads

// stateID is what replies carry as the member's state: every edit up to
// it is committed and applied here (0 without HA: a single namenode
// sends none, and clients then never read from a standby).
func (nn *NameNode) stateID() uint64 {
	if nn.ha == nil {
		return 0
	}
	return nn.ha.edits.state.Load()
}

// admitObserverRead reports whether this standby serves method for the
// caller now: an observer read of a client that sent its state id, with
// ha_observer_reads on, once the state is applied here.
func (h *haNode) admitObserverRead(ctx context.Context, method string) bool {
	// A member whose stint as the active ended with edits not known
	// committed (terminating) may hold in memory edits the group will
	// not have: it serves nothing.
	if !h.nn.cfg.HA.ObserverReads || !observerRead[method] || h.terminating.Load() {
		return false
	}
	want, ok := clientState(ctx)
	if !ok {
		return false
	}
	if err := h.edits.awaitCommitted(ctx, want, observerWait); err != nil {
		h.observerRefused.Add(1)
		h.nn.logger.Debug("observer read sent to the active", "method", method, "error", err)
		return false
	}
	h.observerServed.Add(1)
	return true
}

// clientState is the state id a call carries (ipc.StateKey).
func clientState(ctx context.Context) (uint64, bool) {
	v := metadata.ValueFromIncomingContext(ctx, ipc.StateKey)
	if len(v) != 1 {
		return 0, false
	}
	n, err := strconv.ParseUint(v[0], 10, 64)
	return n, err == nil
}

// observerBlocksRefusal is a standby's answer to an observer's
// getBlockLocations that it must not serve (nil: serve it): one that
// would record an access time, an edit only the active makes, or whose
// locations the standby may not know (unknown: a finished block with no
// location, whose replicas' reports may not have reached this member yet,
// or a file being written).
func (nn *NameNode) observerBlocksRefusal(accessTime bool, unknown bool) error {
	if nn.isActive() || !accessTime && !unknown {
		return nil
	}
	return standby.Error(standby.Read, nn.ha.activeRPC())
}

// stateTrailer is the gRPC transport's way to send the state id: a
// unary interceptor that sets it as the reply's trailer for a call that
// carries ipc.StateKey (the IPC transport puts it in the reply frame,
// ipc.ServerOptions.ReplyState).
func (nn *NameNode) stateTrailer(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if _, ok := clientState(ctx); ok && nn.ha != nil {
		grpc.SetTrailer(ctx, metadata.Pairs(ipc.StateKey, strconv.FormatUint(nn.stateID(), 10)))
	}
	return resp, err
}
