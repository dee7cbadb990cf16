package replog

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"smarth/internal/diskperm"
	"smarth/internal/pki"
)

// FSM is the caller's state machine (the namenode's namespace).
type FSM interface {
	// Apply applies a committed record that this node did not append
	// itself as leader: on a follower every record, on a leader the
	// records committed before it became leader. txids are contiguous
	// from 1 across the whole group, in log order. An error stops this
	// node's log (Err returns it); the group goes on without it.
	Apply(txid uint64, payload []byte) error
	// Snapshot captures the state (the namenode's image) and returns the
	// txid it is at, with a writer for it. It may run while the caller
	// appends; the writer may run while Apply does, so it must write the
	// state captured here, not the live one.
	Snapshot() (txid uint64, w io.WriterTo, err error)
	// Restore replaces the state with a snapshot at txid.
	Restore(txid uint64, r io.Reader) error
}

// Config opens a node of a group.
type Config struct {
	// ID names this node in the group; Bind is its raft address
	// (host:port), also the address peers dial, so the host must be in
	// its certificate.
	ID   string
	Bind string
	// Peers is every voter of the group, this node included, id→addr:
	// the group it creates (Bootstrap), and the ids whose certificates
	// its raft port accepts before it has the group's configuration (a
	// node joining an existing group lists its members).
	Peers map[string]string
	// Dir holds the raft log, its term and vote, and the snapshots
	// (created 0700, files 0600: the namespace is private data).
	Dir string
	// TLS must be on: the transport is mutual TLS with the cluster CA.
	TLS pki.Config
	// PeerNames are certificate names (common name or DNS name) accepted
	// on the raft port besides this node's own certificate name and the
	// members' ids (Peers, and the group's current configuration): for
	// members whose certificates are named neither. Any other
	// certificate of the cluster CA is refused (see tlsStream).
	PeerNames []string
	FSM       FSM
	// Bootstrap makes this node create the group from Peers when Dir
	// holds no state; exactly one node of a new group sets it. With
	// SeedFromFSM, the group starts from the FSM's current state (an
	// existing namenode's image): it is written as the group's first
	// snapshot, and the other nodes receive it by snapshot install.
	Bootstrap   bool
	SeedFromFSM bool

	// Timeouts; zero takes the defaults below. A follower starts an
	// election after HeartbeatTimeout..2*HeartbeatTimeout without the
	// leader; a leader that has not heard from a majority for
	// LeaderLeaseTimeout steps down (check quorum).
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// ReadLease, when positive, is how long a successful VerifyLeader
	// lets this leader answer reads without another (lease.go): at most
	// HeartbeatTimeout × (1 − LeaseDriftMargin), with every member's
	// HeartbeatTimeout the same. Zero: no lease.
	ReadLease time.Duration
	// SnapshotThreshold is how many entries since the last snapshot
	// make the next one; TrailingLogs how many entries stay behind it
	// for followers that lag a little.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// MaxInflight is how many batches may wait for commit at once;
	// while they wait, appends gather into the next (group commit).
	MaxInflight int
	// GatherWait, when positive, is the longest a free slot waits for
	// the open batch to take back the writers the last commit released
	// (at most half the recent commit time too; see gather). Zero: the
	// open batch is proposed as soon as a slot is free, whoever is in
	// it (plain group commit, as HDFS's logSync).
	GatherWait time.Duration
	// OverlapBelow: a batch is proposed while another waits for commit
	// only if each one waiting holds fewer than OverlapBelow records. A
	// batch that big already spreads a raft round's cost (three fsyncs,
	// a message to each follower and its answer) thin, and on a busy
	// group the CPU that the round costs is what bounds the rate: the
	// next batch does better to wait and gather the records that arrive
	// meanwhile. Small batches overlap (up to MaxInflight), because
	// while a group is lightly loaded its writers' latency is what
	// bounds them. Zero takes DefaultOverlapBelow; negative: batches
	// always overlap.
	OverlapBelow int
	// SerialLeaderStore makes the leader store a batch in its own log
	// before it sends it to the followers, as upstream hashicorp/raft
	// does; by default it sends the batch while it stores it (raft's
	// Config.LeaderStoresWhileReplicating, patched into
	// third_party/raft), and a commit waits for the slower of the
	// leader's write and a follower's round trip with its write, not
	// their sum.
	SerialLeaderStore bool
	// LogStore is "wal" (default) or "bolt"; see openLogStore.
	LogStore string
	// SegmentSize is the size of a WAL segment file (default 64 MiB).
	// The log behind a snapshot is removed a whole segment at a time,
	// so a follower needs the snapshot only once it lags a segment.
	SegmentSize int
	// NoSync skips fsync of the log (bolt only; tests of logic only).
	NoSync bool
	Logger *slog.Logger
	// WrapConn, when set, wraps every raft connection of this node, in
	// and out, once its handshake is done: tests use it to cut a running
	// member off its group (a partition) without stopping it.
	WrapConn func(net.Conn) net.Conn
	// beforeTimeoutNow, when set (tests), runs before each TimeoutNow
	// this node sends as a leader handing over; an error drops the
	// message, a delay holds it as a slow network would.
	beforeTimeoutNow func(target string) error
}

