package client

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"smarth/internal/ipc"
	"smarth/internal/rpc/callid"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
	"smarth/internal/testenv"
)

// haNN is a fake namenode of an HA group on a real TCP port, served over
// the transport under test. Its role decides every call: "active" serves
// it, "standby" refuses it with standby.Error naming hint, "die" takes
// the call and then dies before answering (every connection and the
// listener closed), as a namenode process killed mid-call; "hang" takes
// every call, GetHAStatus too, and never answers, as a frozen process;
// "slow" answers calls after slowFor, and GetHAStatus at once, as a live
// active with a long call. GetHAStatus says ACTIVE at term for "active"
// and "slow", STANDBY for "standby".
type haNN struct {
	dfspb.UnimplementedClientProtocolServer
	addr string
	lis  *trackingListener
	stop func()

	mu      sync.Mutex
	role    string
	hint    string
	calls   map[string]int      // method name -> calls received
	ids     map[string][]string // method name -> the call ids each call carried
	term    uint64
	slowFor time.Duration
	// standbyFor: refuse this many calls as a standby before serving (an
	// election that ends while the client waits).
	standbyFor int
	// hangStatus: GetHAStatus takes the call and never answers (whatever
	// the role); inStatus holds the deadline of each status call in
	// progress, maxInStatus the most at once whose deadlines had not
	// passed. A call the client has given up on can linger here for as
	// long as the scheduler keeps its handler from seeing its deadline
	// (on a loaded machine, past the client's next round), and it is not
	// a second watch.
	hangStatus  bool
	inStatus    map[*int]time.Time
	maxInStatus int
}

func startHANN(t *testing.T, transport, role, hint string) *haNN {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &haNN{addr: l.Addr().String(), lis: &trackingListener{Listener: l}, role: role, hint: hint, calls: map[string]int{}, ids: map[string][]string{}, inStatus: map[*int]time.Time{}}
	if transport == TransportIPC {
		srv := ipc.NewServer(ipc.ServerOptions{})
		dfspb.RegisterClientProtocolServer(srv, n)
		go srv.Serve(n.lis)
		n.stop = srv.Stop
	} else {
		srv := grpc.NewServer()
		dfspb.RegisterClientProtocolServer(srv, n)
		go srv.Serve(n.lis)
		n.stop = srv.Stop
	}
	t.Cleanup(func() { n.lis.kill(); n.stop() })
	return n
}

func (n *haNN) set(role, hint string) {
	n.mu.Lock()
	n.role, n.hint = role, hint
	n.mu.Unlock()
}

func (n *haNN) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

// serve records the call and applies the role; nil: serve it.
func (n *haNN) serve(ctx context.Context, method, category string) error {
	n.mu.Lock()
	n.calls[method]++
	n.ids[method] = append(n.ids[method], first(metadata.ValueFromIncomingContext(ctx, callid.Key)))
	role, hint := n.role, n.hint
	if n.standbyFor > 0 {
		n.standbyFor--
		role = "standby"
	}
	n.mu.Unlock()
	switch role {
	case "standby":
		return standby.Error(category, hint)
	case "die":
		n.lis.kill()
		<-ctx.Done() // the reply never leaves: the process is gone
		return ctx.Err()
	case "hang":
		<-ctx.Done() // the client gives up (its deadline, or it abandons the call)
		return ctx.Err()
	case "slow":
		select {
		case <-time.After(n.slowFor):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (n *haNN) idsOf(method string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.ids[method]...)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (n *haNN) GetHAStatus(ctx context.Context, r *dfspb.GetHAStatusRequest) (*dfspb.GetHAStatusResponse, error) {
	n.mu.Lock()
	n.calls["GetHAStatus"]++
	role, term := n.role, n.term
	if n.hangStatus {
		role = "hang"
	}
	now, key := time.Now(), new(int)
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = now.Add(time.Hour)
	}
	n.inStatus[key] = deadline
	live := 0
	for _, d := range n.inStatus {
		if d.After(now) {
			live++
		}
	}
	n.maxInStatus = max(n.maxInStatus, live)
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.inStatus, key)
		n.mu.Unlock()
	}()
	switch role {
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "active", "slow":
		return &dfspb.GetHAStatusResponse{State: dfspb.HAState_ACTIVE, Term: term}, nil
	}
	return &dfspb.GetHAStatusResponse{State: dfspb.HAState_STANDBY, Term: term}, nil
}

