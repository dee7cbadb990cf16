package namenode

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"smarth/internal/namenode/replog"
	"smarth/internal/rpc/standby"
)

// Linearizable reads on the active (issue 28: "reads served by the leader
// are linearizable"). An active answers reads from its memory; one that
// was frozen (SIGSTOP, a long pause) or cut off and has not yet noticed
// that the others elected a successor would answer from a namespace that
// misses what the new active has since acknowledged. With
// ha_read_consistency: linearizable (the default) every namespace read
// on an HA active first waits for a read index: a VerifyLeader (a
// barrier entry of this leader's term committed by a majority) that
// began after the read arrived. A majority that had elected a newer
// leader would refuse it, so a deposed active answers the read with a
// standby refusal naming the leader it learns of, and the client goes
// there. After the read has run, its reply also waits until every edit
// it could have seen is committed (the active's memory runs ahead of the
// log by the batch being committed), so a read never reveals an edit the
// group may yet lose.
//
// The cost is one raft round per batch of reads, not per read:
// concurrent readers share one verification, and a reader that arrives
// while one is in flight waits for the next (the one in flight may have
// been proposed before it arrived, so it proves nothing about it).
// ha_read_consistency: leader is the previous behaviour: reads from the
// active's memory, not linearizable. A namenode without HA has no gate.
//
// ha_read_consistency: lease skips that round while the active holds a
// read lease (replog's lease.go: why no other leader can exist before it
// ends, and its exceptions): a verification that began at t0 and
// succeeded lets reads pass until t0 + ha_heartbeat_timeout × 0.8. The
// lease is checked after the read arrived, right before it reads the
// namespace (a pause before the check finds it expired); a read arriving
// after it ended waits for a read index as in linearizable mode, whose
// success grants the next lease. With less than half of it left, a read
// starts one verification in the background (at most one in flight), so
// that steady reads never wait. The commit wait after the read is the
// same in every mode.

// Values of ha_read_consistency.
const (
	readsLinearizable = "linearizable"
	readsLeader       = "leader"
	readsLease        = "lease"
)

// linearRead are the client calls that read replicated state (the
// namespace, its attributes, snapshots, cache directives): they pass the
// read index. The other READ calls (standbyRead) report per-member
// state that no log orders (datanodes, speeds, server defaults, safe
// mode), for which a verification would prove nothing.
var linearRead = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{"GetBlockLocations", "GetFileInfo", "GetListing", "GetXAttrs", "ListXAttrs",
		"GetContentSummary", "GetAclStatus", "GetSnapshottableDirListing", "GetSnapshotDiffReport",
		"GetStoragePolicy", "Fsck", "ListCachePools", "ListCacheDirectives",
		// the state id it answers with covers every edit acknowledged
		// before the call only from a leader that is one
		"Msync"} {
		m[clientProtocol+n] = true
	}
	return m
}()

// readIndex shares leader verifications among concurrent readers.
type readIndex struct {
	verify func(context.Context) error // replog's VerifyLeader
	stop   <-chan struct{}             // the namenode stops: fail verifications

	// depth is how many verifications may be in flight at once; readers
	// beyond share the next.
	depth int

	mu       sync.Mutex
	inFlight int
	next     *verification // the one readers arriving now wait for
}

// verification is one VerifyLeader; done closes when err is set.
type verification struct {
	done    chan struct{}
	err     error
	readers int // how many wait for it (under readIndex.mu)
}

// readIndexDepth is one verification in flight. Two (a reader arriving
// just after one was proposed starts the next at once, waiting about one
// round instead of up to two) measured no better: getFileInfo with 8
// threads at 0.236x the leader mode's rate against 0.226x with one (load
// average 20 on 2 cores); the round itself (a barrier entry made durable
// on a majority) is the cost.
const readIndexDepth = 1

func newReadIndex(verify func(context.Context) error, stop <-chan struct{}) *readIndex {
	return &readIndex{verify: verify, stop: stop, depth: readIndexDepth}
}

