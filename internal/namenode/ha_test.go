package namenode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"smarth/internal/daemonconf"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/namenode/replog"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
	"smarth/internal/testenv"
)

// haGroup is a group of namenodes in this process, over loopback with
// TLS (the raft port is mutual TLS with a test CA; the RPC port TLS).
type haGroup struct {
	t    *testing.T
	cfgs []Config
	nns  []*NameNode
	cli  []*rpcClient // acting as the superuser hdfs, one per member
	tls  pki.Config
}

func haCerts(t *testing.T, dir string) pki.Config {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(dir, "ca"), "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue(filepath.Join(dir, "certs"), "nn", []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	caFile, _ := pki.CAFiles(filepath.Join(dir, "ca"))
	return pki.Config{TLS: true, CertFile: cert, KeyFile: key, CAFile: caFile}
}

// startHAGroup starts n members (each config changed by tweaks); the
// first bootstraps the group.
func startHAGroup(t *testing.T, n int, tweaks ...func(*Config)) *haGroup {
	t.Helper()
	g := &haGroup{t: t, tls: haCerts(t, t.TempDir())}
	ports := testenv.RestartablePorts(t, 2*n)
	peers := map[string]daemonconf.NameNodeHAPeer{}
	for i := range n {
		peers[fmt.Sprintf("nn%d", i)] = daemonconf.NameNodeHAPeer{RPC: ports[2*i], Raft: ports[2*i+1]}
	}
	for i := range n {
		cfg := testConfig(t)
		cfg.RPCAddr = ports[2*i]
		cfg.Wire = g.tls
		cfg.HA = daemonconf.NameNodeHA{ID: fmt.Sprintf("nn%d", i), Peers: peers, Bootstrap: i == 0,
			HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond, LeaderLeaseTimeout: 250 * time.Millisecond,
			ObserverReads: true} // as the default config
		for _, tw := range tweaks {
			tw(&cfg)
		}
		g.cfgs = append(g.cfgs, cfg)
		g.nns = append(g.nns, startNN(t, cfg))
		g.cli = append(g.cli, g.dial(ports[2*i], "hdfs"))
	}
	return g
}

func (g *haGroup) dial(addr, user string) *rpcClient {
	g.t.Helper()
	tc, err := g.tls.Client()
	if err != nil {
		g.t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, pki.DialOption(tc))
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { conn.Close() })
	return &rpcClient{conn: conn, cp: dfspb.NewClientProtocolClient(conn), dp: dfspb.NewDatanodeProtocolClient(conn), user: user}
}

// active waits until exactly one live member says ACTIVE (and the others
// STANDBY naming it) and returns its index.
func (g *haGroup) active(closed map[int]bool) int {
	g.t.Helper()
	leader := -1
	waitFor(g.t, "one active namenode, the others standby naming it", func() bool {
		leader = -1
		states := map[int]*dfspb.GetHAStatusResponse{}
		for i, c := range g.cli {
			if closed[i] {
				continue
			}
			st, err := c.cp.GetHAStatus(c.ctx(), &dfspb.GetHAStatusRequest{})
			if err != nil {
				return false
			}
			states[i] = st
			if st.State == dfspb.HAState_ACTIVE {
				if leader >= 0 {
					return false
				}
				leader = i
			}
		}
		if leader < 0 {
			return false
		}
		for _, st := range states {
			if st.ActiveRpcAddress != g.cfgs[leader].RPCAddr {
				return false
			}
		}
		return true
	})
	return leader
}

func (g *haGroup) has(i int, path string) bool {
	nn := g.nns[i]
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	_, err := nn.state.Tree().Lookup(path)
	return err == nil
}

