package namenode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
	"smarth/internal/sigstop"
	"smarth/internal/testenv"
)

// haProcs is an HA group of `smarth namenode` processes (ha_* keys in
// their config files, TLS).
type haProcs struct {
	*haGroup
	bin, dir string
	configs  []string
	procs    []*nnProcess
	addrs    []string
	raft     []string // each member's raft address
}

// startHAProcs starts a group of three smarth namenode processes, each
// with the command-line flags given, with a leader lease of 250 ms.
func startHAProcs(t *testing.T, flags ...string) *haProcs {
	t.Helper()
	return startHAProcsLease(t, 250*time.Millisecond, flags...)
}

// startHAProcsLease is startHAProcs with the leader lease given (the
// heartbeat and election timeouts 50 ms longer: raft wants the lease no
// longer than the heartbeat timeout).
func startHAProcsLease(t *testing.T, lease time.Duration, flags ...string) *haProcs {
	t.Helper()
	dir := t.TempDir()
	p := &haProcs{haGroup: &haGroup{t: t, tls: haCerts(t, dir)}, bin: buildSmarth(t), dir: dir}
	ports := testenv.RestartablePorts(t, 6)
	var peers strings.Builder
	peers.WriteString("ha_peers:\n")
	for i := range 3 {
		fmt.Fprintf(&peers, "  nn%d: {rpc: %q, raft: %q}\n", i, ports[2*i], ports[2*i+1])
	}
	for i := range 3 {
		config := filepath.Join(dir, fmt.Sprintf("nn%d.yaml", i))
		yaml := fmt.Sprintf("rpc_addr: %s\nhttp_addr: 127.0.0.1:0\nmeta_dir: %s\nsuperuser: hdfs\nauth: simple\n"+
			"tls: true\ntls_cert_file: %s\ntls_key_file: %s\ntls_ca_file: %s\n"+
			"ha_id: nn%d\nha_bootstrap: %v\nha_heartbeat_timeout: %v\nha_election_timeout: %v\nha_leader_lease_timeout: %v\n%s",
			ports[2*i], filepath.Join(dir, fmt.Sprintf("meta%d", i)), p.tls.CertFile, p.tls.KeyFile, p.tls.CAFile, i, i == 0,
			lease+50*time.Millisecond, lease+50*time.Millisecond, lease, peers.String())
		if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		p.configs = append(p.configs, config)
		p.procs = append(p.procs, startNNProcess(t, p.bin, config, dir, i, flags...))
		p.cli = append(p.cli, p.dial(ports[2*i], "hdfs"))
		var cfg Config
		cfg.RPCAddr = ports[2*i]
		p.cfgs = append(p.cfgs, cfg)
		p.addrs = append(p.addrs, ports[2*i])
		p.raft = append(p.raft, ports[2*i+1])
	}
	return p
}

// TestHAKill9OfTheActive kills the active process with SIGKILL under a
// writer, and demands a new active at a higher term with every
// acknowledged mkdir; the killed member restarts from its disk and
// catches up with what was written while it was down.
func TestHAKill9OfTheActive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes")
	}
	g := startHAProcs(t)
	bin, dir, configs, procs, addrs := g.bin, g.dir, g.configs, g.procs, g.addrs
	l, nl, _ := g.failover(addrs, 50, "kill -9", func(l int) {
		if err := procs[l].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-procs[l].exited
	})

	// The killed member restarts from its disk and follows the new
	// active up to its last edit (txids are contiguous across the group:
	// equal means every edit applied).
	procs[l] = startNNProcess(t, bin, configs[l], dir, 3+l)
	st2, err := g.cli[nl].cp.GetHAStatus(g.cli[nl].ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("the restarted member to be a standby of %s at txid %d", addrs[nl], st2.AppliedTxid), func() bool {
		st, err := g.cli[l].cp.GetHAStatus(g.cli[l].ctx(), &dfspb.GetHAStatusRequest{})
		return err == nil && st.State == dfspb.HAState_STANDBY && st.ActiveRpcAddress == addrs[nl] && st.AppliedTxid == st2.AppliedTxid
	})
}

// TestHAFrozenActive freezes the active process with SIGSTOP under a
// writer; the others elect a new active, which acknowledges writes and
// has every acknowledged one. Resumed, the old active acknowledges
// nothing more: it is a standby, or, if it held an edit the group never
// committed, it has exited non-zero to reload (HDFS's active that lost
// its journal quorum).
func TestHAFrozenActive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes")
	}
	g := startHAProcs(t)
	var resumed chan struct{}
	l, nl, _ := g.failover(g.addrs, 50, "SIGSTOP", func(l int) {
		if _, err := sigstop.Stop(g.procs[l].cmd.Process.Pid, time.Minute); err != nil {
			t.Fatal(err)
		}
		// Resume it once another member is active, so that the writer's
		// call held by the frozen process returns.
		resumed = make(chan struct{})
		go func() {
			defer close(resumed)
			for {
				for i, c := range g.cli {
					if i == l {
						continue
					}
					if st, err := c.cp.GetHAStatus(c.ctx(), &dfspb.GetHAStatusRequest{}); err == nil && st.State == dfspb.HAState_ACTIVE {
						g.procs[l].cmd.Process.Signal(syscall.SIGCONT)
						return
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	})
	<-resumed
	c := g.cli[l]
	var outcome string
	waitFor(t, "the resumed old active to be a standby or to have exited", func() bool {
		select {
		case <-g.procs[l].exited:
			outcome = fmt.Sprintf("exited: %v", g.procs[l].cmd.ProcessState)
			return true
		default:
		}
		st, err := c.cp.GetHAStatus(c.ctx(), &dfspb.GetHAStatusRequest{})
		if err == nil && st.State == dfspb.HAState_STANDBY && st.ActiveRpcAddress == g.addrs[nl] {
			outcome = "standby"
			return true
		}
		return false
	})
	if ps := g.procs[l].cmd.ProcessState; ps != nil && ps.ExitCode() == 0 {
		t.Fatalf("the resumed old active exited with status 0; a fatal divergence must exit non-zero")
	}
	if outcome == "standby" {
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/after-resume"})
		if a, ok := standby.Is(err); !ok || a != g.addrs[nl] {
			t.Fatalf("mkdirs on the resumed old active: %v; want a standby refusal naming %s", err, g.addrs[nl])
		}
	}
	t.Logf("the resumed old active: %s", outcome)
}
