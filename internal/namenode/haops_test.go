package namenode

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	if nl := g.active(nil); nl != to {
		t.Fatalf("after transfer-leader %s, the active is %s", nnID(to), nnID(nl))
	}
	before := w.count()
	waitFor(t, "20 more mkdirs acknowledged after the transfer", func() bool { return w.count() >= before+20 })
	w.finish(l, time.Now())
	w.check(t, g.cli[to])
	st1, err := g.cli[to].cp.GetHAStatus(g.cli[to].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil || st1.Term <= st0.Term {
		t.Fatalf("new active's term %d (%v); the old one's was %d", st1.GetTerm(), err, st0.Term)
	}
	_, err = g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: "/on-the-old-active"})
	if a, ok := standby.Is(err); !ok || a != g.addrs[to] {
		t.Fatalf("mkdirs on the old active: %v; want a standby refusal naming %s", err, g.addrs[to])
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