func (n *haNN) AddBlock(ctx context.Context, r *dfspb.AddBlockRequest) (*dfspb.AddBlockResponse, error) {
	if err := n.serve(ctx, "AddBlock", standby.Write); err != nil {
		return nil, err
	}
	return &dfspb.AddBlockResponse{}, nil
}

func (n *haNN) Truncate(ctx context.Context, r *dfspb.TruncateRequest) (*dfspb.TruncateResponse, error) {
	if err := n.serve(ctx, "Truncate", standby.Write); err != nil {
		return nil, err
	}
	return &dfspb.TruncateResponse{}, nil
}

func (n *haNN) MoveReplica(ctx context.Context, r *dfspb.MoveReplicaRequest) (*dfspb.MoveReplicaResponse, error) {
	if err := n.serve(ctx, "MoveReplica", standby.Write); err != nil {
		return nil, err
	}
	return &dfspb.MoveReplicaResponse{}, nil
}

func (n *haNN) GetFileInfo(ctx context.Context, r *dfspb.GetFileInfoRequest) (*dfspb.GetFileInfoResponse, error) {
	if err := n.serve(ctx, "GetFileInfo", standby.Read); err != nil {
		return nil, err
	}
	return &dfspb.GetFileInfoResponse{Status: &dfspb.FileStatus{Path: r.Path, Type: dfspb.FileType_DIRECTORY}}, nil
}

func (n *haNN) Msync(ctx context.Context, r *dfspb.MsyncRequest) (*dfspb.MsyncResponse, error) {
	if err := n.serve(ctx, "Msync", standby.Read); err != nil {
		return nil, err
	}
	return &dfspb.MsyncResponse{}, nil
}

func (n *haNN) Rename(ctx context.Context, r *dfspb.RenameRequest) (*dfspb.RenameResponse, error) {
	if err := n.serve(ctx, "Rename", standby.Write); err != nil {
		return nil, err
	}
	return &dfspb.RenameResponse{}, nil
}

// trackingListener remembers its connections so that kill can drop them
// all at once, as the death of the namenode's process does.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	killed bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.killed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns = append(l.conns, c)
	return c, nil
}

func (l *trackingListener) kill() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killed = true
	l.Listener.Close()
	for _, c := range l.conns {
		c.Close()
	}
}

func haClient(t *testing.T, transport string, addrs ...string) *FileSystem {
	return haClientRounds(t, transport, 2, addrs...)
}

func haClientRounds(t *testing.T, transport string, rounds int, addrs ...string) *FileSystem {
	t.Helper()
	return haClientWith(t, Config{RPCTransport: transport, RPCTimeout: 5 * time.Second, FailoverAttempts: rounds,
		FailoverSleepBase: 10 * time.Millisecond, FailoverSleepMax: 50 * time.Millisecond}, addrs...)
}

// haClientWith is a client of addrs as alice with cfg's other settings.
func haClientWith(t *testing.T, cfg Config, addrs ...string) *FileSystem {
	t.Helper()
	cfg.NameNode, cfg.User = strings.Join(addrs, ","), "alice"
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func forTransports(t *testing.T, test func(t *testing.T, transport string)) {
	for _, tr := range []string{TransportIPC, TransportGRPC} {
		t.Run(tr, func(t *testing.T) { test(t, tr) })
	}
}

// A standby's refusal sends the call to the active it names, not to the
// next namenode of the list; later calls go straight to the active.
func TestFailoverStandbyToNamedActive(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		nn3 := startHANN(t, tr, "active", "")
		nn1 := startHANN(t, tr, "standby", nn3.addr)
		nn2 := startHANN(t, tr, "standby", nn3.addr)
		f := haClient(t, tr, nn1.addr, nn2.addr, nn3.addr)
		ctx := context.Background()
		if _, err := f.Stat(ctx, "/a"); err != nil {
			t.Fatalf("stat through a standby naming the active: %v", err)
		}
		if err := f.Rename(ctx, "/a", "/b"); err != nil {
			t.Fatalf("rename after failover: %v", err)
		}
		if got := [3]int{nn1.count("GetFileInfo"), nn2.count("GetFileInfo"), nn3.count("GetFileInfo")}; got != [3]int{1, 0, 1} {
			t.Errorf("GetFileInfo calls at nn1, nn2, nn3 = %v, want [1 0 1] (the refusal's hint followed, nn2 skipped)", got)
		}
		if got := [3]int{nn1.count("Rename"), nn2.count("Rename"), nn3.count("Rename")}; got != [3]int{0, 0, 1} {
			t.Errorf("Rename calls at nn1, nn2, nn3 = %v, want [0 0 1] (the active remembered)", got)
		}
	})
}