// Defaults, chosen for failover in about a second on a LAN: a follower
// notices a dead leader in 0.4-0.8 s and the election takes one round
// trip; the lease is no longer than the heartbeat timeout so a cut-off
// leader steps down before the others can have elected a successor.
//
// The heartbeat timeout was 500 ms until two 20-minute chaos runs side
// by side on 2 shared cores at load 17-33 (docs/reliability.md, session
// 17) showed 400 ms free of elections without a fault, as 500 ms was,
// with the p99 from a kill or a hung host to the next acknowledged write
// at 1.30 s and 1.88 s against 2.17 s and 2.33 s.
const (
	DefaultHeartbeatTimeout   = 400 * time.Millisecond
	DefaultElectionTimeout    = 500 * time.Millisecond
	DefaultLeaderLeaseTimeout = 400 * time.Millisecond
	DefaultSnapshotThreshold  = 100000
	DefaultSnapshotInterval   = 2 * time.Minute
	DefaultTrailingLogs       = 20000
	DefaultMaxInflight        = 2
	// DefaultGatherWait bounds gather: a client's round trip on a LAN
	// is well under it, and half a commit bounds it further.
	DefaultGatherWait = time.Millisecond
	// DefaultOverlapBelow sits between the entries of a lightly and a
	// heavily loaded group on this machine: 8 client threads make
	// entries of about 7 records, 64 threads of about 25 with entries
	// always overlapping and 35 with this rule (docs/benchmarks.md,
	// "Batches overlap only while they are small").
	DefaultOverlapBelow = 16
)

// commitTimeout is how long an idle leader waits before it sends each
// follower an AppendEntries with nothing but its commit index (raft's
// CommitTimeout; under load every new entry carries it at once). It is
// raft's default. 5 ms made an idle group of 3 namenodes spend 10-17% of
// a core on those messages (each one a TLS write, a decode, a hand-off
// to the follower's main loop and an answer), 4% with 50 ms; the price
// is that a standby learns the last commit of a burst of writes, and
// applies it, up to 100 ms after it instead of 10 ms. A new leader
// applies every entry it holds before it takes writes either way.
const commitTimeout = 50 * time.Millisecond

// logCacheEntries is how many of the newest raft entries stay in memory
// for the reads that follow their store (Consul keeps 512 of its smaller
// entries; one of ours is a group commit's batch of edits).
const logCacheEntries = 256

