package client

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
)

// obsNN is a namenode of an HA group as observer reads see it: its state
// id (applied) comes back with every reply to a caller that sends one; a
// standby serves getFileInfo only at a state the caller has seen, and
// refuses otherwise; "hang" never answers; without stateful it is a
// namenode from before state ids; with noMsync, one with state ids but
// no msync.
type obsNN struct {
	dfspb.UnimplementedClientProtocolServer
	addr string

	mu       sync.Mutex
	role     string // active, standby, hang
	applied  uint64
	stats    int    // getFileInfo calls served
	refused  int    // getFileInfo calls refused (or, hanging, left unanswered)
	msyncs   int    // msync calls answered
	active   string // the active's address, for refusals
	stateful bool
	noMsync  bool
}

func startObsNN(t *testing.T, role string, stateful bool) *obsNN {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &obsNN{addr: l.Addr().String(), role: role, stateful: stateful}
	opts := ipc.ServerOptions{}
	if stateful {
		opts.ReplyState = func() uint64 { n.mu.Lock(); defer n.mu.Unlock(); return n.applied }
	}
	srv := ipc.NewServer(opts)
	dfspb.RegisterClientProtocolServer(srv, n)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return n
}

func (n *obsNN) Mkdirs(ctx context.Context, r *dfspb.MkdirsRequest) (*dfspb.MkdirsResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.role != "active" {
		return nil, standby.Error(standby.Write, n.active)
	}
	n.applied++
	return &dfspb.MkdirsResponse{}, nil
}

func (n *obsNN) GetFileInfo(ctx context.Context, r *dfspb.GetFileInfoRequest) (*dfspb.GetFileInfoResponse, error) {
	n.mu.Lock()
	role := n.role
	n.mu.Unlock()
	if role == "hang" {
		n.mu.Lock()
		n.refused++ // asked, never answered
		n.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if role == "standby" {
		v := metadata.ValueFromIncomingContext(ctx, ipc.StateKey)
		want, err := strconv.ParseUint(first(v), 10, 64)
		if len(v) == 0 || err != nil || want > n.applied {
			n.refused++
			return nil, standby.Error(standby.Read, n.active)
		}
	}
	n.stats++
	return &dfspb.GetFileInfoResponse{Status: &dfspb.FileStatus{Path: r.GetPath(), Type: dfspb.FileType_DIRECTORY}}, nil
}

// Msync is answered by the active only, as the namenode's.
func (n *obsNN) Msync(ctx context.Context, r *dfspb.MsyncRequest) (*dfspb.MsyncResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.noMsync {
		return n.UnimplementedClientProtocolServer.Msync(ctx, r)
	}
	if n.role != "active" {
		return nil, standby.Error(standby.Read, n.active)
	}
	n.msyncs++
	return &dfspb.MsyncResponse{}, nil
}

func (n *obsNN) counts() (stats, refused int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats, n.refused
}

func (n *obsNN) setApplied(v uint64) { n.mu.Lock(); n.applied = v; n.mu.Unlock() }

// With observer reads a stat goes to a standby that has caught up with
// the client's own mkdir (its state learned from the active's reply); a
// hung standby costs one read observerTimeout and is then skipped; a
// standby behind the client's state refuses, the stat goes to the
// active, and that standby is skipped for a while too.
func TestObserverReadsGoToCaughtUpStandbys(t *testing.T) {
	a := startObsNN(t, "active", true)
	s := startObsNN(t, "standby", true)
	h := startObsNN(t, "hang", true)
	s.active, h.active = a.addr, a.addr
	f := haClientWith(t, Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true}, a.addr, s.addr, h.addr)
	ctx := context.Background()
	if err := f.Mkdir(ctx, "/d", 0o755, true); err != nil {
		t.Fatal(err)
	}
	s.setApplied(1) // the standby has the mkdir
	start := time.Now()
	for range 3 {
		if _, err := f.Stat(ctx, "/d"); err != nil {
			t.Fatalf("stat /d: %v", err)
		}
	}
	took := time.Since(start)
	as, _ := a.counts()
	ss, _ := s.counts()
	_, hung := h.counts()
	// Round robin over the standbys: h (hangs for observerTimeout, the
	// stat goes to the active, h is skipped), then s, and s again.
	if ss != 2 || as != 1 || hung != 1 || took < observerTimeout {
		t.Errorf("stats: standby %d, active %d, hung standby asked %d times, in %v; want 2 on the caught-up standby and 1 on the active after the hung one's %v", ss, as, hung, took, observerTimeout)
	}

	// The active moves on; the standby stays behind: it refuses the
	// client's newer state, and the stat is the active's.
	if err := f.Mkdir(ctx, "/e", 0o755, true); err != nil {
		t.Fatal(err)
	}
	a.setApplied(2)
	if _, err := f.Stat(ctx, "/e"); err != nil {
		t.Fatal(err)
	}
	if ss2, refused := s.counts(); ss2 != 2 || refused != 1 {
		t.Errorf("the lagging standby served %d (want still 2) and refused %d (want 1)", ss2, refused)
	}
	if as2, _ := a.counts(); as2 != 2 {
		t.Errorf("the active served %d stats, want 2", as2)
	}
	// Both standbys are being skipped now: the next stat goes straight to
	// the active, neither standby asked.
	if _, err := f.Stat(ctx, "/e"); err != nil {
		t.Errorf("stat with both standbys skipped: %v", err)
	}
	_, sAsked := s.counts()
	_, hAsked := h.counts()
	if as3, _ := a.counts(); as3 != 3 || sAsked != 1 || hAsked != 1 {
		t.Errorf("the active served %d stats (want 3); the skipped standbys were asked %d and %d times (want 1 each, before)", as3, sAsked, hAsked)
	}
}