// A namenode that refuses connections is skipped, for a write too: the
// refused connection proves the call was never sent.
func TestFailoverSkipsDeadNameNode(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		nn := startHANN(t, tr, "active", "")
		f := haClient(t, tr, testenv.DeadAddr(t), nn.addr)
		if err := f.Rename(context.Background(), "/a", "/b"); err != nil {
			t.Fatalf("rename with the first namenode down: %v", err)
		}
		if nn.count("Rename") != 1 {
			t.Errorf("the live namenode got %d renames, want 1", nn.count("Rename"))
		}
	})
}

// When every namenode is a standby naming no active, the call gives up
// after FailoverAttempts rounds through them, and the error names every
// namenode and what it said.
func TestFailoverAllStandbyNamesEach(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		a, b := startHANN(t, tr, "standby", ""), startHANN(t, tr, "standby", "")
		dead := testenv.DeadAddr(t)
		f := haClient(t, tr, a.addr, b.addr, dead)
		_, err := f.Stat(context.Background(), "/a")
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("stat with no active namenode: %v, want ErrUnavailable", err)
		}
		msg := err.Error()
		for _, want := range []string{a.addr + ": Operation category READ is not supported in state standby",
			b.addr + ": Operation category READ is not supported in state standby", dead + ": cannot reach the namenode"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if na, nb := a.count("GetFileInfo"), b.count("GetFileInfo"); na != 2 || nb != 2 {
			t.Errorf("the standbys got %d and %d calls, want 2 each (FailoverAttempts: 2 rounds)", na, nb)
		}
	})
}

// While the group elects an active every namenode says standby; the
// call keeps going round them, with sleeps between rounds, until one
// serves it.
func TestFailoverWaitsOutAnElection(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		a, b := startHANN(t, tr, "standby", ""), startHANN(t, tr, "active", "")
		b.mu.Lock()
		b.standbyFor = 3 // the election ends during the fourth round
		b.mu.Unlock()
		f := haClientRounds(t, tr, 5, a.addr, b.addr)
		if err := f.Rename(context.Background(), "/a", "/b"); err != nil {
			t.Fatalf("rename during an election that ends within 5 rounds: %v", err)
		}
		if na, nb := a.count("Rename"), b.count("Rename"); na != 4 || nb != 4 {
			t.Errorf("renames at a and b = %d, %d; want 4, 4 (four rounds, the last one served by b)", na, nb)
		}
	})
}