// ErrNotLeader is the answer of a node that is not the group's ready
// leader: the client should retry at LeaderID (HDFS's StandbyException).
// LeaderID may be empty during an election, or this node's own ID while
// it is becoming leader (applying the entries of earlier terms).
type ErrNotLeader struct {
	LeaderID, LeaderAddr string
}

func (e ErrNotLeader) Error() string {
	if e.LeaderID == "" {
		return "replog: not the leader; no leader is known (election in progress)"
	}
	return fmt.Sprintf("replog: not the leader; the leader is %s at %s", e.LeaderID, e.LeaderAddr)
}

// ErrDiverged: this node appended records as leader that may never be
// committed, so the caller's state holds operations the group may not
// have; it must Close and reopen with fresh state.
var ErrDiverged = errors.New("replog: state diverged from the log after a lost leadership; reopen from the log")

// Lost tells the caller that this node stopped being the leader.
type Lost struct {
	Term uint64
	// Diverged: some records appended in the lost stint were not seen
	// committed, so the caller's state may hold operations the group
	// does not; the caller must stop serving, Close, and reopen with an
	// empty FSM (which restores the newest snapshot and replays the
	// log). Apply is not called any more until then.
	Diverged bool
	// AppliedTxID is the last txid applied (or known applied) here.
	AppliedTxID uint64
}

// Log is one node of a replicated log.
type Log struct {
	cfg    Config
	log    *slog.Logger
	raft   *raft.Raft
	trans  *raft.NetworkTransport
	store  logStore
	snaps  raft.SnapshotStore
	notify chan bool
	lost   chan Lost
	ready  chan struct{} // a stint became writable (LeadershipReady)
	failed chan struct{} // closed when the log stops (err set; Failed)
	kick   chan struct{}
	grew   chan struct{}
	landed chan struct{} // a batch in flight got its outcome (overlap)
	slots  chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup

	mu sync.Mutex
	// token is the random id of the current leader stint, nonzero only
	// while this node is the ready leader; batches carry it so that this
	// node's FSM skips records its caller already applied.
	token    uint64
	skipTok  uint64 // token whose records Apply skips (outlives a clean loss)
	gen      uint64 // leadership changes seen, to drop stale readiness
	lastTxID uint64 // last txid appended (leader) or applied
	applied  uint64 // last txid applied or skipped in log order
	open     *pending
	inflight map[*pending]struct{} // proposed, outcome not known yet
	// For gather: writers is how many records were in the system (the
	// committed batch, the inflight ones, the open one) when the last
	// batch committed, or what a timed-out gather got; gathering says
	// the flush loop waits on grew for appends; commitEWMA is the recent
	// time from proposal to commit.
	writers    int
	gathering  bool
	commitEWMA time.Duration
	diverged   bool
	err        error
	// proposed counts batches and their records, for Stats.
	batches, records uint64

	followers followerTracker // the leader's view of each follower (followers.go)
	lease     lease           // the read lease (lease.go)
}

// pending is a batch being filled or waiting for commit.
type pending struct {
	first uint64
	recs  [][]byte
	sent  bool
	at    time.Time // when proposed
	ended bool      // done is closed
	done  chan struct{}
	err   error
}

// Handle names an appended record for Sync.
type Handle struct {
	b    *pending
	txid uint64
}

// TxID is the record's transaction id.
func (h Handle) TxID() uint64 { return h.txid }

