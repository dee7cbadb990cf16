package namenode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/status"

	"smarth/internal/daemonconf"
	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
	"smarth/internal/namenode/replog"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
	"smarth/internal/webhdfs"
)

// High availability (issue 28). With ha_id set, the namenode is a member
// of a group whose edit log is replog (raft): the leader is the active
// namenode, the only one that mutates; the others apply every committed
// edit and are hot standbys. Without it nothing here runs: the edit log
// is the file journal, as before.
//
// What a standby answers: the datanode protocol (registration,
// heartbeats, full and incremental block reports, bad-block reports), so
// that its block map is current when it takes over, and GetHAStatus
// (HDFS's getServiceStatus), so that clients and tools find the active.
// Every other client call, reads included (HDFS without observer reads),
// and CommitBlockSynchronization (a write) get standby.Error naming the
// active's RPC address. Its heartbeat replies say STANDBY and carry no
// commands; what its monitors would queue is dropped.
//
// What a new active rebuilds when its log becomes writable (takeOver):
// leases (a fresh one for every open file's writer, as after a restart:
// leases are neither logged nor replicated), the re-replication and
// recovery bookkeeping (empty), and it asks every datanode for a full
// block report, which brings replicas its follower stint missed (an
// incremental report that arrived before the edit that created the block)
// and re-queues deletion of replicas whose blocks are gone. Only then
// does it take calls and start the lease, replication, cache and trash
// monitors.

// editLog is what the namespace's mutations need of an edit log: Append
// under nn.mu (it defines the order), Sync outside it before the
// acknowledgement. The file journal and the replicated log (haLog) both
// are one.
type editLog interface {
	Append(payload []byte) uint64
	Sync(txid uint64) error
	LastTxID() uint64
	Err() error
	NoSpace() error
}

var _ editLog = (*journal.Journal)(nil)

// haLog is replog behind the editLog interface: txids map to replog's
// handles until they are known committed.
type haLog struct {
	log   *replog.Log
	fatal func(error)

	mu        sync.Mutex
	base      uint64          // txid of pend[0]
	pend      []replog.Handle // appended here as leader, not yet seen committed
	committed uint64          // every txid up to it is committed
	last      uint64          // last txid appended or applied here
	err       error           // an edit applied to memory that the log refused: fatal
	// advanced, when a caller waits for committed to grow
	// (awaitCommitted), is closed and cleared when it grows.
	advanced chan struct{}

	// state mirrors committed for readers without the lock: the state id
	// every reply to a client that asks carries (ipc.StateKey).
	state atomic.Uint64
}

// setCommittedLocked raises committed to txid and wakes its waiters.
func (a *haLog) setCommittedLocked(txid uint64) {
	a.committed = txid
	a.state.Store(txid)
	if a.advanced != nil {
		close(a.advanced)
		a.advanced = nil
	}
}

