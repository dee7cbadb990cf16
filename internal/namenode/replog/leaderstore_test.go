package replog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// These tests drive third_party/raft directly (three members over raft's
// in-memory transport) to pin down the one change smarth's copy makes:
// Config.LeaderStoresWhileReplicating, the leader storing a batch while it
// sends it (replog turns it on unless Config.SerialLeaderStore).

// gateStore is a log store whose StoreLogs can be held, as a slow disk
// holds an fsync, or made to fail.
type gateStore struct {
	*raft.InmemStore
	mu      sync.Mutex
	hold    chan struct{} // non-nil: StoreLogs waits until it is closed
	holding chan struct{} // gets a value when a StoreLogs starts to wait
	fail    error
}

func newGateStore() *gateStore {
	return &gateStore{InmemStore: raft.NewInmemStore(), holding: make(chan struct{}, 1)}
}

func (g *gateStore) StoreLogs(logs []*raft.Log) error {
	g.mu.Lock()
	hold, fail := g.hold, g.fail
	g.mu.Unlock()
	if fail != nil {
		return fail
	}
	if hold != nil {
		select {
		case g.holding <- struct{}{}:
		default:
		}
		<-hold
	}
	return g.InmemStore.StoreLogs(logs)
}

func (g *gateStore) StoreLog(l *raft.Log) error { return g.StoreLogs([]*raft.Log{l}) }

// arm makes the next StoreLogs calls wait; the returned func lets them go.
func (g *gateStore) arm() (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.hold = ch
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.hold = nil
			g.mu.Unlock()
			close(ch)
		})
	}
}

// waitHolding waits until a StoreLogs call is held.
func (g *gateStore) waitHolding(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.holding:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no write of the entry reached the store within 10 s", what)
	}
}

func (g *gateStore) last(t *testing.T) uint64 {
	i, err := g.InmemStore.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, errors.New("no snapshots here") }
func (nopFSM) Restore(io.ReadCloser) error         { return errors.New("no snapshots here") }

// storeGroup is three raft members; leader and followers index nodes
// and stores.
type storeGroup struct {
	nodes     []*raft.Raft
	stores    []*gateStore
	beats     []func(raft.RPC) // each member's heartbeat fast path, as its transport would call it
	leader    int
	followers []int
}