// Open starts the node: its transport, stores and raft.
func Open(cfg Config) (*Log, error) {
	if cfg.ID == "" || cfg.Bind == "" || cfg.Dir == "" || cfg.FSM == nil {
		return nil, errors.New("replog: Config needs ID, Bind, Dir and FSM")
	}
	if cfg.Bootstrap {
		if _, ok := cfg.Peers[cfg.ID]; !ok {
			return nil, fmt.Errorf("replog: bootstrap: peers %v do not include this node %s", cfg.Peers, cfg.ID)
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&cfg.ElectionTimeout, DefaultElectionTimeout)
	def(&cfg.LeaderLeaseTimeout, DefaultLeaderLeaseTimeout)
	def(&cfg.SnapshotInterval, DefaultSnapshotInterval)
	if cfg.SnapshotThreshold == 0 {
		cfg.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if cfg.TrailingLogs == 0 {
		cfg.TrailingLogs = DefaultTrailingLogs
	}
	if cfg.MaxInflight <= 0 {
		cfg.MaxInflight = DefaultMaxInflight
	}
	if cfg.OverlapBelow == 0 {
		cfg.OverlapBelow = DefaultOverlapBelow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	names := &peerNames{static: map[string]bool{cfg.ID: true}, log: cfg.Logger.With("raft_id", cfg.ID)}
	for id := range cfg.Peers {
		names.static[id] = true
	}
	for _, n := range cfg.PeerNames {
		names.static[n] = true
	}
	serverTLS, clientTLS, err := mutualTLS(cfg.TLS, names)
	if err != nil {
		return nil, err
	}
	if err := diskperm.MkdirAll(cfg.Dir, diskperm.Dir); err != nil {
		return nil, fmt.Errorf("replog: data dir %s: %w", cfg.Dir, err)
	}
	l := &Log{
		cfg:      cfg,
		log:      cfg.Logger.With("raft_id", cfg.ID),
		notify:   make(chan bool, 16),
		lost:     make(chan Lost, 16),
		ready:    make(chan struct{}, 1),
		failed:   make(chan struct{}),
		kick:     make(chan struct{}, 1),
		grew:     make(chan struct{}, 1),
		landed:   make(chan struct{}, 1),
		inflight: map[*pending]struct{}{},
		slots:    make(chan struct{}, cfg.MaxInflight),
		done:     make(chan struct{}),
	}
	if err := l.openStores(); err != nil {
		return nil, err
	}
	l.holdVotes()
	stream, err := listenTLS(cfg.Bind, serverTLS, clientTLS, l.log)
	if err != nil {
		l.store.Close()
		return nil, err
	}
	stream.wrap = cfg.WrapConn
	l.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  stream,
		MaxPool: 3,
		Timeout: 5 * time.Second,
		Logger:  newHclog(l.log),
	})
	rc := l.raftConfig()
	if cfg.Bootstrap {
		if err := l.bootstrap(rc); err != nil {
			l.trans.Close()
			l.store.Close()
			return nil, err
		}
	}
	// The newest entries are kept in memory as well (raft's LogCache):
	// each entry is read back right after it is stored, by the leader's
	// replicator for every follower (the entry and the one before it) and
	// by a follower's commit (to apply it), and raft-wal serves every
	// read with a pread of 64 KiB and a decode.
	logs, err := raft.NewLogCache(logCacheEntries, l.store)
	if err != nil {
		l.trans.Close()
		l.store.Close()
		return nil, err
	}
	r, err := raft.NewRaft(rc, (*fsm)(l), logs, l.store, l.snaps, &trackingTransport{NetworkTransport: l.trans, f: &l.followers, beforeTimeoutNow: cfg.beforeTimeoutNow})
	if err != nil {
		l.trans.Close()
		l.store.Close()
		return nil, fmt.Errorf("replog: start raft in %s: %w", cfg.Dir, err)
	}
	l.raft = r
	live := func() []string {
		f := r.GetConfiguration() // answered at once, from raft's copy of the latest
		if f.Error() != nil {
			return nil
		}
		var ids []string
		for _, sv := range f.Configuration().Servers {
			ids = append(ids, string(sv.ID))
		}
		return ids
	}
	names.live.Store(&live)
	l.wg.Add(2)
	go l.watchLeadership()
	go l.flushLoop()
	return l, nil
}

func (l *Log) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(l.cfg.ID)
	rc.HeartbeatTimeout = l.cfg.HeartbeatTimeout
	rc.ElectionTimeout = l.cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = l.cfg.LeaderLeaseTimeout
	rc.CommitTimeout = commitTimeout
	rc.SnapshotThreshold = l.cfg.SnapshotThreshold
	rc.SnapshotInterval = l.cfg.SnapshotInterval
	rc.TrailingLogs = l.cfg.TrailingLogs
	rc.NotifyCh = l.notify
	rc.Logger = newHclog(l.log)
	// Pending applies are drained into one dispatch (one StoreLogs, so
	// one fsync) up to MaxAppendEntries.
	rc.BatchApplyCh = true
	rc.LeaderStoresWhileReplicating = !l.cfg.SerialLeaderStore
	rc.NoLegacyTelemetry = true
	return rc
}