// awaitCommitted waits until every txid up to want is committed and
// applied here, for at most wait.
func (a *haLog) awaitCommitted(ctx context.Context, want uint64, wait time.Duration) error {
	if a.state.Load() >= want {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		a.mu.Lock()
		if a.committed >= want {
			a.mu.Unlock()
			return nil
		}
		if a.advanced == nil {
			a.advanced = make(chan struct{})
		}
		ch := a.advanced
		a.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return fmt.Errorf("txid %d not applied within %v (at %d)", want, wait, a.state.Load())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (a *haLog) Append(payload []byte) uint64 {
	h, err := a.log.Append(payload)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		// The caller applied the operation already (it checked Writable
		// under the same lock, so leadership was lost in between): memory
		// holds an edit the group does not. Nothing more is acknowledged
		// and the namenode stops, to reload from the group's log.
		if a.err == nil {
			a.err = fmt.Errorf("an edit applied in memory could not be appended to the group's log: %w", err)
			a.fatal(a.err)
		}
		return a.last + 1
	}
	if len(a.pend) == 0 {
		a.base = h.TxID()
	}
	a.pend = append(a.pend, h)
	a.last = h.TxID()
	return a.last
}

func (a *haLog) Sync(txid uint64) error {
	a.mu.Lock()
	if txid <= a.committed {
		a.mu.Unlock()
		return nil
	}
	if a.err != nil {
		a.mu.Unlock()
		return a.err
	}
	if txid < a.base || txid-a.base >= uint64(len(a.pend)) {
		a.mu.Unlock()
		return fmt.Errorf("txid %d was not appended by this namenode (appended %d-%d, committed %d)", txid, a.base, a.base+uint64(len(a.pend))-1, a.committed)
	}
	h := a.pend[txid-a.base]
	a.mu.Unlock()
	// No deadline: replog fails the wait when leadership ends (the
	// leader steps down after the lease timeout without a majority).
	if err := a.log.Sync(context.Background(), h); err != nil {
		return err
	}
	a.mu.Lock()
	if txid > a.committed {
		a.setCommittedLocked(txid)
		// raft commits in order: everything before txid is committed too.
		if n := txid - a.base + 1; n <= uint64(len(a.pend)) {
			a.pend = a.pend[n:]
			a.base = txid + 1
		}
	}
	a.mu.Unlock()
	return nil
}

// applied records a committed edit applied here (a follower's, or a
// snapshot restored), and drops handles of an ended stint.
func (a *haLog) applied(txid uint64) {
	a.mu.Lock()
	a.last = txid
	a.setCommittedLocked(txid)
	a.pend, a.base = nil, txid+1
	a.mu.Unlock()
}

func (a *haLog) LastTxID() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func (a *haLog) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// NoSpace: the group's log has no space state of its own; meta_dir's free
// space is still checked (editspace.go).
func (a *haLog) NoSpace() error { return nil }

// haNode is the namenode's membership in its group.
type haNode struct {
	nn     *NameNode
	log    *replog.Log
	edits  *haLog
	active atomic.Bool // the log is writable and takeOver has run
	// terminating: a stint ended with edits not known committed (stepDown
	// with Diverged); the process is about to exit, so it no longer
	// answers as a standby (GetHAStatus), which it would otherwise do for
	// the moment between stepping down and exiting.
	terminating atomic.Bool
	fatal       chan error // the daemon must exit (Fatal)

	// peers are the members' addresses: ha_peers, then what add and
	// remove through this namenode changed (haops.go). The group's
	// membership itself is raft's configuration.
	peersMu sync.RWMutex
	peers   map[string]daemonconf.NameNodeHAPeer
	// transferTo is the member a transfer-leader in progress hands the
	// active role to (nil: none): mutations are refused naming it, and
	// watch does not take over again while it runs.
	transferTo atomic.Pointer[string]
	// reads is the read index of namespace reads (hareads.go); nil with
	// ha_read_consistency: leader.
	reads *readIndex
	// lease: ha_read_consistency: lease; reads pass under the active's
	// read lease (hareads.go). leaseReads counts those that did,
	// leaseMisses those that found none and waited for a read index.
	lease                   bool
	leaseReads, leaseMisses atomic.Int64
	// observerServed counts the observer reads this member served as a
	// standby, observerRefused those it sent to the active (observer.go).
	observerServed, observerRefused atomic.Int64
	// beforeLeaseCheck, set by tests, runs between a read's arrival and
	// its lease check.
	beforeLeaseCheck atomic.Pointer[func()]
}

// Fatal delivers an error after which the namenode must stop and be
// restarted (it reloads from the group's snapshot and log): its memory
// may hold edits the group does not have. nil channel without HA.
func (nn *NameNode) Fatal() <-chan error {
	if nn.ha == nil {
		return nil
	}
	return nn.ha.fatal
}

// isActive: without HA always; with it, after takeOver and until the
// stint ends.
func (nn *NameNode) isActive() bool { return nn.ha == nil || nn.ha.active.Load() }

// activeOnly runs fn only on the active namenode (the monitors that
// mutate or command datanodes).
func (nn *NameNode) activeOnly(fn func()) func() {
	return func() {
		if nn.isActive() {
			fn()
		}
	}
}

// loadHA opens the group's log under meta_dir/ha. The member that
// bootstraps loads meta_dir's image and edits first (or formats a new
// namespace): if the group does not exist yet, that state becomes its
// first snapshot; if it does, raft restores its newest snapshot over it.
// Every other member starts empty and receives the state from the group.
func (nn *NameNode) loadHA(fs journal.FS) error {
	hc := nn.cfg.HA
	if hc.Bootstrap {
		if err := nn.load(fs); err != nil {
			return err
		}
		if err := nn.jnl.Close(); err != nil {
			return err
		}
		nn.jnl = nil
	} else {
		nn.state = nn.emptyState(nn.clock())
		nn.initSafeMode(nn.clock())
	}
	ha := &haNode{nn: nn, peers: maps.Clone(hc.Peers), fatal: make(chan error, 1)}
	ha.edits = &haLog{fatal: ha.fail}
	if nn.journal != nil {
		ha.edits.applied(nn.journal.LastTxID())
	}
	nn.journal, nn.ha = ha.edits, ha
	raftPeers := map[string]string{}
	for id, p := range hc.Peers {
		raftPeers[id] = p.Raft
	}
	l, err := replog.Open(replog.Config{
		ID: hc.ID, Bind: hc.Peers[hc.ID].Raft, Peers: raftPeers,
		Dir: filepath.Join(nn.cfg.MetaDir, "ha"), TLS: nn.cfg.Wire, FSM: (*haFSM)(nn),
		Bootstrap: hc.Bootstrap, SeedFromFSM: hc.Bootstrap,
		HeartbeatTimeout: hc.HeartbeatTimeout, ElectionTimeout: hc.ElectionTimeout,
		LeaderLeaseTimeout: hc.LeaderLeaseTimeout, SnapshotThreshold: hc.SnapshotThreshold,
		ReadLease: nn.readLease(), Logger: nn.logger, WrapConn: nn.cfg.raftConn,
		GatherWait: gatherWait(hc.GroupCommit), SerialLeaderStore: hc.LeaderStore == leaderStoreSerial,
		OverlapBelow: overlapBelow(hc.BatchOverlap), PeerNames: hc.PeerNames,
	})
	if err != nil {
		return fmt.Errorf("namenode: ha: %w", err)
	}
	ha.log, ha.edits.log = l, l
	if hc.ReadConsistency != readsLeader {
		ha.reads = newReadIndex(l.VerifyLeader, nn.stop)
	}
	ha.lease = hc.ReadConsistency == readsLease
	nn.logger.Info("namenode is a member of an HA group", "ha_id", hc.ID, "raft", hc.Peers[hc.ID].Raft, "members", len(hc.Peers),
		"last_txid", nn.journal.LastTxID())
	return nil
}

// Values of ha_group_commit.
const (
	groupCommitGather = "gather"
	groupCommitPlain  = "plain"
)

// Values of ha_leader_store.
const (
	leaderStoreParallel = "parallel"
	leaderStoreSerial   = "serial"
)

// Values of ha_batch_overlap.
const (
	batchOverlapSmall  = "small"
	batchOverlapAlways = "always"
)

// overlapBelow is replog's OverlapBelow for an ha_batch_overlap value
// (validated): its default, or negative for batches that always overlap.
func overlapBelow(mode string) int {
	if mode == batchOverlapAlways {
		return -1
	}
	return replog.DefaultOverlapBelow
}

// gatherWait is replog's GatherWait for an ha_group_commit value
// (validated): the bound of a gather, or zero for plain group commit.
func gatherWait(mode string) time.Duration {
	if mode == groupCommitPlain {
		return 0
	}
	return replog.DefaultGatherWait
}

// readLease is the read lease of ha_read_consistency: lease, zero in the
// other modes: this member's heartbeat timeout less the drift margin.
// Every member must have the same ha_heartbeat_timeout (see
// replog/lease.go): a follower with a shorter one could help elect a
// successor before the lease ends.
func (nn *NameNode) readLease() time.Duration {
	hc := nn.cfg.HA
	if hc.ReadConsistency != readsLease {
		return 0
	}
	if nn.cfg.readLease > 0 {
		return nn.cfg.readLease
	}
	hb := hc.HeartbeatTimeout
	if hb == 0 {
		hb = replog.DefaultHeartbeatTimeout
	}
	return time.Duration(float64(hb) * (1 - replog.LeaseDriftMargin))
}

// emptyState is a new namespace (root only), as a format makes: what a
// load starts from.
func (nn *NameNode) emptyState(now time.Time) *fsstate.State {
	return fsstate.New(namespace.New(namespace.Config{
		Superuser: nn.cfg.Superuser, Supergroup: nn.cfg.Supergroup,
		Permissions: nn.cfg.PermissionsEnabled, Now: now.UnixMilli(),
		MaxXAttrsPerInode: nn.cfg.MaxXAttrsPerInode, MaxXAttrSize: nn.cfg.MaxXAttrSize,
	}), blockmap.New(), nn.logger)
}

func (h *haNode) fail(err error) {
	select {
	case h.fatal <- err:
	default:
	}
}

// watch follows the log's leadership: takeOver when it becomes writable
// (LeadershipReady), stepDown when the stint ends (LeadershipLost). It
// used to poll the start every 10 ms, which added up to a poll to every
// failover and woke each member 100 times a second when idle; the slow
// poll left is only a safety net for a ready signal that came while a
// transfer-leader was under way (transferTo), whose end decides itself.
func (h *haNode) watch() {
	nn := h.nn
	defer nn.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-nn.stop:
			return
		case lost := <-h.log.LeadershipLost():
			h.stepDown(lost)
		case <-h.log.Failed():
			h.stopped(h.log.Err())
			return
		case <-h.log.LeadershipReady():
		case <-tick.C:
		}
		if !h.active.Load() && h.transferTo.Load() == nil && h.log.IsLeader() {
			h.takeOver()
		}
	}
}

