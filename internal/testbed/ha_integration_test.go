package testbed

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/topo"
)

const haTopology = `
name: %s
defaults: {nic: 200mbit, cross_rack: 100mbit}
daemons:
  namenode: {block_size: 1048576}
racks: [{name: rack-a}, {name: rack-b}]
hosts:
  - {name: nn, rack: rack-a, roles: [namenode, client]}
  - {name: dn1, rack: rack-a, roles: [datanode]}
  - {name: dn2, rack: rack-b, roles: [datanode]}
  - {name: dn3, rack: rack-b, roles: [datanode]}
`

// TestTestbedHAGroup brings up `testbed up --namenodes 3` (three namenode
// hosts in two racks, TLS everywhere, datanodes reporting to every
// member), writes a file, SIGKILLs the active namenode's process inside
// its host, and demands that a second write goes through the new active
// and that both files read back whole from a client host that names the
// group only by SMARTH_NAMENODE.
func TestTestbedHAGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary testbed skipped in -short mode (see TestTestbed)")
	}
	requireNamespaces(t)
	bin := buildSmarth(t)
	name := fmt.Sprintf("itest-ha-%d", os.Getpid())
	m, topoFile := itestManager(t, name, haTopology, Options{Tool: bin, ReadyTimeout: 60 * time.Second, StopGrace: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := m.Up(ctx, topoFile, UpOptions{NameNodes: 3})
	if err != nil {
		t.Fatalf("up --namenodes 3: %v", err)
	}
	members := s.Topology.WithRole(topo.NameNode)
	if len(members) != 3 || !s.Topology.TLS {
		t.Fatalf("up --namenodes 3 made %d namenode hosts (TLS %v), want 3 with TLS", len(members), s.Topology.TLS)
	}
	// Every daemon runs in its host's namespace: 3 members, 3 datanodes.
	if len(s.Daemons) != 6 {
		t.Errorf("started %d daemons, want 6", len(s.Daemons))
	}

	// The group has one active, which a client host sees through
	// `smarth admin ha status`.
	active := activeOf(t, m, name, bin)
	var victim *DaemonState
	for i := range s.Daemons {
		d := &s.Daemons[i]
		if h, _ := s.Topology.Host(d.Host); d.Role == topo.NameNode && strings.HasPrefix(active, h.Addr.String()+":") {
			victim = d
		}
	}
	if victim == nil {
		t.Fatalf("no namenode daemon listens on the active's address %s", active)
	}

	data := [2][]byte{make([]byte, 3<<20+777), make([]byte, 2<<20+31)}
	for i := range data {
		rand.Read(data[i])
		os.WriteFile(filepath.Join(s.WorkDir, "nn", fmt.Sprintf("in%d.dat", i)), data[i], 0o644)
	}
	runOn(t, m, name, "nn", bin, "fs", "put", filepath.Join(s.WorkDir, "nn", "in0.dat"), "/ha-0.dat")

	// The fault: SIGKILL of the active's process, verified to be the
	// namenode inside that host's namespace.
	if !netns.PIDIn(victim.PID, s.nsPath(victim.Host)) {
		t.Fatalf("the active %s (pid %d) is not running in its host's namespace", victim.Name(), victim.PID)
	}
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 the active %s: %v", victim.Name(), err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for netns.PIDIn(victim.PID, s.nsPath(victim.Host)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // wait for the kernel to reap it
	}
	t.Logf("killed the active namenode %s (pid %d, %s)", victim.Name(), victim.PID, active)

	// The write after the kill goes through a new active, found by the
	// client itself from the list it was given.
	runOn(t, m, name, "nn", bin, "fs", "put", filepath.Join(s.WorkDir, "nn", "in1.dat"), "/ha-1.dat")
	if now := activeOf(t, m, name, bin); now == active {
		t.Errorf("the killed member %s is still reported active", active)
	}
	for i := range data {
		dst := filepath.Join(s.WorkDir, "nn", fmt.Sprintf("out%d.dat", i))
		runOn(t, m, name, "nn", bin, "fs", "get", fmt.Sprintf("/ha-%d.dat", i), dst)
		if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data[i]) {
			t.Errorf("/ha-%d.dat read back %d bytes (err %v), want the %d written", i, len(got), err, len(data[i]))
		}
	}
	downAndVerify(t, m, name)
}

// activeOf is the RPC address `smarth admin ha status`, run on the
// testbed's client host, reports active, once one is (an election after a
// kill takes about a second).
func activeOf(t *testing.T, m *Manager, name, bin string) string {
	t.Helper()
	var out []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		s, err := m.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := m.Command(context.Background(), s, "nn", []string{bin, "admin", "ha", "status"})
		if err != nil {
			t.Fatal(err)
		}
		out, _ = cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[1] == "active" {
				return f[0]
			}
		}
	}
	t.Fatalf("no namenode reported active within 30s; smarth admin ha status said:\n%s", out)
	return ""
}