// holdVotes keeps a member that starts out of elections for a heartbeat
// timeout when the group's leaders hold read leases (lease.go). A member
// restarted with its log cannot help elect a successor inside a lease:
// any winner must hold the barrier entry that granted it, so it had
// contact with the leader after the lease began and its own heartbeat
// timer keeps it from standing until the lease is over. A member whose
// metadata directory was wiped has lost that entry and remembers no
// leader, so it would vote at once for a candidate that lacks it; its
// raft port therefore stays closed until HeartbeatTimeout has passed
// since it started, after its last acknowledgement plus the longest
// lease (HeartbeatTimeout × (1 − LeaseDriftMargin)). Defence in depth at
// the price of one heartbeat timeout per start, in lease mode only.
func (l *Log) holdVotes() {
	if l.cfg.ReadLease <= 0 {
		return
	}
	l.log.Info("read leases: a starting member waits a heartbeat timeout before it takes part in elections",
		"wait", l.cfg.HeartbeatTimeout)
	time.Sleep(l.cfg.HeartbeatTimeout)
}

// openStores opens the log/stable store and the snapshot store under Dir.
func (l *Log) openStores() error {
	store, err := l.openLogStore()
	if err != nil {
		return err
	}
	// raft's store makes its directory 0755 unless it exists: make it
	// private first, so a new member has nothing to narrow below.
	if err := diskperm.MkdirAll(filepath.Join(l.cfg.Dir, "snapshots"), diskperm.Dir); err != nil {
		store.Close()
		return fmt.Errorf("replog: snapshot store %s: %w", l.cfg.Dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(l.cfg.Dir, 2, newHclog(l.log))
	if err != nil {
		store.Close()
		return fmt.Errorf("replog: snapshot store %s: %w", l.cfg.Dir, err)
	}
	l.store = store
	l.snaps = privateSnaps{snaps, l.cfg.Dir, l.log}
	// raft's snapshot store makes its directory 0755; narrow it (and
	// what an older start left) to the private modes.
	if _, err := diskperm.Fix(l.cfg.Dir, diskperm.Dir, l.log); err != nil {
		store.Close()
		return err
	}
	return nil
}

// bootstrap creates the group when Dir holds nothing.
func (l *Log) bootstrap(rc *raft.Config) error {
	has, err := raft.HasExistingState(l.store, l.store, l.snaps)
	if err != nil || has {
		return err
	}
	var conf raft.Configuration
	for id, addr := range l.cfg.Peers {
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(id), Address: raft.ServerAddress(addr)})
	}
	if !l.cfg.SeedFromFSM {
		return raft.BootstrapCluster(rc, l.store, l.store, l.snaps, l.trans, conf)
	}
	// Seed: the FSM's loaded state becomes the snapshot at index 1 of
	// term 1, holding the configuration, the way raft's own
	// RecoverCluster writes one. The log starts empty after it, so a new
	// follower's first AppendEntries misses and the leader sends this
	// snapshot (InstallSnapshot): the followers get the image.
	txid, w, err := l.cfg.FSM.Snapshot()
	if err != nil {
		return fmt.Errorf("replog: seed snapshot: %w", err)
	}
	snap := &fsmSnapshot{txid: txid, w: w}
	sink, err := l.snaps.Create(raft.SnapshotVersionMax, 1, 1, conf, 1, l.trans)
	if err != nil {
		return fmt.Errorf("replog: seed snapshot: %w", err)
	}
	if err := snap.Persist(sink); err != nil {
		return fmt.Errorf("replog: seed snapshot: %w", err)
	}
	// The term the seed claims must be the node's current term, as
	// BootstrapCluster makes it.
	return l.store.SetUint64([]byte("CurrentTerm"), 1)
}

