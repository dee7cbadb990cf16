package namenode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// TestHAKill9OfTheActive runs three `smarth namenode` processes as an HA
// group (ha_* keys in their config files, TLS), kills the active with
// SIGKILL under a writer, and demands a new active at a higher term with
// every acknowledged mkdir; the killed member restarts from its disk and
// catches up with what was written while it was down.
func TestHAKill9OfTheActive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes")
	}
	bin := buildSmarth(t)
	dir := t.TempDir()
	g := &haGroup{t: t, tls: haCerts(t, dir)}
	ports := haPorts(t, 6)
	var peers strings.Builder
	peers.WriteString("ha_peers:\n")
	for i := range 3 {
		fmt.Fprintf(&peers, "  nn%d: {rpc: %q, raft: %q}\n", i, ports[2*i], ports[2*i+1])
	}
	configs := make([]string, 3)
	procs := make([]*nnProcess, 3)
	for i := range 3 {
		configs[i] = filepath.Join(dir, fmt.Sprintf("nn%d.yaml", i))
		yaml := fmt.Sprintf("rpc_addr: %s\nhttp_addr: 127.0.0.1:0\nmeta_dir: %s\nsuperuser: hdfs\nauth: simple\n"+
			"tls: true\ntls_cert_file: %s\ntls_key_file: %s\ntls_ca_file: %s\n"+
			"ha_id: nn%d\nha_bootstrap: %v\nha_heartbeat_timeout: 300ms\nha_election_timeout: 300ms\nha_leader_lease_timeout: 250ms\n%s",
			ports[2*i], filepath.Join(dir, fmt.Sprintf("meta%d", i)), g.tls.CertFile, g.tls.KeyFile, g.tls.CAFile, i, i == 0, peers.String())
		if err := os.WriteFile(configs[i], []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		procs[i] = startNNProcess(t, bin, configs[i], dir, i)
		g.cli = append(g.cli, g.dial(ports[2*i], "hdfs"))
		var cfg Config
		cfg.RPCAddr = ports[2*i]
		g.cfgs = append(g.cfgs, cfg)
	}
	addrs := []string{ports[0], ports[2], ports[4]}
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