// TestHAStandbyRefusesAndFollows: a mutation acknowledged by the active
// is applied by the standbys; a standby refuses reads and writes with
// HDFS's StandbyException naming the active, and still answers
// GetHAStatus.
func TestHAStandbyRefusesAndFollows(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	f := (l + 1) % 3
	for i := range 5 {
		if _, err := g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: fmt.Sprintf("/d/%d", i), CreateParent: true}); err != nil {
			t.Fatalf("mkdirs on the active: %v", err)
		}
	}
	if _, err := g.cli[l].cp.GetFileInfo(g.cli[l].ctx(), &dfspb.GetFileInfoRequest{Path: "/d/4"}); err != nil {
		t.Fatalf("control: the active serves getFileInfo: %v", err)
	}
	for i := range 3 {
		waitFor(t, fmt.Sprintf("member %d to apply /d/4", i), func() bool { return g.has(i, "/d/4") })
	}
	_, err := g.cli[f].cp.GetFileInfo(g.cli[f].ctx(), &dfspb.GetFileInfoRequest{Path: "/d/4"})
	if active, ok := standby.Is(err); !ok || active != g.cfgs[l].RPCAddr {
		t.Fatalf("getFileInfo on a standby: %v; want a standby refusal naming %s", err, g.cfgs[l].RPCAddr)
	}
	wantErr(t, err, 14 /* Unavailable */, "Operation category READ is not supported in state standby")
	_, err = g.cli[f].cp.Mkdirs(g.cli[f].ctx(), &dfspb.MkdirsRequest{Path: "/x"})
	if active, ok := standby.Is(err); !ok || active != g.cfgs[l].RPCAddr {
		t.Fatalf("mkdirs on a standby: %v; want a standby refusal naming %s", err, g.cfgs[l].RPCAddr)
	}
	wantErr(t, err, 14, "Operation category WRITE is not supported")
	if g.has(f, "/x") {
		t.Fatal("a standby applied a refused mkdirs")
	}
	st, err := g.cli[f].cp.GetHAStatus(g.cli[f].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st.Id != fmt.Sprintf("nn%d", f) || st.State != dfspb.HAState_STANDBY || st.ActiveId != fmt.Sprintf("nn%d", l) ||
		st.Term == 0 || len(st.Peers) != 3 || st.AppliedTxid == 0 {
		t.Fatalf("GetHAStatus on a standby: %v, %v", st, err)
	}
}

// haWriter makes directories in a loop through whichever member is
// active, following a standby's hint (or the next member when the one it
// called is gone or knows no leader), and records what was acknowledged,
// when and by whom.
type haWriter struct {
	mu       sync.Mutex
	acked    []string
	ackedAt  []time.Time
	ackedBy  []int
	failures int
	stop     chan struct{}
	done     chan struct{}
}

func startHAWriter(cli []*rpcClient, addrs []string, cur int) *haWriter {
	w := &haWriter{stop: make(chan struct{}), done: make(chan struct{})}
	byAddr := map[string]int{}
	for i, a := range addrs {
		byAddr[a] = i
	}
	go func() {
		defer close(w.done)
		for n := 0; ; n++ {
			select {
			case <-w.stop:
				return
			default:
			}
			p := fmt.Sprintf("/w/%d", n)
			c := cli[cur]
			_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: p, CreateParent: true})
			w.mu.Lock()
			if err == nil {
				w.acked, w.ackedAt, w.ackedBy = append(w.acked, p), append(w.ackedAt, time.Now()), append(w.ackedBy, cur)
			} else {
				w.failures++
				if a, ok := standby.Is(err); ok && a != "" {
					cur = byAddr[a]
				} else {
					cur = (cur + 1) % len(cli)
				}
			}
			w.mu.Unlock()
			if err != nil {
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	return w
}

func (w *haWriter) count() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.acked) }

// finish stops the writer and returns the time from since to the first
// write acknowledged by a member other than old.
func (w *haWriter) finish(old int, since time.Time) time.Duration {
	close(w.stop)
	<-w.done
	for i, by := range w.ackedBy {
		if by != old {
			return w.ackedAt[i].Sub(since)
		}
	}
	return 0
}