// A namenode that answers without a state id (older than observer
// reads) turns them off: the client cannot know what it has seen, so it
// reads from the active only.
func TestObserverReadsOffWithoutStateIDs(t *testing.T) {
	a := startObsNN(t, "active", false)
	s := startObsNN(t, "standby", false)
	s.active = a.addr
	f := haClientWith(t, Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true}, a.addr, s.addr)
	ctx := context.Background()
	if err := f.Mkdir(ctx, "/d", 0o755, true); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := f.Stat(ctx, "/d"); err != nil {
			t.Fatal(err)
		}
	}
	if as, _ := a.counts(); as != 3 {
		t.Errorf("the active served %d stats, want all 3", as)
	}
	if _, refused := s.counts(); refused != 0 {
		t.Errorf("the standby was asked %d times after the active answered without a state id", refused)
	}
}

// A new client has seen nothing, so its first observer read asks the
// active for its state first (msync, HDFS-14272): a standby that has not
// applied what the active had acknowledged (another process's writes)
// refuses, and the read goes to the active, instead of being served
// stale at state 0. Once the standby has caught up it serves. One msync
// serves every later read.
func TestObserverReadsMsyncBeforeTheFirst(t *testing.T) {
	a := startObsNN(t, "active", true)
	s := startObsNN(t, "standby", true)
	s.active = a.addr
	a.setApplied(5) // another client's writes, acknowledged
	s.setApplied(3) // not yet applied here
	f := haClientWith(t, Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true}, a.addr, s.addr)
	ctx := context.Background()
	if _, err := f.Stat(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	if ss, refused := s.counts(); ss != 0 || refused != 1 {
		t.Errorf("the lagging standby served %d and refused %d of a new client's first stat; want 0 and 1", ss, refused)
	}
	if as, _ := a.counts(); as != 1 {
		t.Errorf("the active served %d stats, want 1", as)
	}
	s.setApplied(5)
	time.Sleep(observerSkipRefused) // the refusal's skip
	for range 2 {
		if _, err := f.Stat(ctx, "/d"); err != nil {
			t.Fatal(err)
		}
	}
	if ss, _ := s.counts(); ss != 2 {
		t.Errorf("the caught-up standby served %d stats, want 2", ss)
	}
	msyncs := func() int { a.mu.Lock(); defer a.mu.Unlock(); return a.msyncs }
	if n := msyncs(); n != 1 {
		t.Errorf("the active answered %d msyncs, want 1", n)
	}
	// A new client's first reads, at once: they share one msync.
	f2 := haClientWith(t, Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true}, a.addr, s.addr)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := f2.Stat(ctx, "/d"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := msyncs(); n != 2 {
		t.Errorf("8 first reads of a new client made %d msyncs, want 1", n-1)
	}
}

// A namenode with state ids but no msync (older) turns observer reads
// off: without the active's state a new client could read stale.
func TestObserverReadsOffWithoutMsync(t *testing.T) {
	a := startObsNN(t, "active", true)
	s := startObsNN(t, "standby", true)
	s.active = a.addr
	a.noMsync = true
	f := haClientWith(t, Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true}, a.addr, s.addr)
	for range 3 {
		if _, err := f.Stat(context.Background(), "/d"); err != nil {
			t.Fatal(err)
		}
	}
	if as, _ := a.counts(); as != 3 {
		t.Errorf("the active served %d stats, want all 3", as)
	}
	if _, refused := s.counts(); refused != 0 {
		t.Errorf("the standby was asked %d times with observer reads off", refused)
	}
}

