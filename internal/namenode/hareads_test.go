package namenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
)

// TestReadIndexSharesVerifications: readers that arrive while a
// verification is in flight do not take its answer (it may have been
// proposed before they arrived); they share the next one, so ten
// readers cost two verifications, and each reader gets the outcome of
// the verification it waited for.
func TestReadIndexSharesVerifications(t *testing.T) {
	var calls atomic.Int32
	started := make(chan int, 10)
	release := make(chan error)
	stop := make(chan struct{})
	defer close(stop)
	r := newReadIndex(func(ctx context.Context) error {
		started <- int(calls.Add(1))
		return <-release
	}, stop)
	r.depth = 1

	first := make(chan error, 1)
	go func() { first <- r.wait(context.Background()) }()
	if n := <-started; n != 1 {
		t.Fatalf("verification %d started for the first reader", n)
	}
	const later = 9
	rest := make(chan error, later)
	for range later {
		go func() { rest <- r.wait(context.Background()) }()
	}
	waitFor(t, fmt.Sprintf("%d readers queued behind the verification in flight", later), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.next != nil && r.next.readers == later
	})
	if calls.Load() != 1 {
		t.Fatalf("%d verifications started while one was in flight; want the queued readers to wait for it to end", calls.Load())
	}
	release <- nil // the first verification passes
	if err := <-first; err != nil {
		t.Fatalf("first reader: %v", err)
	}
	// The queued readers need a verification of their own.
	if n := <-started; n != 2 {
		t.Fatalf("verification %d started for the queued readers, want 2", n)
	}
	select {
	case err := <-rest:
		t.Fatalf("a queued reader returned (%v) before the verification that began after it arrived ended", err)
	default:
	}
	lost := errors.New("leadership lost")
	release <- lost
	for range later {
		if err := <-rest; !errors.Is(err, lost) {
			t.Fatalf("queued reader: %v, want the outcome of its verification (%v)", err, lost)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d verifications for 10 readers, want 2", n)
	}
}

// raftCut cuts a member's raft connections (replog's WrapConn): while
// cut, nothing it sends leaves and nothing sent to it is delivered; the
// bytes pass once healed, as after a partition heals.
type raftCut struct {
	mu      sync.Mutex
	blocked chan struct{} // nil: not cut
}

func (c *raftCut) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked == nil {
		c.blocked = make(chan struct{})
	}
}

func (c *raftCut) heal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked != nil {
		close(c.blocked)
		c.blocked = nil
	}
}

func (c *raftCut) wrap(conn net.Conn) net.Conn {
	return &cutConn{Conn: conn, cut: c, closed: make(chan struct{})}
}

type cutConn struct {
	net.Conn
	cut       *raftCut
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *cutConn) hold() {
	c.cut.mu.Lock()
	ch := c.cut.blocked
	c.cut.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-c.closed:
		}
	}
}

func (c *cutConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.hold()
	return n, err
}

func (c *cutConn) Write(p []byte) (int, error) {
	c.hold()
	return c.Conn.Write(p)
}

func (c *cutConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestHAReadIndexDeposedActive: an active cut off from its group (its
// raft connections blocked while its RPC port serves) keeps believing
// it leads until its lease runs out, long here (30 s) so that the others
// elect a successor, which acknowledges a new directory, well inside
// it. A getFileInfo of that directory sent straight to the old active
// then must not say it does not exist, nor a delete of it that it is not
// found: with ha_read_consistency: linearizable both wait for a read
// index that cannot pass, and once the partition heals they are refused
// as a standby (the client goes to the new active); with leader (the
// control) both are answered from memory, stale.
//
// With lease (its members' raft timers as above, its read lease 1.6 s:
// the 2 s heartbeat timeout the others elect by, less the drift margin)
// the old active first serves reads under its lease; cut off, it cannot
// renew it, so once the others elected and acknowledged /after, the
// delete and the read find it expired and wait for a read index as in
// linearizable mode. A third read, which arrived before the partition,
// is held between its arrival and its lease check (a pause, as of a
// stopped process) until /after is acknowledged: its check, after the
// pause, must not pass either.
func TestHAReadIndexDeposedActive(t *testing.T) {
	if testing.Short() {
		t.Skip("two groups of three namenodes, each through an election after a partition (about 15 s)")
	}
	for _, mode := range []string{readsLinearizable, readsLease, readsLeader} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			deposedActiveRead(t, mode)
		})
	}
}