// A call that reached a namenode which then died has an unknown outcome:
// a read is repeated on the next namenode; so is a rename, at most once,
// with the same call ids (the namenode's retry cache answers a repeat of
// an applied one); so is an addBlock (idempotent by the namenode's
// check of its previous block), an msync (a chaos run with observer
// reads counted 7 failed gets when it was not), and a truncate (a repeat
// of the one in progress is "not ready"); the balancer's moveReplica,
// which is neither, is not, and its error is returned.
func TestFailoverUnknownOutcome(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		ctx := context.Background()

		dying, next := startHANN(t, tr, "die", ""), startHANN(t, tr, "active", "")
		f := haClient(t, tr, dying.addr, next.addr)
		if err := f.Rename(ctx, "/a", "/b"); err != nil {
			t.Fatalf("a rename whose namenode died after taking it: %v; want it repeated on the next", err)
		}
		if dying.count("Rename") != 1 || next.count("Rename") != 1 {
			t.Errorf("renames at the dying and the next namenode = %d, %d; want 1, 1", dying.count("Rename"), next.count("Rename"))
		}
		if a, b := dying.idsOf("Rename")[0], next.idsOf("Rename")[0]; a == "" || a != b {
			t.Errorf("the rename's call ids at the dying and the next namenode: %x, %x; want the same ids on both", a, b)
		}
		if err := f.Rename(ctx, "/b", "/c"); err != nil {
			t.Fatal(err)
		}
		if ids := next.idsOf("Rename"); len(ids) != 2 || ids[1] == ids[0] {
			t.Errorf("call ids of two renames: %x; want two different ones", ids)
		}

		// The other calls, each on a fresh pair: repeated on the next
		// namenode (one call at each) or not (its error, none at the next).
		for _, c := range []struct {
			method   string
			call     func(f *FileSystem) error
			repeated bool
		}{
			{"AddBlock", func(f *FileSystem) error {
				_, err := f.nn.AddBlock(ctx, &dfspb.AddBlockRequest{Path: "/a"})
				return err
			}, true},
			{"Msync", func(f *FileSystem) error { _, err := f.nn.Msync(ctx, &dfspb.MsyncRequest{}); return err }, true},
			{"Truncate", func(f *FileSystem) error {
				_, err := f.nn.Truncate(ctx, &dfspb.TruncateRequest{Path: "/a"})
				return err
			}, true},
			{"MoveReplica", func(f *FileSystem) error {
				_, err := f.nn.MoveReplica(ctx, &dfspb.MoveReplicaRequest{BlockId: 1})
				return err
			}, false},
			{"GetFileInfo", func(f *FileSystem) error { _, err := f.Stat(ctx, "/a"); return err }, true},
		} {
			dying, next := startHANN(t, tr, "die", ""), startHANN(t, tr, "active", "")
			err := c.call(haClient(t, tr, dying.addr, next.addr))
			atNext := 0
			switch {
			case c.repeated && err != nil:
				t.Fatalf("a %s whose namenode died after taking it: %v; want it repeated on the next", c.method, err)
			case c.repeated:
				atNext = 1
			case err == nil:
				t.Fatalf("a %s whose namenode died after taking it succeeded; want its error (not repeated)", c.method)
			}
			if dying.count(c.method) != 1 || next.count(c.method) != atNext {
				t.Errorf("%s calls at the dying and the next namenode = %d, %d; want 1, %d", c.method, dying.count(c.method), next.count(c.method), atNext)
			}
		}
	})
}

// A namenode list with a hole or a repeat is refused, naming the entry.
func TestFailoverBadList(t *testing.T) {
	for list, want := range map[string]string{
		"a:1,,b:2":    "entry 2 is empty",
		"a:1,a:1":     "a:1 is named twice",
		"a:1,nopport": `"nopport" is not host:port`,
	} {
		_, err := New(Config{NameNode: list, User: "alice"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("namenode list %q: %v, want an error saying %q", list, err, want)
		}
	}
}

// haClientProbe is haClient with a long RPC timeout and the hung-call
// watch after probe.
func haClientProbe(t *testing.T, transport string, probe time.Duration, addrs ...string) *FileSystem {
	t.Helper()
	return haClientWith(t, Config{RPCTransport: transport, RPCTimeout: 10 * time.Minute, FailoverAttempts: 2,
		FailoverSleepBase: 10 * time.Millisecond, FailoverSleepMax: 50 * time.Millisecond, FailoverProbeAfter: probe}, addrs...)
}

// A call to a namenode that takes it and never answers (frozen) is
// abandoned once another says it is the active at a higher term, and
// repeated there with the same call ids, long before the RPC timeout
// (10 minutes here; the context's 2 minutes only bound the test).
func TestFailoverLeavesHungActive(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		hung, next := startHANN(t, tr, "hang", ""), startHANN(t, tr, "active", "")
		hung.term, next.term = 1, 2
		f := haClientProbe(t, tr, 50*time.Millisecond, hung.addr, next.addr)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := f.Rename(ctx, "/a", "/b"); err != nil {
			t.Fatalf("rename with a hung active and another active at a higher term: %v", err)
		}
		if hung.count("Rename") != 1 || next.count("Rename") != 1 {
			t.Errorf("renames at the hung and the new active = %d, %d; want 1, 1", hung.count("Rename"), next.count("Rename"))
		}
		if a, b := hung.idsOf("Rename")[0], next.idsOf("Rename")[0]; a == "" || a != b {
			t.Errorf("call ids at the hung and the new active: %x, %x; want the same", a, b)
		}
	})
}