// check demands every acknowledged directory from c.
func (w *haWriter) check(t *testing.T, c *rpcClient) {
	t.Helper()
	for _, p := range w.acked {
		if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: p}); err != nil {
			t.Fatalf("acknowledged mkdir %s lost after the failover: %v", p, err)
		}
	}
}

// TestHAFailoverLosesNoAcknowledgedWrite: a writer creates directories
// through whichever member is active; the active is closed under it;
// another member becomes active at a higher term, and every acknowledged
// mkdir is there.
func TestHAFailoverLosesNoAcknowledgedWrite(t *testing.T) {
	g := startHAGroup(t, 3)
	var addrs []string
	for _, c := range g.cfgs {
		addrs = append(addrs, c.RPCAddr)
	}
	g.failover(addrs, 20, "close", func(l int) {
		if err := g.nns[l].Close(); err != nil {
			t.Logf("close of the old active: %v", err)
		}
	})
}

// failover runs a writer through the active (members at addrs), takes
// the active down with kill after n acknowledged writes, and demands a
// new active at a higher term that acknowledges n more and has every
// acknowledged write. It returns the old and the new active and the new
// one's status.
func (g *haGroup) failover(addrs []string, n int, how string, kill func(active int)) (int, int, *dfspb.GetHAStatusResponse) {
	t := g.t
	t.Helper()
	l := g.active(nil)
	st0, err := g.cli[l].cp.GetHAStatus(g.cli[l].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	w := startHAWriter(g.cli, addrs, l)
	waitFor(t, fmt.Sprintf("%d mkdirs acknowledged before the %s", n, how), func() bool { return w.count() >= n })
	killed := time.Now()
	kill(l)
	before := w.count()
	nl := g.active(map[int]bool{l: true})
	waitFor(t, fmt.Sprintf("%d more mkdirs acknowledged after the %s", n, how), func() bool { return w.count() >= before+n })
	took := w.finish(l, killed)
	st1, err := g.cli[nl].cp.GetHAStatus(g.cli[nl].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st1.Term <= st0.Term {
		t.Fatalf("new active's term %d (err %v); the old one's was %d", st1.GetTerm(), err, st0.GetTerm())
	}
	w.check(t, g.cli[nl])
	t.Logf("%d mkdirs acknowledged, %d refused or failed; old term %d, new %d; first mkdir acknowledged by the new active %v after the %s of the old one began",
		len(w.acked), w.failures, st0.Term, st1.Term, took.Round(time.Millisecond), how)
	return l, nl, st1
}

// TestHAHeartbeatStatusAndFencing: heartbeat replies carry the member's
// state and term; the same queued deletion goes out from the active and
// not from a standby.
func TestHAHeartbeatStatusAndFencing(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	f := (l + 1) % 3
	info := &dfspb.DatanodeInfo{Id: "id-dn1", Hostname: "dn1", IpAddr: "10.0.0.1", DataPort: 20000, IpcPort: 20001, Capacity: 100 << 30, Remaining: 90 << 30}
	dn := map[int]*rpcClient{l: g.dial(g.cfgs[l].RPCAddr, "dn"), f: g.dial(g.cfgs[f].RPCAddr, "dn")}
	var term uint64
	for _, i := range []int{l, f} {
		c := dn[i]
		if _, err := c.dp.RegisterDatanode(c.ctx(), &dfspb.RegisterDatanodeRequest{Datanode: info}); err != nil {
			t.Fatalf("register with member %d: %v", i, err)
		}
		// A replica of a block nobody knows: each member queues its deletion.
		if _, err := c.dp.BlockReceivedAndDeleted(c.ctx(), &dfspb.BlockReceivedAndDeletedRequest{DatanodeId: info.Id,
			Blocks: []*dfspb.ReceivedDeletedBlock{{Block: &dfspb.ExtendedBlock{BlockId: 1 << 40, GenerationStamp: 1}, Status: dfspb.ReceivedStatus_RECEIVED}}}); err != nil {
			t.Fatalf("incremental report to member %d: %v", i, err)
		}
	}
	for _, i := range []int{l, f} {
		c := dn[i]
		resp, err := c.dp.SendHeartbeat(c.ctx(), &dfspb.HeartbeatRequest{DatanodeId: info.Id, Capacity: info.Capacity, Remaining: info.Remaining})
		if err != nil {
			t.Fatalf("heartbeat to member %d: %v", i, err)
		}
		hs := resp.GetHaStatus()
		if hs == nil || hs.Term == 0 {
			t.Fatalf("member %d: heartbeat reply without HA status or term: %v", i, resp)
		}
		if term == 0 {
			term = hs.Term
		} else if hs.Term != term {
			t.Fatalf("terms differ: %d vs %d", term, hs.Term)
		}
		invalidates := 0
		for _, cmd := range resp.Commands {
			if cmd.GetInvalidate() != nil {
				invalidates++
			}
		}
		switch i {
		case l:
			if hs.State != dfspb.HAState_ACTIVE || invalidates != 1 {
				t.Fatalf("active's heartbeat reply: state %v, %d invalidate commands; want ACTIVE and 1 (%v)", hs.State, invalidates, resp)
			}
		case f:
			if hs.State != dfspb.HAState_STANDBY || len(resp.Commands) != 0 {
				t.Fatalf("standby's heartbeat reply: state %v, commands %v; want STANDBY and none", hs.State, resp.Commands)
			}
		}
	}
}

// TestHAConfigChecks: the ha keys are checked in their own words.
func TestHAConfigChecks(t *testing.T) {
	cfg := testConfig(t)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("control: a config without HA: %v", err)
	}
	cfg.HA = daemonconf.NameNodeHA{ID: "a", Peers: map[string]daemonconf.NameNodeHAPeer{"b": {RPC: "127.0.0.1:1", Raft: "nope"}}}
	err := cfg.Validate()
	for _, want := range []string{`does not name this namenode's ha_id "a"`, `b: raft: "nope" is not host:port`, "needs tls: true"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v; want it to say %q", err, want)
		}
	}
	for mode, want := range map[string]string{readsLease: "", readsLinearizable: "", readsLeader: "",
		"leased": `ha_read_consistency: "leased" is not linearizable, lease or leader`} {
		cfg.HA.ReadConsistency = mode
		err := cfg.Validate()
		if got := err != nil && strings.Contains(err.Error(), "ha_read_consistency"); got != (want != "") || (got && !strings.Contains(err.Error(), want)) {
			t.Errorf("validate ha_read_consistency %q: %v; want %q", mode, err, want)
		}
	}
	cfg.HA.ReadConsistency = ""
	for _, k := range []struct {
		key   string
		field *string
		modes map[string]string
	}{
		{"ha_group_commit", &cfg.HA.GroupCommit, map[string]string{"": "", groupCommitGather: "", groupCommitPlain: "",
			"batch": `ha_group_commit: "batch" is not gather or plain`}},
		{"ha_leader_store", &cfg.HA.LeaderStore, map[string]string{"": "", leaderStoreParallel: "", leaderStoreSerial: "",
			"async": `ha_leader_store: "async" is not parallel or serial`}},
		{"ha_batch_overlap", &cfg.HA.BatchOverlap, map[string]string{"": "", batchOverlapSmall: "", batchOverlapAlways: "",
			"never": `ha_batch_overlap: "never" is not small or always`}},
	} {
		for mode, want := range k.modes {
			*k.field = mode
			err := cfg.Validate()
			if got := err != nil && strings.Contains(err.Error(), k.key); got != (want != "") || (got && !strings.Contains(err.Error(), want)) {
				t.Errorf("validate %s %q: %v; want %q", k.key, mode, err, want)
			}
		}
		*k.field = ""
	}
	if gatherWait("") != replog.DefaultGatherWait || gatherWait(groupCommitGather) != replog.DefaultGatherWait || gatherWait(groupCommitPlain) != 0 {
		t.Errorf("gatherWait: default %v, gather %v, plain %v; want %v, %v, 0", gatherWait(""), gatherWait(groupCommitGather),
			gatherWait(groupCommitPlain), replog.DefaultGatherWait, replog.DefaultGatherWait)
	}
	if overlapBelow("") != replog.DefaultOverlapBelow || overlapBelow(batchOverlapSmall) != replog.DefaultOverlapBelow || overlapBelow(batchOverlapAlways) >= 0 {
		t.Errorf("overlapBelow: default %d, small %d, always %d; want %d, %d, negative", overlapBelow(""), overlapBelow(batchOverlapSmall),
			overlapBelow(batchOverlapAlways), replog.DefaultOverlapBelow, replog.DefaultOverlapBelow)
	}
}