func deposedActiveRead(t *testing.T, mode string) {
	cut := &raftCut{}
	const old = 1 // the member that is cut off
	g := startHAGroup(t, 3, func(c *Config) {
		c.HA.ReadConsistency = mode
		if c.HA.ID == fmt.Sprintf("nn%d", old) {
			// A long lease (and so heartbeat timeout, which bounds it):
			// cut off, it stays the active in its own eyes for 30 s.
			c.HA.HeartbeatTimeout, c.HA.ElectionTimeout, c.HA.LeaderLeaseTimeout = 30*time.Second, 30*time.Second, 30*time.Second
			c.raftConn = cut.wrap
			// The lease the group's 2 s heartbeat timeout gives.
			c.readLease = 1600 * time.Millisecond
			return
		}
		// Its heartbeats come every 3-6 s (a tenth to a fifth of its
		// timeout): the others hear it through the writer's edits below,
		// and elect after 2-4 s without it.
		c.HA.HeartbeatTimeout, c.HA.ElectionTimeout, c.HA.LeaderLeaseTimeout = 2*time.Second, 2*time.Second, time.Second
	})
	t.Cleanup(cut.heal) // before the members close: raft's goroutines must not stay blocked
	a := g.cli[old]

	activeWithWriter(t, g, old)
	if _, err := a.cp.Mkdirs(a.ctx(), &dfspb.MkdirsRequest{Path: "/before"}); err != nil {
		t.Fatalf("mkdirs /before on the active: %v", err)
	}
	if _, err := a.cp.GetFileInfo(a.ctx(), &dfspb.GetFileInfoRequest{Path: "/before"}); err != nil {
		t.Fatalf("control: getFileInfo /before on the active before the partition: %v", err)
	}
	var paused *pausedRead
	if mode == readsLease {
		waitFor(t, "a read on the active served under its lease", func() bool {
			a.cp.GetFileInfo(a.ctx(), &dfspb.GetFileInfoRequest{Path: "/before"})
			return g.nns[old].ha.leaseReads.Load() > 0
		})
		// Held across the election and the partition's heal: on a
		// loaded machine that took longer than ctx's 10 s (CI-like load,
		// a DeadlineExceeded instead of the refusal).
		paused = pauseRead(t, g.nns[old].ha, func() error {
			_, err := a.cp.GetFileInfo(a.ctxFor(2*time.Minute), &dfspb.GetFileInfoRequest{Path: "/after"})
			return err
		})
	}

	cut.cut()
	nl := -1
	waitFor(t, "another member to become the active and acknowledge mkdirs /after", func() bool {
		for i, c := range g.cli {
			if i == old {
				continue
			}
			if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/after"}); err == nil {
				nl = i
				return true
			}
		}
		return false
	})
	st, err := a.cp.GetHAStatus(a.ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st.State != dfspb.HAState_ACTIVE {
		t.Fatalf("the cut-off member no longer believes it is the active (%v, %v): its lease ran out before the test's read, which then proves nothing", st, err)
	}
	if paused != nil {
		paused.resume(t, g.nns[old].ha)
	}

	// Sent straight to the old active while it is cut off: a delete of
	// /after, which its stale namespace refuses (not found), then a
	// getFileInfo of /after. Each either replies or waits in the read
	// index (the delete's verification in flight, the read queued for
	// the next); then the partition heals.
	delErr := make(chan error, 1)
	go func() {
		_, err := a.cp.Delete(a.ctx(), &dfspb.DeleteRequest{Path: "/after"})
		delErr <- err
	}()
	gate := func(cond func(r *readIndex) bool) func() bool {
		return func() bool {
			rx := g.nns[old].ha.reads
			if rx == nil {
				return false
			}
			rx.mu.Lock()
			defer rx.mu.Unlock()
			return cond(rx)
		}
	}
	var del error
	delDone := false
	waitFor(t, "the delete sent to the old active to reply or to wait for a read index", func() bool {
		select {
		case del = <-delErr:
			delDone = true
			return true
		default:
		}
		return gate(func(r *readIndex) bool { return r.inFlight > 0 })()
	})
	type reply struct {
		st  *dfspb.GetFileInfoResponse
		err error
	}
	got := make(chan reply, 1)
	go func() {
		r, err := a.cp.GetFileInfo(a.ctx(), &dfspb.GetFileInfoRequest{Path: "/after"})
		got <- reply{r, err}
	}()
	var rep *reply
	waitFor(t, "the read sent to the old active to reply or to wait for a read index", func() bool {
		select {
		case r := <-got:
			rep = &r
			return true
		default:
		}
		if delDone {
			return gate(func(r *readIndex) bool { return r.inFlight > 0 })()
		}
		return gate(func(r *readIndex) bool { return r.next != nil && r.next.readers > 0 })()
	})
	cut.heal()
	if rep == nil {
		r := <-got
		rep = &r
	}
	if !delDone {
		del = <-delErr
	}
	switch mode {
	case readsLeader:
		if status.Code(rep.err) != codes.NotFound {
			t.Fatalf("control (leader reads): getFileInfo /after on the deposed active: %v, %v; want its stale answer, not found", rep.st, rep.err)
		}
		if status.Code(del) != codes.NotFound {
			t.Fatalf("control (leader reads): delete /after on the deposed active: %v; want its stale refusal, not found", del)
		}
		t.Logf("control: the deposed active answered from its stale namespace: %v; delete: %v", rep.err, del)
	case readsLinearizable, readsLease:
		if paused != nil {
			if err := <-paused.done; !isStandby(err) {
				t.Fatalf("getFileInfo /after held before its lease check until the others acknowledged /after: %v; want a standby refusal, not its stale not found", err)
			}
		}
		if _, ok := standby.Is(rep.err); !ok {
			t.Fatalf("getFileInfo /after on the deposed active: %v, %v; want a standby refusal", rep.st, rep.err)
		}
		if _, ok := standby.Is(del); !ok || !strings.Contains(status.Convert(del).Message(), "category WRITE") {
			t.Fatalf("delete /after on the deposed active: %v; want a standby refusal of a WRITE, not its stale not found", del)
		}
		t.Logf("the deposed active refused the read: %v; and the delete: %v", rep.err, del)
	}

	// Healed, the old active follows the new one and has /after.
	waitFor(t, fmt.Sprintf("nn%d to be a standby of nn%d with /after", old, nl), func() bool {
		st, err := a.cp.GetHAStatus(a.ctx(), &dfspb.GetHAStatusRequest{})
		return err == nil && st.State == dfspb.HAState_STANDBY && st.ActiveRpcAddress == g.cfgs[nl].RPCAddr && g.has(old, "/after")
	})
	c := g.cli[nl]
	if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/after"}); err != nil {
		t.Fatalf("getFileInfo /after on the new active: %v", err)
	}
}