// wait returns once a verification that began after the call has ended,
// with its outcome, or when ctx ends.
func (r *readIndex) wait(ctx context.Context) error {
	r.mu.Lock()
	var v *verification
	if r.inFlight < r.depth {
		// A slot is free: a verification starts now, after this reader
		// arrived.
		v = &verification{done: make(chan struct{})}
		r.inFlight++
		go r.run(v)
	} else {
		// Else the next one, which starts when one in flight ends (run),
		// so after this reader arrived too.
		if r.next == nil {
			r.next = &verification{done: make(chan struct{})}
		}
		v = r.next
	}
	v.readers++
	r.mu.Unlock()
	select {
	case <-v.done:
		return v.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// renew starts a verification for no reader, unless one is in flight
// (its success renews the lease too): the lease's early renewal.
func (r *readIndex) renew() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inFlight > 0 {
		return
	}
	r.inFlight++
	go r.run(&verification{done: make(chan struct{})})
}

// run verifies for v, then for the batches queued meanwhile.
func (r *readIndex) run(v *verification) {
	for v != nil {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-r.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		v.err = r.verify(ctx)
		cancel()
		close(v.done)
		r.mu.Lock()
		v, r.next = r.next, nil
		if v == nil {
			r.inFlight--
		}
		r.mu.Unlock()
	}
}

// linearizable reports whether reads on this member pass the read index.
func (h *haNode) linearizable() bool { return h.reads != nil }

// readGate waits for the read index before a namespace read on the
// active. A failed verification is a standby refusal naming the leader the
// member knows of: the client retries there.
func (h *haNode) readGate(ctx context.Context) error { return h.gate(ctx, standby.Read) }

// gate is readGate refusing in category (a mutation's refusal is a
// WRITE's).
func (h *haNode) gate(ctx context.Context, category string) error {
	if h.leaseRead() {
		return nil
	}
	if err := h.reads.wait(ctx); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return h.refusal(err, category)
	}
	return nil
}

// leaseRead reports whether the read may run now under the active's read
// lease (ha_read_consistency: lease), renewing it early.
func (h *haNode) leaseRead() bool {
	if !h.lease {
		return false
	}
	if hook := h.beforeLeaseCheck.Load(); hook != nil {
		(*hook)() // tests: a pause between arrival and check
	}
	left, ok := h.log.Lease()
	if !ok {
		h.leaseMisses.Add(1)
		return false
	}
	if left < h.log.LeaseDuration()/2 {
		h.reads.renew()
	}
	h.leaseReads.Add(1)
	return true
}

// refusal maps a failed verification or commit wait.
// Whatever stopped it, this member cannot vouch for its namespace: it
// answers as a standby, naming the leader it learnt of if any.
func (h *haNode) refusal(err error, category string) error {
	var nl replog.ErrNotLeader
	if errors.As(err, &nl) {
		return standby.Error(category, h.peer(nl.LeaderID).RPC)
	}
	return standby.Error(category, h.activeRPC())
}

// readCommitted waits, after a read ran, until every edit it could have
// seen is committed: the active applies an edit to memory before the
// group has it (its group commit), and a reply must not reveal one that
// a lost leadership would undo.
func (nn *NameNode) readCommitted() error { return nn.committed(standby.Read) }

func (nn *NameNode) committed(category string) error {
	if err := nn.journal.Sync(nn.journal.LastTxID()); err != nil {
		return nn.ha.refusal(err, category)
	}
	return nil
}

// gatedRead runs a namespace read (linearRead) on an HA member in
// linearizable mode: the read index first, the commit wait after.
func (nn *NameNode) gatedRead(ctx context.Context, run func() (any, error)) (any, error) {
	if err := nn.ha.readGate(ctx); err != nil {
		return nil, err
	}
	resp, err := run()
	if err != nil {
		return nil, err
	}
	if err := nn.readCommitted(); err != nil {
		return nil, err
	}
	return resp, nil
}

// webhdfsReadGate passes WebHDFS's GETs (its reads: GETFILESTATUS,
// LISTSTATUS, OPEN, GETCONTENTSUMMARY, ...) through the read index, as
// the RPC port's reads. WebHDFS writes its answer as the handler runs,
// so the commit wait after the read (readCommitted) happens before it
// instead: the reply may show an edit applied while it ran and not yet
// committed.
func (h *haNode) webhdfsReadGate(r *http.Request) error {
	if !h.linearizable() || r.Method != http.MethodGet {
		return nil
	}
	if err := h.readGate(r.Context()); err != nil {
		return err
	}
	return h.nn.readCommitted()
}

// vouch is the read index for a mutation refused on the namespace's
// state (the file does not exist, already exists, a permission): the
// refusal was read from memory, so a deposed active must not give it.
// A mutation that changed something needs none: its commit proves it.
func (nn *NameNode) vouch() error {
	if nn.ha == nil || !nn.ha.linearizable() {
		return nil
	}
	if err := nn.ha.gate(context.Background(), standby.Write); err != nil {
		return err
	}
	return nn.committed(standby.Write)
}
