package namenode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/sigstop"
)

// TestHAHungActiveCreateLoop freezes the active namenode process with
// SIGSTOP under a client creating files in a loop through the group, ten
// times (HA_HUNG_TRIALS), and measures each failover: from the SIGSTOP
// to the first create the client has acknowledged that a member other
// than the frozen one applied (its file's time is after the freeze). The
// client (internal/client's failover, its default FailoverProbeAfter
// unless HA_PROBE_AFTER says otherwise; negative: never leave a silent
// namenode) must ride through every freeze: no create fails, none
// reports "already exists" (a create repeated on the new active after
// the frozen one had applied it is answered by the retry cache), and
// every acknowledged create is there at the end, once. The times are
// printed (p50, p99, max), not asserted.
func TestHAHungActiveCreateLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes and freezes the active ten times")
	}
	trials := 10
	if v, err := strconv.Atoi(os.Getenv("HA_HUNG_TRIALS")); err == nil && v > 0 {
		trials = v
	}
	var probe time.Duration
	if v, err := time.ParseDuration(os.Getenv("HA_PROBE_AFTER")); err == nil {
		probe = v
	}
	g := startHAProcs(t)
	tc, err := g.tls.Client()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := client.New(client.Config{NameNode: strings.Join(g.addrs, ","), User: "hdfs", TLS: tc,
		RPCTimeout: 20 * time.Second, FailoverProbeAfter: probe})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	nn := fs.Namenode()

	type ack struct {
		path  string
		at    time.Time
		mtime int64
	}
	var (
		mu    sync.Mutex
		acked []ack
		errs  []error
	)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			p := fmt.Sprintf("/loop/f%d", n)
			r, err := nn.Create(context.Background(), &dfspb.CreateRequest{Path: p, ClientName: fs.ClientName(), CreateParent: true, Replication: 1})
			mu.Lock()
			if err != nil {
				errs = append(errs, fmt.Errorf("create %s: %w", p, err))
			} else {
				acked = append(acked, ack{p, time.Now(), r.GetStatus().GetModificationTimeMs()})
			}
			mu.Unlock()
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }

	var took []time.Duration
	restarts, started := 0, 0
	// revive starts again a member that exited, as a service manager
	// would: a resumed old active that held an edit the group never
	// committed exits to reload (it may first answer as a standby).
	revive := func() {
		for i, p := range g.procs {
			select {
			case <-p.exited:
				restarts, started = restarts+1, started+1
				g.procs[i] = startNNProcess(t, g.bin, g.configs[i], g.dir, 10+started)
			default:
			}
		}
	}
	// settle waits for every member to be running, one of them active
	// and the others standbys naming it.
	settle := func() int {
		leader := -1
		waitLong(t, "every member running, one active and the others standbys naming it", func() bool {
			revive()
			leader = -1
			var named []string
			for i, c := range g.cli {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				st, err := c.cp.GetHAStatus(metadataCtx(ctx, c), &dfspb.GetHAStatusRequest{})
				cancel()
				if err != nil {
					return false
				}
				if st.State == dfspb.HAState_ACTIVE {
					if leader >= 0 {
						return false
					}
					leader = i
				}
				named = append(named, st.ActiveRpcAddress)
			}
			return leader >= 0 && !slices.ContainsFunc(named, func(a string) bool { return a != g.addrs[leader] })
		})
		return leader
	}
	for trial := range trials {
		l := settle()
		before := count()
		waitFor(t, "20 more creates acknowledged before the freeze", func() bool { return count() >= before+20 })
		// The freeze counts from when every thread of the active is
		// stopped: until then it may serve creates itself.
		frozenAt, err := sigstop.Stop(g.procs[l].cmd.Process.Pid, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var first time.Duration
		waitLong(t, fmt.Sprintf("trial %d: a create applied after the freeze of %s acknowledged", trial, g.addrs[l]), func() bool {
			revive() // a member that answered as a standby and then exited
			mu.Lock()
			defer mu.Unlock()
			for _, a := range acked[before:] {
				if a.mtime > frozenAt.UnixMilli() { // mtimes are whole milliseconds
					first = a.at.Sub(frozenAt)
					return true
				}
			}
			return false
		})
		took = append(took, first)
		t.Logf("trial %d: froze the active %s; first create applied by another member acknowledged after %v",
			trial, g.addrs[l], first.Round(time.Millisecond))
		g.procs[l].cmd.Process.Signal(syscall.SIGCONT)
	}
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	for _, err := range errs {
		t.Errorf("the client did not ride through a freeze: %v", err)
	}
	ls, err := nn.GetListing(context.Background(), &dfspb.GetListingRequest{Path: "/loop"})
	for err == nil && ls.GetRemaining() > 0 {
		var more *dfspb.GetListingResponse
		more, err = nn.GetListing(context.Background(), &dfspb.GetListingRequest{Path: "/loop", StartAfter: base(ls.Entries[len(ls.Entries)-1].GetPath())})
		if err == nil {
			ls.Entries = append(ls.Entries, more.Entries...)
			ls.Remaining = more.Remaining
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]int{}
	for _, e := range ls.GetEntries() {
		have[base(e.GetPath())]++
	}
	for _, a := range acked {
		if n := have[a.path[len("/loop/"):]]; n != 1 {
			t.Errorf("acknowledged create %s: %d entries in /loop, want 1", a.path, n)
		}
	}
	// A resumed old active whose memory may hold an edit the group never
	// committed restarts itself in place (smarth namenode --self-restart,
	// the default); none should have had to be started again.
	if restarts > 0 {
		t.Errorf("%d members exited instead of restarting themselves in place", restarts)
	}
	selfRestarts := 0
	logs, _ := filepath.Glob(filepath.Join(g.dir, "nn-*.log"))
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		selfRestarts += bytes.Count(b, []byte("namenode restarting itself"))
	}
	slices.Sort(took)
	pct := func(p float64) time.Duration {
		return took[min(len(took)-1, int(p*float64(len(took))))].Round(time.Millisecond)
	}
	t.Logf("%d freezes of the active (%d of them restarted themselves on resume), %d creates acknowledged, %d failed: first acknowledged create through the new active after p50 %v, p99 %v, max %v (client FailoverProbeAfter %v, 0: the default)",
		trials, selfRestarts, len(acked), len(errs), pct(0.5), pct(0.99), took[len(took)-1].Round(time.Millisecond), probe)
}

func base(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// metadataCtx is ctx with c's identity (c.ctx() with another deadline).
func metadataCtx(ctx context.Context, c *rpcClient) context.Context {
	md, _ := metadata.FromOutgoingContext(c.ctx())
	return metadata.NewOutgoingContext(ctx, md)
}

// waitLong is waitFor with a minute's deadline: a failover with the
// client's watch off waits its whole RPC timeout (20 s here), and
// restarts on a loaded machine take their time.
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after a minute waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