// takeOver makes this namenode the active one (see the top of the file).
func (h *haNode) takeOver() {
	nn := h.nn
	now := nn.clock()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	if h.log.Writable() != nil {
		return
	}
	h.forgetCommandsLocked()
	nn.takeEarlyLocked()
	nn.rebuildLeasesLocked(now)
	for _, dn := range nn.nodes {
		dn.reported = false // its next heartbeat reply asks for a full report
	}
	nn.dirty = true
	h.active.Store(true)
	nn.logger.Info("namenode is active", "ha_id", nn.cfg.HA.ID, "term", h.log.Term(), "txid", nn.journal.LastTxID(),
		"open_files", nn.leases.files(), "safe_mode", nn.safe.on)
}

// stepDown ends a stint: no more mutations or commands. A stint whose
// edits were not all seen committed (Diverged) left memory ahead of the
// group: as HDFS's active does when it loses its journal quorum, the
// namenode terminates, and its restart reloads from the group.
func (h *haNode) stepDown(lost replog.Lost) {
	if lost.Diverged {
		h.terminate(fmt.Errorf("namenode: lost the leadership of its HA group at term %d with edits not known committed (applied txid %d): its namespace may hold operations the group does not; exiting so that a restart reloads it from the group's snapshot and log", lost.Term, lost.AppliedTxID),
			"FATAL: HA leadership lost with uncommitted edits; terminating", "term", lost.Term, "applied_txid", lost.AppliedTxID)
		return
	}
	h.standDown()
	h.nn.logger.Warn("namenode is standby: leadership of its HA group lost", "term", lost.Term, "applied_txid", lost.AppliedTxID)
}