func newStoreGroup(t *testing.T, parallel bool) *storeGroup {
	t.Helper()
	g := &storeGroup{}
	var trans []*raft.InmemTransport
	var servers []raft.Server
	for i := range 3 {
		addr, tr := raft.NewInmemTransport(raft.ServerAddress(fmt.Sprintf("m%d", i)))
		trans = append(trans, tr)
		servers = append(servers, raft.Server{ID: raft.ServerID(addr), Address: addr})
	}
	for _, a := range trans {
		for _, b := range trans {
			if a != b {
				a.Connect(b.LocalAddr(), b)
			}
		}
	}
	for i := range 3 {
		c := raft.DefaultConfig()
		c.LocalID = servers[i].ID
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
		c.CommitTimeout = 5 * time.Millisecond
		c.Logger = hclog.NewNullLogger()
		c.BatchApplyCh = true
		c.LeaderStoresWhileReplicating = parallel
		st := newGateStore()
		cache, err := raft.NewLogCache(16, st)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := raft.BootstrapCluster(c, cache, st, raft.NewInmemSnapshotStore(), trans[i], raft.Configuration{Servers: servers}); err != nil {
				t.Fatal(err)
			}
		}
		bt := &beatTransport{InmemTransport: trans[i]}
		r, err := raft.NewRaft(c, nopFSM{}, cache, st, raft.NewInmemSnapshotStore(), bt)
		if err != nil {
			t.Fatal(err)
		}
		g.nodes, g.stores, g.beats = append(g.nodes, r), append(g.stores, st), append(g.beats, bt.fn)
	}
	t.Cleanup(func() {
		for _, st := range g.stores {
			st.mu.Lock()
			st.hold, st.fail = nil, nil
			st.mu.Unlock()
		}
		for _, r := range g.nodes {
			r.Shutdown()
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for g.leader = -1; g.leader < 0; {
		for i, r := range g.nodes {
			if r.State() == raft.Leader {
				g.leader = i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range g.nodes {
		if i != g.leader {
			g.followers = append(g.followers, i)
		}
	}
	// Everything up to the leader's first barrier on every member first.
	if err := g.nodes[g.leader].Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	g.waitStored(t, g.followers, g.stores[g.leader].last(t))
	return g
}

// beatTransport keeps the heartbeat handler raft gives its transport
// (the in-memory transport has no fast path of its own), so that a test
// can call it as the network transport does: on the transport's
// goroutine, beside raft's main loop.
type beatTransport struct {
	*raft.InmemTransport
	fn func(raft.RPC)
}

func (b *beatTransport) SetHeartbeatHandler(fn func(raft.RPC)) { b.fn = fn }

// waitStored waits until each of members has stored index.
func (g *storeGroup) waitStored(t *testing.T, members []int, index uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, m := range members {
		for g.stores[m].last(t) < index {
			if time.Now().After(deadline) {
				t.Fatalf("member %d stored up to %d, not %d, within 10 s", m, g.stores[m].last(t), index)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// done reports a future's outcome on a channel.
func done(f raft.Future) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f.Error() }()
	return ch
}

// committed waits for f's entry to commit once the leader's write is let
// go; why tells the failure what should have made it commit.
func committed(t *testing.T, f <-chan error, why string) {
	t.Helper()
	select {
	case err := <-f:
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the entry did not commit within 10 s of the leader's write%s", why)
	}
}

// TestLeaderSendsWhileItStores: with the leader's write held, the
// followers store a new entry in parallel mode and not in serial mode
// (upstream's order, the control); either way the entry commits once the
// leader's write is let go.
func TestLeaderSendsWhileItStores(t *testing.T) {
	for _, parallel := range []bool{true, false} {
		t.Run(map[bool]string{true: "parallel", false: "serial"}[parallel], func(t *testing.T) {
			g := newStoreGroup(t, parallel)
			ls := g.stores[g.leader]
			next := ls.last(t) + 1
			release := ls.arm()
			defer release()
			f := done(g.nodes[g.leader].Apply([]byte("x"), 0))
			ls.waitHolding(t, "leader")
			if parallel {
				g.waitStored(t, g.followers, next)
			} else {
				time.Sleep(300 * time.Millisecond)
				for _, m := range g.followers {
					if got := g.stores[m].last(t); got >= next {
						t.Fatalf("serial: follower %d stored entry %d while the leader's write of it was held", m, got)
					}
				}
			}
			release()
			committed(t, f, "")
			g.waitStored(t, g.followers, next)
		})
	}
}

// TestLeaderCountsItselfOnlyOnceStored: in parallel mode, an entry that
// one follower has stored while the leader's write and the other
// follower's are held is on one disk of three and must not commit; it
// commits once the leader's write is done (two of three), with the second
// follower still held. An implementation that let the leader count itself
// before its write returned (an asynchronous leader fsync) would commit
// it at once.
func TestLeaderCountsItselfOnlyOnceStored(t *testing.T) {
	g := newStoreGroup(t, true)
	ls, slow := g.stores[g.leader], g.stores[g.followers[0]]
	next := ls.last(t) + 1
	releaseSlow := slow.arm()
	defer releaseSlow()
	releaseLeader := ls.arm()
	defer releaseLeader()
	f := done(g.nodes[g.leader].Apply([]byte("x"), 0))
	ls.waitHolding(t, "leader")
	slow.waitHolding(t, "held follower")
	g.waitStored(t, []int{g.followers[1]}, next)
	select {
	case err := <-f:
		t.Fatalf("the entry was acknowledged (%v) while only one member of three had stored it", err)
	case <-time.After(300 * time.Millisecond):
	}
	releaseLeader()
	committed(t, f, " (leader and one follower have it)")
	if got := slow.last(t); got >= next {
		t.Fatalf("the held follower stored entry %d", got)
	}
}

// TestLeaderStoreFailureStops: in parallel mode a leader whose own write
// fails has already sent the entries, so it stops the process (run here
// in a child process) instead of stepping down with a log it cannot
// vouch for.
func TestLeaderStoreFailureStops(t *testing.T) {
	if os.Getenv("REPLOG_LEADER_STORE_CHILD") == "1" {
		g := newStoreGroup(t, true)
		g.stores[g.leader].mu.Lock()
		g.stores[g.leader].fail = errors.New("injected: no space left on device")
		g.stores[g.leader].mu.Unlock()
		err := g.nodes[g.leader].Apply([]byte("x"), 0).Error()
		time.Sleep(2 * time.Second)
		fmt.Printf("CHILD-ALIVE apply: %v\n", err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaderStoreFailureStops$", "-test.v")
	cmd.Env = append(os.Environ(), "REPLOG_LEADER_STORE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), "CHILD-ALIVE") {
		t.Fatalf("the member went on after its own write failed (err %v):\n%s", err, out)
	}
	const want = "the leader could not store log entries"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "no space left on device") {
		t.Fatalf("the child stopped (%v) without %q naming the store's error:\n%s", err, want, out)
	}
}

// TestNewerTermHeartbeatWaitsForTheMainLoop: a heartbeat from a newer
// term's leader reaching a leader is handled on the leader's main loop,
// not beside it on the transport's goroutine (hashicorp/raft#695). There
// it set the term while the leader loop was between taking a batch and
// stamping it: a deposed active namenode, resumed after SIGSTOP, wrote
// its own queued batch with the new leader's term, matched the new
// leader's entries at those indexes by term, and applied the batch as
// committed (a chaos run; replog's txid check stopped its log). Here the
// leader's main loop is held in its store; the heartbeat must neither
// return nor change the term until the loop is free. The control: a
// heartbeat of the current term to a follower still takes the fast path
// and returns at once.
func TestNewerTermHeartbeatWaitsForTheMainLoop(t *testing.T) {
	g := newStoreGroup(t, true)
	l := g.nodes[g.leader]
	term := l.CurrentTerm()
	beat := func(member int, term uint64) (returned chan struct{}, resp chan raft.RPCResponse) {
		returned, resp = make(chan struct{}), make(chan raft.RPCResponse, 1)
		hb := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("m9"), Addr: []byte("m9")}, Term: term}
		go func() {
			g.beats[member](raft.RPC{Command: hb, RespChan: resp})
			close(returned)
		}()
		return returned, resp
	}

	// The control: a follower's own term, with its main loop free.
	f := g.followers[0]
	returned, resp := beat(f, term)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("control: a heartbeat of the follower's own term did not return within 10 s")
	}
	if r := <-resp; r.Error != nil || !r.Response.(*raft.AppendEntriesResponse).Success {
		t.Fatalf("control: the follower's answer to a heartbeat of its term: %+v", r)
	}

	release := g.stores[g.leader].arm()
	defer release()
	apply := l.Apply([]byte("held"), 10*time.Second)
	g.stores[g.leader].waitHolding(t, "the leader's store")
	returned, resp = beat(g.leader, term+1)
	select {
	case <-returned:
		t.Fatalf("a heartbeat at term %d was handled beside the leader's busy main loop (term now %d, %v)", term+1, l.CurrentTerm(), l.State())
	case <-time.After(time.Second):
	}
	if got := l.CurrentTerm(); got != term {
		t.Fatalf("the held leader's term moved from %d to %d before its main loop handled the heartbeat", term, got)
	}
	release()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the heartbeat was not handled within 10 s of the leader's main loop being free")
	}
	if r := <-resp; r.Error != nil {
		t.Fatalf("the leader's answer to the newer term's heartbeat: %v", r.Error)
	}
	if st, got := l.State(), l.CurrentTerm(); st == raft.Leader || got != term+1 {
		t.Fatalf("after the newer term's heartbeat the old leader is %v at term %d; want a follower at %d", st, got, term+1)
	}
	_ = apply.Error() // committed before the step-down, or not: either is raft's answer
}