// TestHAStandbyThatCannotApplyTerminates: a standby whose namespace can
// no longer follow the group's log (here /d is taken from its memory
// behind the log's back, so the replay of mkdir /d/e fails) reports a
// fatal error and refuses to answer as a standby, rather than stay a
// voter that could win an election it can never serve (a chaos run's
// group went minutes without an active so). The other standby, which
// applies the edit, goes on.
func TestHAStandbyThatCannotApplyTerminates(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	c := g.cli[l]
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/d"}); err != nil {
		t.Fatal(err)
	}
	var bad, good int
	for i := range g.nns {
		if i != l {
			bad, good = good, i
		}
	}
	waitFor(t, "every member to have /d", func() bool { return g.has(bad, "/d") && g.has(good, "/d") })
	nn := g.nns[bad]
	nn.mu.Lock()
	_, err := nn.state.Apply(&fsstate.Delete{Path: "/d", Recursive: true}, namespace.Caller{Trusted: true})
	nn.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/d/e"}); err != nil {
		t.Fatal(err)
	}
	select {
	case ferr := <-g.nns[bad].Fatal():
		if !strings.Contains(ferr.Error(), "cannot follow its HA group's log") {
			t.Fatalf("fatal error %v; want it to say the state cannot follow the log", ferr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a standby that could not replay mkdir /d/e reported no fatal error within 10 s")
	}
	bc := g.cli[bad]
	if st, err := bc.cp.GetHAStatus(bc.ctx(), &dfspb.GetHAStatusRequest{}); err == nil || !strings.Contains(err.Error(), "is terminating") {
		t.Fatalf("the stopped standby says %v (%v); want an error saying it is terminating", st.GetState(), err)
	}
	waitFor(t, "the other standby to apply /d/e", func() bool { return g.has(good, "/d/e") })
	select {
	case ferr := <-g.nns[good].Fatal():
		t.Fatalf("the standby that applied /d/e reported a fatal error: %v", ferr)
	default:
	}
}

// TestHAActiveWithoutMajority: an active whose followers are gone cannot
// acknowledge a mutation; it steps down, and since its memory now holds
// an edit the group may never have, it reports a fatal error (the daemon
// exits and reloads from the group) and no longer answers as a standby.
func TestHAActiveWithoutMajority(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	c := g.cli[l]
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/before"}); err != nil {
		t.Fatalf("control: mkdirs with a majority: %v", err)
	}
	select {
	case err := <-g.nns[l].Fatal():
		t.Fatalf("control: fatal error with a majority: %v", err)
	default:
	}
	for i := range g.nns {
		if i != l {
			g.nns[i].Close()
		}
	}
	_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/alone"})
	if err == nil {
		t.Fatal("an active without a majority acknowledged mkdirs /alone")
	}
	if _, ok := standby.Is(err); !ok {
		t.Logf("refusal: %v", err)
	}
	select {
	case ferr := <-g.nns[l].Fatal():
		t.Logf("fatal: %v", ferr)
	case <-time.After(10 * time.Second):
		t.Fatal("the deposed active with an unacknowledged edit in memory reported no fatal error")
	}
	// It is about to exit: it must not answer as a standby, or a tool
	// (smarth chaos's awaitResumed) takes it for a member that rejoined.
	st, err := c.cp.GetHAStatus(c.ctx(), &dfspb.GetHAStatusRequest{})
	if err == nil || !strings.Contains(err.Error(), "is terminating") {
		t.Fatalf("the deposed active about to exit says %v (%v); want an error saying it is terminating", st.GetState(), err)
	}
}