// A slow but live active is not abandoned: the others are standbys, or
// one still claims to be the active at a lower term (a deposed active
// that has not learnt of it yet); the call waits for the slow answer.
func TestFailoverKeepsSlowActive(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		slow, stale, sb := startHANN(t, tr, "slow", ""), startHANN(t, tr, "active", ""), startHANN(t, tr, "standby", "")
		slow.term, stale.term, sb.term = 5, 3, 5
		slow.slowFor = time.Second
		f := haClientProbe(t, tr, 50*time.Millisecond, slow.addr, stale.addr, sb.addr)
		if err := f.Rename(context.Background(), "/a", "/b"); err != nil {
			t.Fatalf("rename on a slow active: %v", err)
		}
		if slow.count("Rename") != 1 || stale.count("Rename") != 0 || sb.count("Rename") != 0 {
			t.Errorf("renames at the slow active, the stale one and the standby = %d, %d, %d; want 1, 0, 0",
				slow.count("Rename"), stale.count("Rename"), sb.count("Rename"))
		}
		if slow.count("GetHAStatus") == 0 {
			t.Errorf("the slow call was never watched (no GetHAStatus probe)")
		}
	})
}

// While an election runs (the other member still a standby), a hung
// call's watch asks the others again and again, but the hung member only
// once: waiting for its deadline in every round found a new active up to
// a round late. Once the other says ACTIVE at a higher term, the call
// moves there.
func TestFailoverWatchAsksHungMemberOnce(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		hung, next := startHANN(t, tr, "hang", ""), startHANN(t, tr, "standby", "")
		hung.term, next.term = 1, 1
		f := haClientProbe(t, tr, 50*time.Millisecond, hung.addr, next.addr)
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done <- f.Rename(ctx, "/a", "/b")
		}()
		waitFor(t, "the watch to ask the standby 4 times during the election", func() bool { return next.count("GetHAStatus") >= 4 })
		next.mu.Lock()
		next.role, next.term = "active", 2
		next.mu.Unlock()
		if err := <-done; err != nil {
			t.Fatalf("rename with a hung active and a new active elected meanwhile: %v", err)
		}
		if n := hung.count("GetHAStatus"); n != 1 {
			t.Errorf("the hung member was asked its HA status %d times by one watch; want once", n)
		}
		if next.count("Rename") != 1 {
			t.Errorf("renames at the new active = %d; want 1", next.count("Rename"))
		}
	})
}

// haClientSleep is haClient whose first wait between failover rounds is
// sleep long.
func haClientSleep(t *testing.T, transport string, sleep time.Duration, addrs ...string) *FileSystem {
	t.Helper()
	return haClientWith(t, Config{RPCTransport: transport, RPCTimeout: 10 * time.Second, FailoverAttempts: 3,
		FailoverSleepBase: sleep, FailoverSleepMax: sleep}, addrs...)
}

// After a kill -9 of the active every namenode answers at once (refused,
// or a standby naming no active) and the call waits between rounds. A
// member that becomes the active during that wait is used at once: the
// call succeeds there long before its 10-minute sleep would have ended
// (the context's 30 s only bound the test; a blind sleep fails it).
func TestFailoverWakesWhenActiveElected(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		dead, next := testenv.DeadAddr(t), startHANN(t, tr, "standby", "")
		next.term = 1
		f := haClientSleep(t, tr, 10*time.Minute, dead, next.addr)
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done <- f.Rename(ctx, "/a", "/b")
		}()
		waitFor(t, "the rename to be refused by the standby", func() bool { return next.count("Rename") == 1 })
		next.mu.Lock()
		next.role, next.term = "active", 2 // the election ends
		next.mu.Unlock()
		if err := <-done; err != nil {
			t.Fatalf("rename with a member elected during the wait between rounds: %v", err)
		}
		if next.count("Rename") != 2 {
			t.Errorf("renames at the new active = %d; want 2 (refused as a standby, then served)", next.count("Rename"))
		}
	})
}