// Msync (HDFS's FileSystem.msync) is how a client sees another client's
// writes with observer reads: before it, a standby that has applied only
// what this client heard of serves the stat (the control: no state id
// asks it to wait for the other client's mkdir); after it, the standby
// refuses and the stat is the active's.
func TestMsyncSeesAnotherClientsWrites(t *testing.T) {
	a := startObsNN(t, "active", true)
	s := startObsNN(t, "standby", true)
	s.active = a.addr
	cfg := Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true}
	reader, writer := haClientWith(t, cfg, a.addr, s.addr), haClientWith(t, cfg, a.addr, s.addr)
	ctx := context.Background()
	if _, err := reader.Stat(ctx, "/d"); err != nil { // its first read: msync, then the standby
		t.Fatal(err)
	}
	if err := writer.Mkdir(ctx, "/e", 0o755, true); err != nil {
		t.Fatal(err) // the active is at 1 now, the standby at 0
	}
	if _, err := reader.Stat(ctx, "/e"); err != nil {
		t.Fatal(err)
	}
	if ss, refused := s.counts(); ss != 2 || refused != 0 {
		t.Fatalf("control: the standby served %d and refused %d; want both stats served (the reader had not heard of the mkdir)", ss, refused)
	}
	if err := reader.Msync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Stat(ctx, "/e"); err != nil {
		t.Fatal(err)
	}
	if ss, refused := s.counts(); ss != 2 || refused != 1 {
		t.Errorf("after msync the standby served %d and refused %d; want the stat refused (it has not applied the mkdir)", ss, refused)
	}
	if as, _ := a.counts(); as != 1 {
		t.Errorf("the active served %d stats, want 1 (the one after msync)", as)
	}
}

// ObserverAutoMsync (HDFS's auto-msync-period): with MsyncEveryRead each
// observer read asks the active first, so a reader sees another
// client's write without calling Msync (the control is
// TestMsyncSeesAnotherClientsWrites: by default it is served stale);
// with a period, reads msync again only once the last one is older than
// that.
func TestObserverReadsAutoMsync(t *testing.T) {
	ctx := context.Background()
	group := func(auto time.Duration) (a, s *obsNN, reader, writer *FileSystem) {
		a, s = startObsNN(t, "active", true), startObsNN(t, "standby", true)
		s.active = a.addr
		cfg := Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second, ObserverReads: true, ObserverAutoMsync: auto}
		return a, s, haClientWith(t, cfg, a.addr, s.addr), haClientWith(t, Config{RPCTransport: TransportIPC, RPCTimeout: 10 * time.Second}, a.addr, s.addr)
	}
	msyncs := func(a *obsNN) int { a.mu.Lock(); defer a.mu.Unlock(); return a.msyncs }

	a, s, reader, writer := group(MsyncEveryRead)
	for range 3 {
		if _, err := reader.Stat(ctx, "/d"); err != nil {
			t.Fatal(err)
		}
	}
	if n := msyncs(a); n != 3 {
		t.Errorf("every-read auto msync: 3 stats made %d msyncs, want 3", n)
	}
	if err := writer.Mkdir(ctx, "/e", 0o755, true); err != nil {
		t.Fatal(err) // the active is at 1 now, the standby at 0
	}
	if _, err := reader.Stat(ctx, "/e"); err != nil {
		t.Fatal(err)
	}
	if ss, refused := s.counts(); ss != 3 || refused != 1 {
		t.Errorf("every-read auto msync: the standby served %d and refused %d; want the stat after another client's mkdir refused", ss, refused)
	}

	a, _, reader, _ = group(time.Hour)
	for range 3 {
		if _, err := reader.Stat(ctx, "/d"); err != nil {
			t.Fatal(err)
		}
	}
	if n := msyncs(a); n != 1 {
		t.Errorf("an hour's auto msync: 3 stats made %d msyncs, want 1", n)
	}

	a, _, reader, _ = group(20 * time.Millisecond)
	if _, err := reader.Stat(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the period has passed, however slow the machine
	if _, err := reader.Stat(ctx, "/d"); err != nil {
		t.Fatal(err)
	}
	if n := msyncs(a); n != 2 {
		t.Errorf("a 20ms auto msync: two stats 50ms apart made %d msyncs, want 2", n)
	}
}

func TestParseAutoMsync(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"-1", 0}, {"0", MsyncEveryRead}, {"500", 500 * time.Millisecond}, {"1m", time.Minute}, {"250ms", 250 * time.Millisecond},
	} {
		if got, err := parseAutoMsync(tc.in); err != nil || got != tc.want {
			t.Errorf("parseAutoMsync(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parseAutoMsync("soon"); err == nil {
		t.Error(`parseAutoMsync("soon") succeeded; want an error`)
	}
}