// watchLeadership turns raft's leadership notifications into the
// stint's state: a new leader becomes writable only after a barrier
// (every entry of earlier terms applied to its FSM, so its state is the
// group's); a lost stint fails what waits and tells the caller.
func (l *Log) watchLeadership() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case isLeader := <-l.notify:
			l.mu.Lock()
			l.gen++
			gen := l.gen
			if !isLeader {
				l.loseLocked(l.raft.CurrentTerm())
			}
			l.mu.Unlock()
			if isLeader {
				// Not counted in wg: its barrier, like any entry, may
				// be one raft never answers once shut down (see await).
				go l.becomeReady(gen)
			}
		}
	}
}

func (l *Log) becomeReady(gen uint64) {
	if err := l.raft.Barrier(0).Error(); err != nil {
		l.log.Info("replog: barrier after election failed; not taking writes", "err", err)
		return
	}
	var b [8]byte
	for {
		rand.Read(b[:])
		if binary.BigEndian.Uint64(b[:]) != 0 {
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen || l.diverged || l.err != nil {
		return
	}
	l.token = binary.BigEndian.Uint64(b[:])
	l.skipTok = l.token
	l.lastTxID = l.applied
	l.log.Info("replog: leader ready", "term", l.raft.CurrentTerm(), "txid", l.applied)
	select {
	case l.ready <- struct{}{}:
	default: // one signal pending is enough: the reader checks Writable
	}
}

// loseLocked ends a stint, lost at term. Called with mu held.
func (l *Log) loseLocked(term uint64) {
	if l.token == 0 {
		return
	}
	l.token = 0
	if l.open != nil && !l.open.sent {
		l.failLocked(l.open, l.notLeader())
		l.open = nil
	}
	lost := Lost{Term: term, AppliedTxID: l.applied}
	if l.lastTxID > l.applied {
		// Records of the stint that were not seen committed may be
		// committed later by the next leader or never: either way the
		// caller's state cannot be trusted to match the log.
		l.diverged = true
		lost.Diverged = true
	}
	l.log.Warn("replog: lost leadership", "term", lost.Term, "applied_txid", lost.AppliedTxID, "appended_txid", l.lastTxID, "diverged", lost.Diverged)
	select {
	case l.lost <- lost:
	default:
		l.log.Error("replog: leadership-lost signal dropped: the caller does not read LeadershipLost")
	}
}

// failLocked ends b with err (nil: committed), once: Close may have
// ended a batch whose await returns later.
func (l *Log) failLocked(b *pending, err error) {
	if b.ended {
		return
	}
	b.ended = true
	b.err = err
	close(b.done)
}

func (l *Log) notLeader() ErrNotLeader {
	addr, id := l.raft.LeaderWithID()
	return ErrNotLeader{LeaderID: string(id), LeaderAddr: string(addr)}
}

// LeadershipLost delivers a Lost each time this node's leader stint
// ends. The namenode stops serving writes on it and, when Diverged,
// reloads.
func (l *Log) LeadershipLost() <-chan Lost { return l.lost }

// Failed is closed when this node's log has stopped: an entry could not
// be applied (a batch out of txid order, or the caller's FSM refused a
// record), so the caller's state can no longer follow the group. The
// node is still a voter, and could win an election it can
// never serve as leader (its barrier cannot pass the stopped entry),
// holding the group without an active: the caller must Close and reopen
// from the log, as after a Lost with Diverged. Err says why.
func (l *Log) Failed() <-chan struct{} { return l.failed }

// stopLocked records the first error that stops the log and signals
// Failed. Callers hold l.mu.
func (l *Log) stopLocked(err error) {
	if l.err != nil {
		return
	}
	l.err = err
	l.log.Error("replog: stopping this node's log", "err", err)
	close(l.failed)
}

// LeadershipReady signals when a leader stint has become writable (its
// barrier committed), so that the caller takes over at once rather than
// at its next poll. Signals coalesce: the reader checks Writable.
func (l *Log) LeadershipReady() <-chan struct{} { return l.ready }

// Writable returns nil when this node is the ready leader, else the
// ErrNotLeader to give the client. The caller checks it under its lock
// before applying an operation, then Appends under the same lock.
func (l *Log) Writable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writableLocked()
}

func (l *Log) writableLocked() error {
	if l.err != nil {
		return l.err
	}
	if l.diverged {
		return ErrDiverged
	}
	if l.token == 0 {
		return l.notLeader()
	}
	return nil
}

// Append adds a record the caller has already applied to its state and
// returns its handle; the record is durable on a majority only when
// Sync(handle) returns nil. Records get consecutive txids in call order,
// so the caller calls Append under the lock it applies under. On a node
// that is not the ready leader it returns ErrNotLeader and logs nothing:
// if the caller had applied the operation already, its state now holds
// one the group does not and must reload, as on Lost.Diverged. Calling
// Writable first under the same lock makes that rare: only a leadership
// lost between the two calls.
func (l *Log) Append(payload []byte) (Handle, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return Handle{}, err
	}
	if l.open == nil {
		l.open = &pending{first: l.lastTxID + 1, done: make(chan struct{})}
	}
	l.lastTxID++
	l.open.recs = append(l.open.recs, payload)
	if l.gathering {
		select {
		case l.grew <- struct{}{}:
		default:
		}
	}
	return Handle{b: l.open, txid: l.lastTxID}, nil
}