// stopped ends a member whose log has stopped (replog's Failed): its
// namespace can no longer follow the group's log, and as a voter it
// could still win an election it can never serve, leaving the group
// without an active (a chaos run held the group so for minutes). As
// after a divergence, it terminates, and its restart reloads from the
// group's snapshot and log.
func (h *haNode) stopped(cause error) {
	h.terminate(fmt.Errorf("namenode: its state cannot follow its HA group's log (%v); exiting so that a restart reloads it from the group's snapshot and log", cause),
		"FATAL: this member's copy of its HA group's log stopped; terminating", "err", cause)
}

// terminate ends this member for good: it answers as neither active nor
// standby again, logs msg and reports err as fatal (the process exits or
// restarts itself in place).
func (h *haNode) terminate(err error, msg string, attrs ...any) {
	h.terminating.Store(true) // before active goes false: never a standby
	h.standDown()
	h.nn.logger.Error(msg, attrs...)
	h.fail(err)
}

// standDown stops what an active does: mutations, datanode commands,
// leases, the retry cache's index.
func (h *haNode) standDown() {
	nn := h.nn
	nn.mu.Lock()
	h.active.Store(false)
	h.forgetCommandsLocked()
	nn.leases = newLeaseTable()
	nn.mu.Unlock()
	if nn.retry != nil {
		nn.retry.Standby() // a standby only adds: no index to keep
	}
}