// TestHAMemberRejoins: a standby restarted with its whole meta_dir
// deleted, and the member that bootstrapped the group restarted with its
// own, both catch up from the active (snapshot and log) with every edit,
// those made while they were down included.
func TestHAMemberRejoins(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	if l == 0 { // the bootstrap member must be one that restarts
		if err := g.nns[0].ha.log.TransferLeadership(context.Background(), "nn1"); err != nil {
			t.Fatalf("transfer leadership to nn1: %v", err)
		}
		if l = g.active(nil); l == 0 {
			t.Fatal("nn0 is still active after a transfer")
		}
	}
	mkdir := func(p string) {
		t.Helper()
		c := g.cli[l]
		if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: p, CreateParent: true}); err != nil {
			t.Fatalf("mkdirs %s: %v", p, err)
		}
	}
	mkdir("/early")
	// /early is in the active's snapshot, and its log behind the snapshot
	// is what a member without state cannot be sent: it installs the
	// snapshot (the namespace image).
	if err := g.nns[l].ha.log.Snapshot(context.Background()); err != nil {
		t.Fatalf("snapshot on the active: %v", err)
	}
	var down []int
	for i := range g.nns {
		if i != l {
			down = append(down, i)
		}
	}
	// One at a time, so that the group keeps its majority.
	for _, i := range down {
		g.nns[i].Close()
		wiped := i != 0 // nn0 bootstrapped the group: it restarts with its meta_dir
		if wiped {
			if err := os.RemoveAll(g.cfgs[i].MetaDir); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(g.cfgs[i].MetaDir, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		p := fmt.Sprintf("/while-down/%d", i)
		mkdir(p)
		if g.has(i, p) {
			t.Fatalf("control: closed member %d has %s", i, p)
		}
		g.nns[i] = startNN(t, g.cfgs[i])
		for _, want := range []string{"/early", p} {
			waitFor(t, fmt.Sprintf("member %d (meta_dir wiped: %v) to have %s", i, wiped, want), func() bool { return g.has(i, want) })
		}
	}
	if got := g.active(nil); got != l {
		t.Fatalf("the active moved from %d to %d while standbys restarted", l, got)
	}
}

// TestHANewActiveTakesOverOpenFiles: files open on the old active stay
// open through a failover: their writer completes one on the new active,
// and the new active recovers the other, whose writer is silent past the
// hard limit (leases are rebuilt on takeover, as after a restart).
func TestHANewActiveTakesOverOpenFiles(t *testing.T) {
	g := startHAGroup(t, 3, func(c *Config) { c.LeaseSoftLimit, c.LeaseHardLimit = 500*time.Millisecond, time.Second })
	l := g.active(nil)
	c := g.cli[l]
	files := map[string]uint64{}
	for _, p := range []string{"/open/kept", "/open/orphan"} {
		r, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: p, ClientName: "writer-" + filepath.Base(p), CreateParent: true, Replication: 1})
		if err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		files[p] = r.GetStatus().GetFileId()
	}
	for i := range g.nns {
		waitFor(t, fmt.Sprintf("member %d to have /open/orphan", i), func() bool { return g.has(i, "/open/orphan") })
	}
	g.nns[l].Close()
	nl := g.active(map[int]bool{l: true})
	c = g.cli[nl]
	r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/open/kept", ClientName: "writer-kept", FileId: files["/open/kept"]})
	if err != nil || !r.GetCompleted() {
		t.Fatalf("complete of a file opened on the old active, on the new one: %v, %v", r, err)
	}
	waitFor(t, "the new active to recover /open/orphan (its writer silent past the hard limit)", func() bool {
		fi, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/open/orphan"})
		return err == nil && !fi.GetStatus().GetUnderConstruction()
	})
}