// Sync returns nil once h's record is committed: stored (fsync) on a
// majority of the group, under this node's leadership. Concurrent
// callers share one raft entry. An error means the outcome is unknown
// (the next leader may still commit the record): the operation must not
// be acknowledged, and a retry must be idempotent (HDFS's retry cache).
func (l *Log) Sync(ctx context.Context, h Handle) error {
	if h.b == nil {
		return errors.New("replog: Sync of a zero Handle")
	}
	l.mu.Lock()
	sent := h.b.sent
	l.mu.Unlock()
	if !sent {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	select {
	case <-h.b.done:
		return h.b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flushLoop proposes the open batch whenever a Sync asks and a slot is
// free; while MaxInflight batches wait for commit, appends gather in
// the next one (group commit, as the journal's Sync does with fsync).
func (l *Log) flushLoop() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case <-l.kick:
		}
		select {
		case <-l.done:
			return
		case l.slots <- struct{}{}:
		}
		if !l.overlap() {
			return
		}
		// Writers woken by the last commit are appending now: let them
		// join this batch (the journal's Sync yields the same way). On
		// this machine it took 8 writers from 3.2 to 4.5 records an
		// entry and 2.1k to 3.1k appends/s, 64 from 22 to 28 and 10k to
		// 17k.
		runtime.Gosched()
		l.gather()
		l.mu.Lock()
		b, token := l.open, l.token
		if b == nil || token == 0 {
			l.mu.Unlock()
			<-l.slots
			continue
		}
		l.open = nil
		b.sent = true
		b.at = time.Now()
		l.inflight[b] = struct{}{}
		l.batches++
		l.records += uint64(len(b.recs))
		l.mu.Unlock()
		// Not counted in wg: see await.
		go l.await(b, l.raft.Apply(encodeBatch(token, b.first, b.recs), 0))
	}
}

