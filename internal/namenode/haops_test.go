package namenode

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
)

// admin runs the group's smarth binary as `smarth admin --namenode addr
// --user user ARGS...`, trusting the group's CA and nothing of this
// machine's (its own home, no token file), and returns the exit code and
// what it printed on stdout and stderr.
func (g *haProcs) admin(addr, user string, args ...string) (int, string, string) {
	g.t.Helper()
	cmd := exec.Command(g.bin, append([]string{"admin", "--namenode", addr, "--user", user}, args...)...)
	home := filepath.Join(g.dir, "admin-home")
	cmd.Env = append(os.Environ(), "SMARTH_TLS_CA_FILE="+g.tls.CAFile, "SMARTH_HOME="+home, "HOME="+home, "SMARTH_TOKEN_FILE=", "SMARTH_NAMENODE=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		g.t.Fatalf("smarth admin %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// wantAdmin runs admin and demands exit code code with want in its
// output (stdout for 0, stderr otherwise).
func (g *haProcs) wantAdmin(code int, want string, addr, user string, args ...string) string {
	g.t.Helper()
	c, out, errOut := g.admin(addr, user, args...)
	got := out
	if code != 0 {
		got = errOut
	}
	if c != code || !strings.Contains(got, want) {
		g.t.Fatalf("smarth admin %s: exit %d, stdout %q, stderr %q; want exit %d with %q", strings.Join(args, " "), c, out, errOut, code, want)
	}
	return got
}

func nnID(i int) string { return fmt.Sprintf("nn%d", i) }

// transferred waits for the group to settle after a transfer-leader whose
// answer said member to became active at term, and returns the active.
// That is to, unless a later election (a higher term: on a loaded host a
// new leader can miss its first heartbeats) moved the role on, which is
// logged: the transfer itself is proven by the answer's term, learned
// from to's own heartbeat.
func (g *haGroup) transferred(to int, term uint64) int {
	g.t.Helper()
	nl := g.active(nil)
	if nl == to {
		return nl
	}
	st, err := g.cli[nl].cp.GetHAStatus(g.cli[nl].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st.Term <= term {
		g.t.Fatalf("transfer-leader said %s became active at term %d, but %s is active at term %d (%v)", nnID(to), term, nnID(nl), st.GetTerm(), err)
	}
	g.t.Logf("transfer-leader made %s active at term %d; a later election made %s active at term %d", nnID(to), term, nnID(nl), st.Term)
	return nl
}

// TestHAAdminTransferLeader: `smarth admin ha transfer-leader` sent to a
// standby goes to the active, which hands its role to the named member
// under a writer: that member becomes active at a higher term, the old
// active refuses writes naming it and keeps running (nothing it took was
// left uncommitted), and the writer goes on with every acknowledged
// mkdir kept. Each refusal names the member at fault and changes
// nothing: an unknown id, the active itself, removing the active, adding
// an id or a raft address already there, bad usage, and a user who is
// not the superuser.
func TestHAAdminTransferLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes")
	}
	g := startHAProcs(t)
	l := g.active(nil)
	to, other := (l+1)%3, (l+2)%3
	st0, err := g.cli[l].cp.GetHAStatus(g.cli[l].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	w := startHAWriter(g.cli, g.addrs, l)
	waitFor(t, "20 mkdirs acknowledged before the transfer", func() bool { return w.count() >= 20 })
	out := g.wantAdmin(0, fmt.Sprintf("Failover from %s to %s successful", nnID(l), nnID(to)), g.addrs[other], "hdfs", "ha", "transfer-leader", nnID(to))
	t.Logf("transfer-leader: %s", out)
	var term uint64
	if _, err := fmt.Sscanf(out[strings.Index(out, "term "):], "term %d", &term); err != nil {
		t.Fatalf("transfer-leader's output %q: no term: %v", out, err)
	}
	to = g.transferred(to, term)
	before := w.count()
	waitFor(t, "20 more mkdirs acknowledged after the transfer", func() bool { return w.count() >= before+20 })
	w.finish(l, time.Now())
	w.check(t, g.cli[to])
	st1, err := g.cli[to].cp.GetHAStatus(g.cli[to].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st1.Term <= st0.Term {
		t.Fatalf("new active's term %d (%v); the old one's was %d", st1.GetTerm(), err, st0.Term)
	}
	if to != l { // (a later election may have given the role back)
		_, err = g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: "/on-the-old-active"})
		if a, ok := standby.Is(err); !ok || a != g.addrs[to] {
			t.Fatalf("mkdirs on the old active: %v; want a standby refusal naming %s", err, g.addrs[to])
		}
	}
	select {
	case <-g.procs[l].exited:
		t.Fatalf("the old active exited after a planned transfer: %v", g.procs[l].cmd.ProcessState)
	default:
	}

	// Refusals, each naming the member, sent to the new active.
	a := g.addrs[to]
	g.wantAdmin(1, "nn9 is not a member of the HA group (members: nn0, nn1, nn2)", a, "hdfs", "ha", "transfer-leader", "nn9")
	g.wantAdmin(1, nnID(to)+" is already the active namenode", a, "hdfs", "ha", "transfer-leader", nnID(to))
	g.wantAdmin(1, nnID(to)+" is the active namenode; make another member active first", a, "hdfs", "ha", "remove", nnID(to))
	g.wantAdmin(1, nnID(l)+" is already a member of the HA group (raft address "+g.raft[l]+")", a, "hdfs", "ha", "add", nnID(l), "127.0.0.1:1", "127.0.0.1:2")
	g.wantAdmin(1, "raft address "+g.raft[other]+" is already member "+nnID(other)+"'s", a, "hdfs", "ha", "add", "nn7", g.raft[other], "127.0.0.1:2")
	g.wantAdmin(1, `nn7: rpc address "nope" is not host:port`, a, "hdfs", "ha", "add", "nn7", "127.0.0.1:1", "nope")
	g.wantAdmin(1, "nn9 is not a member of the HA group", a, "hdfs", "ha", "remove", "nn9")
	g.wantAdmin(2, "needs 3 or 4 arguments", a, "hdfs", "ha", "add", "nn7", "127.0.0.1:1")
	for _, args := range [][]string{{"transfer-leader", nnID(l)}, {"remove", nnID(other)}, {"add", "nn7", "127.0.0.1:1", "127.0.0.1:2"}} {
		g.wantAdmin(1, "Access denied for user alice. Superuser privilege is required", a, "alice", append([]string{"ha"}, args...)...)
	}
	st2, err := g.cli[to].cp.GetHAStatus(g.cli[to].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st2.State != dfspb.HAState_ACTIVE || len(st2.Peers) != 3 || st2.Term != st1.Term {
		t.Fatalf("after the refusals: %v (%v); want %s still active at term %d with 3 members", st2, err, nnID(to), st1.Term)
	}
}

// TestHAAdminRemoveAndAddBack: with one follower killed, removing the
// other is refused (the two left would have no majority that answers);
// removing the dead one is not. Added back with its meta_dir wiped and
// restarted, it catches up from the active (snapshot and log) and serves
// as a standby naming the active, with the edits made while it was out.
func TestHAAdminRemoveAndAddBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes")
	}
	g := startHAProcs(t)
	l := g.active(nil)
	up, gone := (l+1)%3, (l+2)%3
	a := g.addrs[l]
	mkdir := func(p string) {
		t.Helper()
		if _, err := g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: p, CreateParent: true}); err != nil {
			t.Fatalf("mkdirs %s on the active: %v", p, err)
		}
	}
	mkdir("/before")
	if err := g.procs[gone].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-g.procs[gone].exited
	// transfer-leader to the dead member is refused by the same test of
	// "answers the active" that guards the majority, and changes nothing.
	waitFor(t, "the active to see "+nnID(gone)+" as not answering (transfer-leader refused)", func() bool {
		c, _, e := g.admin(a, "hdfs", "ha", "transfer-leader", nnID(gone))
		return c == 1 && strings.Contains(e, nnID(gone)+" has not answered the active within")
	})
	g.wantAdmin(1, fmt.Sprintf("remove %s: the group would have 2 members and need 2 of them for a majority, but only 1 answer the active", nnID(up)),
		a, "hdfs", "ha", "remove", nnID(up))
	g.wantAdmin(0, "Removed "+nnID(gone)+" from the HA group", a, "hdfs", "ha", "remove", nnID(gone))
	st, err := g.cli[l].cp.GetHAStatus(g.cli[l].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || len(st.Peers) != 2 {
		t.Fatalf("status after remove: %v (%v); want 2 members", st.GetPeers(), err)
	}
	for _, p := range st.Peers {
		if p.Id == nnID(gone) {
			t.Fatalf("status after remove still lists %s: %v", nnID(gone), st.Peers)
		}
	}
	mkdir("/while-out") // the group of two commits with both

	meta := filepath.Join(g.dir, fmt.Sprintf("meta%d", gone))
	if err := os.RemoveAll(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(meta, 0o700); err != nil {
		t.Fatal(err)
	}
	out := g.wantAdmin(0, "Added "+nnID(gone), a, "hdfs", "ha", "add", nnID(gone), g.raft[gone], g.addrs[gone])
	if !strings.Contains(out, "members: nn0, nn1, nn2") || !strings.Contains(out, "only through configuration") {
		t.Fatalf("add's output: %q; want the members and the configuration note", out)
	}
	g.procs[gone] = startNNProcess(t, g.bin, g.configs[gone], g.dir, 3+gone)
	mkdir("/after-add")
	ast, err := g.cli[l].cp.GetHAStatus(g.cli[l].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("the re-added %s to be a standby of %s at txid %d", nnID(gone), a, ast.AppliedTxid), func() bool {
		st, err := g.cli[gone].cp.GetHAStatus(g.cli[gone].ctx(), &dfspb.GetHAStatusRequest{})
		return err == nil && st.State == dfspb.HAState_STANDBY && st.ActiveRpcAddress == a && st.AppliedTxid >= ast.AppliedTxid
	})
	_, err = g.cli[gone].cp.Mkdirs(g.cli[gone].ctx(), &dfspb.MkdirsRequest{Path: "/on-the-re-added"})
	if act, ok := standby.Is(err); !ok || act != a {
		t.Fatalf("mkdirs on the re-added member: %v; want a standby refusal naming %s", err, a)
	}
	// It votes: with the other follower gone, the active still commits.
	if err := g.procs[up].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-g.procs[up].exited
	mkdir("/with-the-re-added-only")
}

// TestHAOpsAuthorizedOverBothTransports: the HA operations are the
// superuser's on gRPC and IPC alike (one authorization point); a standby
// refuses them naming the active; the superuser's transfer over IPC
// moves the active role; a namenode without HA says it has no group.
func TestHAOpsAuthorizedOverBothTransports(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	f := (l + 1) % 3
	tc, err := g.tls.Client()
	if err != nil {
		t.Fatal(err)
	}
	overIPC := func(i int, user string) *rpcClient {
		ic := ipc.NewConn(g.cfgs[i].RPCAddr, ipc.ClientOptions{TLS: tc})
		t.Cleanup(func() { ic.Close() })
		return &rpcClient{cp: dfspb.NewClientProtocolClient(ic), user: user}
	}
	for name, c := range map[string]*rpcClient{"grpc": g.dial(g.cfgs[l].RPCAddr, "alice"), "ipc": overIPC(l, "alice")} {
		t.Run(name, func(t *testing.T) {
			const denied = "Access denied for user alice. Superuser privilege is required"
			_, err := c.cp.TransferHALeader(c.ctx(), &dfspb.TransferHALeaderRequest{Id: nnID(f)})
			wantErr(t, err, codes.PermissionDenied, denied)
			_, err = c.cp.AddHAMember(c.ctx(), &dfspb.AddHAMemberRequest{Id: "nn7", RaftAddress: "127.0.0.1:1", RpcAddress: "127.0.0.1:2"})
			wantErr(t, err, codes.PermissionDenied, denied)
			_, err = c.cp.RemoveHAMember(c.ctx(), &dfspb.RemoveHAMemberRequest{Id: nnID(f)})
			wantErr(t, err, codes.PermissionDenied, denied)
		})
	}
	if got := g.active(nil); got != l {
		t.Fatalf("the active moved from %s to %s on refused calls", nnID(l), nnID(got))
	}
	c := overIPC(f, "hdfs")
	_, err = c.cp.RemoveHAMember(c.ctx(), &dfspb.RemoveHAMemberRequest{Id: nnID(l)})
	if a, ok := standby.Is(err); !ok || a != g.cfgs[l].RPCAddr {
		t.Fatalf("remove on a standby: %v; want a standby refusal naming %s", err, g.cfgs[l].RPCAddr)
	}
	c = overIPC(l, "hdfs")
	resp, err := c.cp.TransferHALeader(c.ctx(), &dfspb.TransferHALeaderRequest{Id: nnID(f)})
	if err != nil || resp.ActiveId != nnID(f) || resp.ActiveRpcAddress != g.cfgs[f].RPCAddr {
		t.Fatalf("transfer-leader to %s over IPC: %v, %v", nnID(f), resp, err)
	}
	g.transferred(f, resp.Term)
	single := startNN(t, testConfig(t))
	sc := dial(t, single.Addr(), "hdfs")
	_, err = sc.cp.TransferHALeader(sc.ctx(), &dfspb.TransferHALeaderRequest{Id: "nn1"})
	wantErr(t, err, codes.FailedPrecondition, "transfer-leader: this namenode is not a member of an HA group")
}

// metricValue reads one series' value from Prometheus text.
func metricValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestHAMetricsAndConsole: the active exports its state and each
// follower's lag, which grows while a follower is down (by at least the
// edits made meanwhile) and returns to 0 once it is back; a standby
// exports its own state only; both consoles show the group. A namenode
// without HA shows none of it.
func TestHAMetricsAndConsole(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	up, down := (l+1)%3, (l+2)%3
	tc, err := g.tls.Client()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}
	get := func(scheme, addr, path string) string {
		t.Helper()
		c := hc
		if scheme == "http" {
			c = &http.Client{Timeout: 10 * time.Second}
		}
		resp, err := c.Get(scheme + "://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s%s: %d %s", addr, path, resp.StatusCode, b)
		}
		return string(b)
	}
	lag := func(member string) (float64, bool) {
		return metricValue(get("https", g.nns[l].HTTPAddr(), "/metrics"), `smarth_namenode_ha_follower_lag_entries{member="`+member+`"}`)
	}
	mkdirs := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if _, err := g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: fmt.Sprintf("/%s/%d", prefix, i), CreateParent: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mkdirs("a", 5)
	for _, i := range []int{up, down} {
		waitFor(t, "the active's metrics to show "+nnID(i)+" at lag 0", func() bool { v, ok := lag(nnID(i)); return ok && v == 0 })
	}
	st, err := g.cli[l].cp.GetHAStatus(g.cli[l].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	m := get("https", g.nns[l].HTTPAddr(), "/metrics")
	for series, want := range map[string]float64{"smarth_namenode_ha_state": 1, "smarth_namenode_ha_members": 3,
		"smarth_namenode_ha_last_contact_seconds": 0} {
		if v, ok := metricValue(m, series); !ok || v != want {
			t.Errorf("active: %s = %v (present %v); want %v", series, v, ok, want)
		}
	}
	if v, ok := metricValue(m, "smarth_namenode_ha_term"); !ok || v < float64(st.Term) {
		t.Errorf("active: smarth_namenode_ha_term = %v; want at least %d", v, st.Term)
	}
	if v, ok := metricValue(m, "smarth_namenode_ha_applied_txid"); !ok || v < float64(st.AppliedTxid) {
		t.Errorf("active: smarth_namenode_ha_applied_txid = %v; want at least %d", v, st.AppliedTxid)
	}
	fm := get("https", g.nns[up].HTTPAddr(), "/metrics")
	if v, ok := metricValue(fm, "smarth_namenode_ha_state"); !ok || v != 0 {
		t.Errorf("standby: smarth_namenode_ha_state = %v (present %v); want 0", v, ok)
	}
	if v, ok := metricValue(fm, "smarth_namenode_ha_applied_index"); !ok || v == 0 {
		t.Errorf("standby: smarth_namenode_ha_applied_index = %v (present %v); want > 0", v, ok)
	}
	if strings.Contains(fm, "smarth_namenode_ha_follower_lag_entries") {
		t.Errorf("a standby exports follower lag:\n%s", fm)
	}

	// The fault: a follower down while the active writes.
	g.nns[down].Close()
	mkdirs("b", 10)
	waitFor(t, "the active's metrics to show "+nnID(up)+" back at lag 0", func() bool { v, ok := lag(nnID(up)); return ok && v == 0 })
	if v, ok := lag(nnID(down)); !ok || v < 10 {
		t.Fatalf("lag of %s, down during 10 mkdirs: %v (present %v); want at least 10", nnID(down), v, ok)
	}
	page := get("https", g.nns[l].HTTPAddr(), "/")
	for _, want := range []string{"<h2>High availability</h2>", nnID(l) + " (this namenode)</td><td>active</td>",
		"<td>" + nnID(up) + "</td><td>standby</td>", "<td>" + nnID(down) + "</td><td>standby</td>", g.cfgs[up].RPCAddr} {
		if !strings.Contains(page, want) {
			t.Fatalf("the active's console lacks %q:\n%s", want, page)
		}
	}
	fpage := get("https", g.nns[up].HTTPAddr(), "/")
	for _, want := range []string{"<h2>High availability</h2>", nnID(up) + " (this namenode)</td><td>standby</td>", "<td>" + nnID(l) + "</td><td>active</td>"} {
		if !strings.Contains(fpage, want) {
			t.Fatalf("a standby's console lacks %q:\n%s", want, fpage)
		}
	}
	g.nns[down] = startNN(t, g.cfgs[down])
	waitFor(t, "the active's metrics to show the restarted "+nnID(down)+" back at lag 0", func() bool { v, ok := lag(nnID(down)); return ok && v == 0 })

	single := startNN(t, testConfig(t))
	if m := get("http", single.HTTPAddr(), "/metrics"); strings.Contains(m, "smarth_namenode_ha_") {
		t.Errorf("a namenode without HA exports HA series")
	}
	if p := get("http", single.HTTPAddr(), "/"); strings.Contains(p, "High availability") {
		t.Errorf("a namenode without HA shows an HA section")
	}
}