// forgetCommandsLocked drops what only an active does: queued datanode
// commands, transfers and recoveries in flight.
func (h *haNode) forgetCommandsLocked() {
	nn := h.nn
	for _, dn := range nn.nodes {
		dn.invalidate, dn.transfers, dn.recoveries = nil, nil, nil
	}
	nn.deleting = deletions{}
	for id := range nn.pending {
		nn.cancelPendingLocked(id)
	}
	clear(nn.recovering)
	nn.postponed = nil
}

// activeRPC is the RPC address of the leader this member knows of (""),
// or of the member a transfer in progress hands the role to.
func (h *haNode) activeRPC() string {
	if to := h.transferTo.Load(); to != nil {
		return h.peer(*to).RPC
	}
	id, _ := h.log.Leader()
	return h.peer(id).RPC
}

// writableLocked refuses a mutation on a member that is not the active.
func (h *haNode) writableLocked() error {
	if !h.active.Load() || h.log.Writable() != nil {
		return standby.Error(standby.Write, h.activeRPC())
	}
	return nil
}

// syncError maps a lost leadership while waiting for a commit to a
// standby's refusal naming the new leader: the outcome is unknown, and
// the client retries there (an idempotent retry, as HDFS's).
func (h *haNode) syncError(err error) error {
	var nl replog.ErrNotLeader
	if errors.As(err, &nl) {
		return standby.Error(standby.Write, h.peer(nl.LeaderID).RPC)
	}
	return nil
}

// standbyRead are the client calls HDFS puts in OperationCategory READ;
// every other refused call is a WRITE.
var standbyRead = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{"GetBlockLocations", "GetFileInfo", "GetListing", "GetXAttrs", "ListXAttrs",
		"GetContentSummary", "GetAclStatus", "GetSnapshottableDirListing", "GetSnapshotDiffReport",
		"GetStoragePolicy", "GetStoragePolicies", "GetDatanodeReport", "Fsck", "GetServerDefaults",
		"GetSpeeds", "ListCachePools", "ListCacheDirectives", "GetCacheStats", "JobCacheStatus", "SetSafeMode", "Msync"} {
		m[clientProtocol+n] = true
	}
	return m
}()

// standbyServes are the calls every member answers (see the top).
var standbyServes = map[string]bool{
	clientProtocol + "GetHAStatus":               true,
	datanodeProtocol + "RegisterDatanode":        true,
	datanodeProtocol + "SendHeartbeat":           true,
	datanodeProtocol + "BlockReport":             true,
	datanodeProtocol + "BlockReceivedAndDeleted": true,
	datanodeProtocol + "ReportBadBlocks":         true,
}