// overlap holds a free slot while a batch of OverlapBelow records or
// more waits for commit (see Config.OverlapBelow); false: the log is
// closing.
func (l *Log) overlap() bool {
	for {
		l.mu.Lock()
		large := false
		for b := range l.inflight { // at most MaxInflight
			large = large || l.cfg.OverlapBelow > 0 && len(b.recs) >= l.cfg.OverlapBelow
		}
		l.mu.Unlock()
		if !large {
			return true
		}
		select {
		case <-l.landed:
		case <-l.done:
			return false
		}
	}
}

// gather holds a free slot until the open batch has taken back the
// writers that were in the system when the last batch committed, or
// until GatherWait or half the recent commit time has passed, whichever
// is first. With a closed loop of clients (every operation waits for
// the one before), a commit releases its writers, and they append again
// one client round trip later; proposing at once sends a batch of the
// one or two that came first and leaves the rest for the next commit.
// On 8 threads in 3-member groups on 2 cores, gathering took mkdir from
// 4,950 to 7,430 ops/s at 0.60x the server CPU (docs/benchmarks.md,
// "Group commit that waits for the writers"). It is PostgreSQL's
// commit_delay and MySQL's binlog_group_commit_sync_delay with the
// count to wait for learned: at every commit (the records then in the
// system) and at a wait that timed out (what arrived). Writers that do
// not come back (clients that stopped or think between calls) cost each
// entry that still counts them a wait of at most the bound.
func (l *Log) gather() {
	l.mu.Lock()
	limit := min(l.cfg.GatherWait, l.commitEWMA/2) // cfg under mu: tests change it
	l.mu.Unlock()
	if limit <= 0 {
		return
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		l.mu.Lock()
		if l.waitingLocked() >= l.writers || l.token == 0 {
			l.gathering = false
			l.mu.Unlock()
			return
		}
		l.gathering = true
		l.mu.Unlock()
		select {
		case <-l.grew:
		case <-t.C:
			l.mu.Lock()
			l.gathering = false
			l.writers = l.waitingLocked() // who came back is the next target
			l.mu.Unlock()
			return
		case <-l.done:
			return
		}
	}
}

// waitingLocked counts the records proposed and not yet answered plus
// those in the open batch: the writers waiting now.
func (l *Log) waitingLocked() int {
	n := 0
	for b := range l.inflight { // at most MaxInflight
		n += len(b.recs)
	}
	if l.open != nil {
		n += len(l.open.recs)
	}
	return n
}

// await ends b with its raft entry's outcome. It is not something Close
// waits for: raft answers every future of an entry it took, except one
// that reached its apply channel after it shut down (with BatchApplyCh
// the channel is buffered, and Apply may pick it over the shutdown),
// whose Error never returns. A flush loop descheduled between taking a
// batch and proposing it, while the node stepped down and was closed for
// a reload, made such an entry; a Close that waited for it never
// returned (TestFrozenLeaderAcknowledgesNothingUncommitted at load 40).
// Close fails whatever is still in flight instead.
func (l *Log) await(b *pending, f raft.ApplyFuture) {
	err := f.Error()
	<-l.slots
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, b)
	select {
	case l.landed <- struct{}{}:
	default:
	}
	if err == nil {
		l.writers = len(b.recs) + l.waitingLocked()
		d := time.Since(b.at)
		if l.commitEWMA == 0 {
			l.commitEWMA = d
		} else {
			l.commitEWMA += (d - l.commitEWMA) / 8
		}
	}
	if err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			err = l.notLeader()
		} else {
			err = fmt.Errorf("replog: txids %d-%d: %w", b.first, b.first+uint64(len(b.recs))-1, err)
		}
	} else if resp, ok := f.Response().(error); ok && resp != nil {
		err = resp
	}
	l.failLocked(b, err)
	// A later Sync may have found this batch full before a slot
	// freed: look again.
	if l.open != nil {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}