// Many calls of one client waiting for an election share one watch of
// the group: a member whose status call hangs has one status call in
// progress, not one per waiting call; and every call goes on at the new
// active once there is one.
func TestFailoverWaitersShareOneWatch(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		dead, next := testenv.DeadAddr(t), startHANN(t, tr, "standby", "")
		next.term, next.hangStatus = 1, true
		f := haClientSleep(t, tr, 10*time.Minute, dead, next.addr)
		const calls = 8
		done := make(chan error, calls)
		for range calls {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				done <- f.Rename(ctx, "/a", "/b")
			}()
		}
		// Each status call hangs until its deadline; the third one starts
		// after two deadlines, with every call long waiting. A rename that
		// ends before the election is a failure said at once.
		for deadline := time.Now().Add(time.Minute); next.count("Rename") != calls || next.count("GetHAStatus") < 3; {
			select {
			case err := <-done:
				t.Fatalf("a rename ended before any member was the active: %v", err)
			case <-time.After(2 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a minute: %d renames refused at the standby (want %d), %d status calls there (want 3 or more)",
					next.count("Rename"), calls, next.count("GetHAStatus"))
			}
		}
		next.mu.Lock()
		most := next.maxInStatus
		next.role, next.term, next.hangStatus = "active", 2, false
		next.mu.Unlock()
		if most != 1 {
			t.Errorf("%d status calls at once at one member with %d calls waiting; want 1 (one shared watch)", most, calls)
		}
		for range calls {
			if err := <-done; err != nil {
				t.Fatalf("rename after the election: %v", err)
			}
		}
	})
}

// A member that says it is the active but refuses calls as a standby (a
// deposed active that has not learnt of it yet) ends a wait between
// rounds only while its term is news: once the client knows that term,
// the call waits out its sleep instead of going round again every probe.
func TestFailoverStaleActiveEndsNoMoreWaits(t *testing.T) {
	forTransports(t, func(t *testing.T, tr string) {
		dead, stale := testenv.DeadAddr(t), startHANN(t, tr, "active", "")
		stale.term, stale.standbyFor = 1, 1<<30
		f := haClientSleep(t, tr, 10*time.Minute, dead, stale.addr)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := f.Rename(ctx, "/a", "/b"); err == nil {
			t.Fatalf("rename served by a member refusing every call")
		}
		if n := stale.count("Rename"); n > 2 {
			t.Errorf("renames at the stale active = %d in 2 s; want at most 2 (one early end of the wait, for its term's news)", n)
		}
	})
}

// TestEveryMethodHasAFailoverClass: each ClientProtocol method is
// idempotent, at most once or not repeated, and only one of them, so a
// method added to the protocol must be classified before it builds
// green. The at-most-once ones need the namenode's retry cache
// (namenode's TestRetryCacheAcrossFailover sends each of them twice).
func TestEveryMethodHasAFailoverClass(t *testing.T) {
	sd := dfspb.ClientProtocol_ServiceDesc
	if len(sd.Methods) == 0 || len(sd.Streams) != 0 {
		t.Fatalf("ClientProtocol has %d methods and %d streams; the failover classes cover unary methods", len(sd.Methods), len(sd.Streams))
	}
	seen := map[string]bool{}
	for _, m := range sd.Methods {
		name := "/" + sd.ServiceName + "/" + m.MethodName
		seen[name] = true
		n := 0
		for _, class := range []map[string]bool{idempotentMethods, atMostOnceMethods, notRepeatedMethods} {
			if class[name] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is in %d of idempotentMethods, atMostOnceMethods and notRepeatedMethods; want exactly 1", name, n)
		}
	}
	for _, class := range []map[string]bool{idempotentMethods, atMostOnceMethods, notRepeatedMethods} {
		for name := range class {
			if !seen[name] {
				t.Errorf("%s is classified but is not a ClientProtocol method", name)
			}
		}
	}
}