// standbyRefusal is the interceptor's answer to a call a standby does
// not serve (nil: serve it). A standby serves an observer read
// (observerRead) of a client that sent its state id once it has applied
// that far (observer.go).
func (nn *NameNode) standbyRefusal(ctx context.Context, method string) error {
	if nn.ha == nil || standbyServes[method] || nn.ha.active.Load() {
		return nil
	}
	if nn.ha.admitObserverRead(ctx, method) {
		return nil
	}
	cat := standby.Write
	if standbyRead[method] {
		cat = standby.Read
	}
	return standby.Error(cat, nn.ha.activeRPC())
}

// webhdfsGate refuses WebHDFS on a standby as the RPC port does, with
// Hadoop's StandbyException (HTTP 403, which WebHDFS clients answer by
// trying the next namenode): WebHDFS calls the handlers directly, not
// through the interceptor.
func (h *haNode) webhdfsGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refusal := h.webhdfsReadGate(r)
		if refusal == nil && h.active.Load() {
			next.ServeHTTP(w, r)
			return
		}
		if refusal == nil {
			cat := standby.Write
			if r.Method == http.MethodGet {
				cat = standby.Read
			}
			refusal = standby.Error(cat, h.activeRPC())
		}
		webhdfs.WriteError(w, webhdfs.Exception("StandbyException", status.Convert(refusal).Message()))
	})
}

// haHeartbeatLocked is what a heartbeat reply says of the group: the
// member's state and term (the datanode obeys only the active of the
// highest term it has seen: HDFS's NNHAStatusHeartbeat). A standby's
// reply carries no commands.
func (nn *NameNode) haHeartbeatLocked(resp *dfspb.HeartbeatResponse) {
	if nn.ha == nil {
		return
	}
	st := &dfspb.NNHAStatus{State: dfspb.HAState_STANDBY, Term: nn.ha.log.Term(), AppliedTxid: nn.journal.LastTxID()}
	if nn.ha.active.Load() {
		st.State = dfspb.HAState_ACTIVE
	} else {
		resp.Commands = nil
	}
	resp.HaStatus = st
}

// haStatusOf fills GetHAStatus for a member of a group.
func (h *haNode) status(resp *dfspb.GetHAStatusResponse) {
	resp.Id = h.nn.cfg.HA.ID
	resp.State = dfspb.HAState_STANDBY
	if h.active.Load() {
		resp.State = dfspb.HAState_ACTIVE
	}
	resp.Term = h.log.Term()
	id, _ := h.log.Leader()
	resp.ActiveId, resp.ActiveRpcAddress = id, h.peer(id).RPC
	resp.Peers = h.memberPeers()
}

// haFSM is the namenode seen by replog: followers apply the leader's
// edits through it, snapshots are the namespace image.
type haFSM NameNode

// Apply applies a committed edit this member did not append itself, with
// the runtime bookkeeping the leader's mutate does (afterApplyLocked)
// except what only an active does: deleting the dropped blocks' replicas
// is the active's command, and a new active's full block reports find any
// left behind.
func (f *haFSM) Apply(txid uint64, payload []byte) error {
	nn := (*NameNode)(f)
	nn.mu.Lock()
	defer nn.mu.Unlock()
	res, err := nn.state.ReplayEdit(txid, payload)
	if err != nil {
		return fmt.Errorf("edit txid %d: %w", txid, err)
	}
	nn.ha.edits.applied(txid)
	nn.rememberReplayedLocked(res)
	nn.applyEarlyLocked(res.Blocks)
	for _, r := range res.Removed {
		nn.leases.remove(r.ID)
	}
	for _, b := range res.Dropped {
		nn.cache.ForgetLocked(b.ID)
		nn.cancelPendingLocked(b.ID)
		delete(nn.recovering, b.ID)
	}
	if len(res.Dropped) > 0 {
		nn.dirty = true
	}
	return nil
}

// maxImageRecord bounds one record of a snapshot read from a peer.
const maxImageRecord = 256 << 20

// Snapshot captures the image under the read lock: each record framed by
// its length.
func (f *haFSM) Snapshot() (uint64, io.WriterTo, error) {
	nn := (*NameNode)(f)
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	var buf bytes.Buffer
	var hdr [binary.MaxVarintLen64]byte
	nn.state.EachImageRecord(func(p []byte) {
		buf.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(p)))])
		buf.Write(p)
	})
	return nn.journal.LastTxID(), &buf, nil
}