// activeWithWriter makes member old the active, with a writer through it
// until it acknowledged 10 mkdirs, so that the others keep hearing from
// it when its heartbeats are rare (its long heartbeat timeout).
func activeWithWriter(t *testing.T, g *haGroup, old int) {
	a := g.cli[old]
	stopW, doneW := make(chan struct{}), make(chan struct{})
	var wrote atomic.Int32
	go func() {
		defer close(doneW)
		for i := 0; ; i++ {
			select {
			case <-stopW:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := a.cp.Mkdirs(a.ctx(), &dfspb.MkdirsRequest{Path: fmt.Sprintf("/keep/%d", i), CreateParent: true}); err == nil {
				wrote.Add(1)
			}
		}
	}()
	waitFor(t, fmt.Sprintf("nn%d to be the active and acknowledge 10 writes", old), func() bool {
		l := g.active(nil)
		if l != old {
			g.cli[l].cp.TransferHALeader(g.cli[l].ctx(), &dfspb.TransferHALeaderRequest{Id: fmt.Sprintf("nn%d", old)})
			wrote.Store(0)
			return false
		}
		return wrote.Load() >= 10
	})
	close(stopW)
	<-doneW
}

// pausedRead is a read held between its arrival and its lease check.
type pausedRead struct {
	release chan struct{}
	once    sync.Once
	done    chan error // its outcome
}

// pauseRead sends a read with call and holds it before its lease check
// (haNode.beforeLeaseCheck) until resume; it returns once the read is
// held.
func pauseRead(t *testing.T, h *haNode, call func() error) *pausedRead {
	p := &pausedRead{release: make(chan struct{}), done: make(chan error, 1)}
	held := make(chan struct{})
	var first atomic.Bool
	hook := func() {
		if first.CompareAndSwap(false, true) {
			close(held)
			<-p.release
		}
	}
	h.beforeLeaseCheck.Store(&hook)
	t.Cleanup(func() { p.once.Do(func() { close(p.release) }) })
	go func() { p.done <- call() }()
	waitFor(t, "the read to be held before its lease check", func() bool {
		select {
		case <-held:
			return true
		default:
			return false
		}
	})
	return p
}

// resume lets the held read go on and returns once it has checked the
// lease and found none (it then waits for a read index), or replied
// (which the caller judges).
func (p *pausedRead) resume(t *testing.T, h *haNode) {
	misses := h.leaseMisses.Load()
	p.once.Do(func() { close(p.release) })
	waitFor(t, "the held read to reply or to find no lease", func() bool {
		if h.leaseMisses.Load() > misses {
			return true
		}
		select {
		case err := <-p.done:
			p.done <- err
			return true
		default:
			return false
		}
	})
}

func isStandby(err error) bool {
	_, ok := standby.Is(err)
	return ok
}