// TestHAStandbyRefusesWebHDFS: WebHDFS on a standby answers Hadoop's
// StandbyException (403) naming the active, as its RPC port does; the
// active serves the same request.
func TestHAStandbyRefusesWebHDFS(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	f := (l + 1) % 3
	tc, err := g.tls.Client()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}
	get := func(i int) (int, string) {
		t.Helper()
		resp, err := hc.Get("https://" + g.nns[i].HTTPAddr() + "/webhdfs/v1/?op=GETFILESTATUS&user.name=hdfs")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(l); code != http.StatusOK {
		t.Fatalf("control: GETFILESTATUS on the active: %d %s", code, body)
	}
	code, body := get(f)
	for _, want := range []string{`"exception":"StandbyException"`, `"javaClassName":"org.apache.hadoop.ipc.StandbyException"`,
		"Operation category READ is not supported in state standby", g.cfgs[l].RPCAddr} {
		if code != http.StatusForbidden || !strings.Contains(body, want) {
			t.Fatalf("GETFILESTATUS on a standby: %d %s; want 403 with %s", code, body, want)
		}
	}
}

// TestHASafeModeStandbyAsksAgain: an HA member in safe mode that got a
// full block report with replicas of blocks it does not know (a member
// still applying its log after a restart) asks for another at the next
// heartbeat; with every replica known, it does not.
func TestHASafeModeStandbyAsksAgain(t *testing.T) {
	// A long extension: the safe-mode monitor must not take the standby
	// out of the safe mode the test puts it in (no blocks: the threshold
	// is met at once) before its report arrives.
	g := startHAGroup(t, 3, func(c *Config) { c.SafeModeExtension = time.Hour })
	l := g.active(nil)
	f := (l + 1) % 3
	// The standby must be past its start (a snapshot install restarts
	// its safe mode) before the test puts it in safe mode.
	if _, err := g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: "/caught-up", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the standby to apply /caught-up", func() bool { return g.has(f, "/caught-up") })
	g.nns[f].mu.Lock()
	g.nns[f].safe = safeMode{on: true}
	g.nns[f].mu.Unlock()
	c := g.dial(g.cfgs[f].RPCAddr, "dn")
	info := &dfspb.DatanodeInfo{Id: "id-dn1", Hostname: "dn1", IpAddr: "10.0.0.1", DataPort: 20000, IpcPort: 20001, Capacity: 100 << 30, Remaining: 90 << 30}
	if _, err := c.dp.RegisterDatanode(c.ctx(), &dfspb.RegisterDatanodeRequest{Datanode: info}); err != nil {
		t.Fatal(err)
	}
	asked := func(blocks []*dfspb.ReportedBlock) bool {
		t.Helper()
		if _, err := c.dp.BlockReport(c.ctx(), &dfspb.BlockReportRequest{DatanodeId: info.Id, Blocks: blocks}); err != nil {
			t.Fatal(err)
		}
		resp, err := c.dp.SendHeartbeat(c.ctx(), &dfspb.HeartbeatRequest{DatanodeId: info.Id, Capacity: info.Capacity, Remaining: info.Remaining})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetFullBlockReportRequested()
	}
	unknown := []*dfspb.ReportedBlock{{Block: &dfspb.ExtendedBlock{BlockId: 1 << 40, GenerationStamp: 1, NumBytes: 10}}}
	if !asked(unknown) {
		t.Fatal("a standby in safe mode took a report of unknown replicas as the datanode's report: it will not ask again")
	}
	if asked(nil) {
		t.Fatal("a report with every replica known was asked for again")
	}
}