// Restore replaces the namespace with a snapshot (a lagging or new
// member's catch-up, or the start of a member). Replica locations are not
// in an image: every datanode is asked for a full report, and safe mode
// is computed afresh.
func (f *haFSM) Restore(txid uint64, r io.Reader) error {
	nn := (*NameNode)(f)
	br := bufio.NewReader(r)
	var recs [][]byte
	for {
		n, err := binary.ReadUvarint(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("snapshot at txid %d: record %d: %w", txid, len(recs), err)
		}
		if n > maxImageRecord {
			return fmt.Errorf("snapshot at txid %d: record %d claims %d bytes (at most %d)", txid, len(recs), n, maxImageRecord)
		}
		rec := make([]byte, n)
		if _, err := io.ReadFull(br, rec); err != nil {
			return fmt.Errorf("snapshot at txid %d: record %d: %w", txid, len(recs), err)
		}
		recs = append(recs, rec)
	}
	st := nn.emptyState(nn.clock())
	if err := st.LoadImage(txid, recs); err != nil {
		return fmt.Errorf("snapshot at txid %d: %w", txid, err)
	}
	now := nn.clock()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.state = st
	nn.leases = newLeaseTable()
	for _, dn := range nn.nodes {
		dn.reported = false
	}
	clear(nn.pending)
	clear(nn.recovering)
	nn.initSafeMode(now)
	nn.ha.edits.applied(txid)
	nn.logger.Info("namespace restored from the HA group's snapshot", "txid", txid, "files", st.Tree().Files(), "dirs", st.Tree().Dirs())
	return nil
}

// validateHA checks the ha_* keys.
func (c Config) validateHA() []error {
	h := c.HA
	if h.ID == "" {
		if len(h.Peers) > 0 || h.Bootstrap {
			return []error{errors.New("ha_peers, ha_bootstrap: need ha_id (this namenode's id in the group)")}
		}
		return nil
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, ok := h.Peers[h.ID]; !ok {
		bad("ha_peers: does not name this namenode's ha_id %q", h.ID)
	}
	for id, p := range h.Peers {
		for key, addr := range map[string]string{"rpc": p.RPC, "raft": p.Raft} {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				bad("ha_peers: %s: %s: %q is not host:port", id, key, addr)
			}
		}
	}
	if !c.Wire.TLS {
		bad("ha_id: an HA group needs tls: true (its members speak mutual TLS with the cluster CA)")
	}
	if rc := h.ReadConsistency; rc != "" && rc != readsLinearizable && rc != readsLeader && rc != readsLease {
		bad("ha_read_consistency: %q is not %s, %s or %s", rc, readsLinearizable, readsLease, readsLeader)
	}
	if gc := h.GroupCommit; gc != "" && gc != groupCommitGather && gc != groupCommitPlain {
		bad("ha_group_commit: %q is not %s or %s", gc, groupCommitGather, groupCommitPlain)
	}
	if ls := h.LeaderStore; ls != "" && ls != leaderStoreParallel && ls != leaderStoreSerial {
		bad("ha_leader_store: %q is not %s or %s", ls, leaderStoreParallel, leaderStoreSerial)
	}
	if bo := h.BatchOverlap; bo != "" && bo != batchOverlapSmall && bo != batchOverlapAlways {
		bad("ha_batch_overlap: %q is not %s or %s", bo, batchOverlapSmall, batchOverlapAlways)
	}
	for key, d := range map[string]time.Duration{"ha_heartbeat_timeout": h.HeartbeatTimeout,
		"ha_election_timeout": h.ElectionTimeout, "ha_leader_lease_timeout": h.LeaderLeaseTimeout} {
		if d < 0 {
			bad("%s: %v cannot be negative (0: the default)", key, d)
		}
	}
	return errs
}
