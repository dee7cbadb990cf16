package tunemeasure

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/topo"
	"smarth/internal/testenv"
	"smarth/internal/tune"
	"smarth/internal/tune/ga"
)

func TestTuningPair(t *testing.T) {
	for file, rate := range map[string]topo.Rate{"tune-300.yaml": 300e6, "tune-100.yaml": 100e6} {
		tp, err := topo.Load(filepath.Join("..", "..", "..", "testbed", file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := TuningPair(tp)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if p.Client.Name != "master" || p.DataNode.Name != "slave" || p.Link.Rate != rate {
			t.Errorf("%s: pair %s -> %s over %v, want master -> slave over %v", file, p.Client.Name, p.DataNode.Name, p.Link, rate)
		}
	}
	bad := map[string]string{
		"two datanodes": `name: x
racks: [{name: r}]
hosts:
  - {name: a, rack: r, roles: [namenode, client]}
  - {name: b, rack: r, roles: [datanode]}
  - {name: c, rack: r, roles: [datanode]}`,
		"client on the datanode": `name: x
racks: [{name: r}]
hosts:
  - {name: a, rack: r, roles: [namenode]}
  - {name: b, rack: r, roles: [datanode, client]}`,
	}
	for what, y := range bad {
		tp, err := topo.Parse([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := TuningPair(tp); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

// The bench's keys reach the daemons' configs and the file's own limits
// and keys survive the rewrite.
func TestTuningTopologyKeepsTheFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testbed", "tune-300.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, []byte("daemons:\n  datanode: {per_client_buffer: 4194304}\n")...)
	out, err := tuningTopology(data, "/p/profile.json", "/p/log.jsonl", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Parse(out)
	if err != nil {
		t.Fatalf("rewritten topology does not parse: %v\n%s", err, out)
	}
	dn := tp.Daemons["datanode"]
	if dn["net_profile"] != "/p/profile.json" || dn["transfer_log"] != "/p/log.jsonl" || dn["per_client_buffer"] != 4194304 {
		t.Errorf("datanode keys %v", dn)
	}
	if nn := tp.Daemons["namenode"]; nn["block_size"] != 64<<20 || nn["replication"] != 1 {
		t.Errorf("namenode keys %v", nn)
	}
	if h, _ := tp.Host("slave"); h.Shape.NIC != 300e6 {
		t.Errorf("slave's nic %v, want 300 Mbit/s", h.Shape.NIC)
	}
}

// The congestion gene's first value is what the kernel uses when nothing
// is set, so that a default genome is never described as another
// algorithm.
func TestSocketSpaceDefaultIsTheKernels(t *testing.T) {
	root := t.TempDir()
	for p, v := range map[string]string{
		"net/ipv4/tcp_available_congestion_control": "reno bbr cubic\n",
		"net/ipv4/tcp_congestion_control":           "bbr\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := NewSpace("socket", tune.Host{ProcSys: root})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sp, func(g ga.Gene) bool { return g.Name == "tcp_congestion" })
	if got := sp[i].Values; !slices.Equal(got, []string{"bbr", "reno", "cubic"}) {
		t.Fatalf("tcp_congestion values %v, want the default bbr first and each algorithm once", got)
	}
	g := make(ga.Genome, len(sp))
	g[i] = 2
	if p := ProfileOf(sp, g); p.Settings["tcp_congestion"] != "cubic" {
		t.Fatalf("genome %v: %v", g, p)
	}
}

// inNewNetns runs f on a thread inside a fresh network namespace.
func inNewNetns(t *testing.T, f func()) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	if err := <-done; err != nil {
		testenv.Missing(t, "cannot create a network namespace: %v", err)
	}
}

// On a testbed the sysctl space holds only sysctls each namespace has its
// own copy of; busy_read/busy_poll are not among them on this kernel
// (which is why they are left out there).
func TestSysctlSpacePerNetnsExistsInANamespace(t *testing.T) {
	testenv.NeedRoot(t, "create a network namespace")
	missing, writable := map[string]bool{}, map[string]bool{}
	inNewNetns(t, func() {
		for _, g := range append(SysctlSpace(true), SysctlSpace(false)...) {
			st, err := os.Stat(filepath.Join("/proc/sys", strings.ReplaceAll(g.Name, ".", "/")))
			missing[g.Name] = err != nil
			writable[g.Name] = err == nil && st.Mode().Perm()&0o200 != 0
		}
	})
	for _, g := range SysctlSpace(true) {
		if missing[g.Name] || !writable[g.Name] {
			t.Errorf("%s is in the per-namespace space but a new namespace has no writable copy (missing %v)", g.Name, missing[g.Name])
		}
	}
	for _, name := range []string{"net.core.busy_read", "net.core.busy_poll"} {
		if !missing[name] {
			t.Logf("%s exists per namespace on this kernel: it could join the testbed space", name)
		}
	}
	for _, g := range SysctlSpace(true) {
		for _, v := range g.Values[1:] {
			if err := (tune.Profile{Name: "x", Settings: map[string]string{g.Name: v}}).Validate(tune.LocalHost()); err != nil {
				t.Errorf("%s=%q: %v", g.Name, v, err)
			}
		}
	}
}

// A testbed bench changes sysctls inside the receiving host's namespace
// only, with the revert file written first, and puts them back after the
// measurement; the host's own values never change.
func TestSysctlsChangeOnlyInsideTheNamespace(t *testing.T) {
	testenv.NeedRoot(t, "create a network namespace")
	testenv.NeedTools(t, "ip") // iproute2
	name := fmt.Sprintf("smarth-tunetest-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		testenv.Missing(t, "ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	const key = "net.ipv4.tcp_rmem"
	sys := tune.Sysctls{Root: "/proc/sys", RevertFile: filepath.Join(t.TempDir(), "revert")}
	b := &Bench{opts: Options{Sysctl: &sys, Out: os.Stderr}, sysctlNS: netns.Path(name)}
	host := &Bench{}
	hostBefore, err := host.SysctlValues([]string{key})
	if err != nil {
		t.Fatal(err)
	}
	nsBefore, err := b.SysctlValues([]string{key})
	if err != nil {
		t.Fatal(err)
	}
	want := "4096 65536 262144"
	if nsBefore[key] == want {
		want = "4096 87380 6291456"
	}
	restore, err := b.applySysctls(tune.Profile{Name: "p", Settings: map[string]string{key: want}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sys.RevertFile); err != nil {
		t.Fatalf("no revert file while changed: %v", err)
	}
	during, _ := b.SysctlValues([]string{key})
	hostDuring, _ := host.SysctlValues([]string{key})
	restore()
	after, _ := b.SysctlValues([]string{key})
	hostAfter, _ := host.SysctlValues([]string{key})
	if during[key] != want {
		t.Errorf("inside the namespace during the measurement: %q, want %q", during[key], want)
	}
	if hostDuring[key] != hostBefore[key] || hostAfter[key] != hostBefore[key] {
		t.Errorf("the host's %s changed: %q, %q, was %q", key, hostDuring[key], hostAfter[key], hostBefore[key])
	}
	if after[key] != nsBefore[key] {
		t.Errorf("not restored in the namespace: %q, was %q", after[key], nsBefore[key])
	}
	if _, err := os.Stat(sys.RevertFile); !os.IsNotExist(err) {
		t.Errorf("revert file left after restore: %v", err)
	}
	// A host-wide sysctl is not there inside a namespace: refused, nothing
	// changed, no revert file left.
	if _, err := b.applySysctls(tune.Profile{Name: "q", Settings: map[string]string{"net.core.busy_read": "50"}}); err == nil {
		t.Log("net.core.busy_read is per namespace on this kernel")
		restoreAll(t, b)
	} else if _, serr := os.Stat(sys.RevertFile); !os.IsNotExist(serr) {
		t.Errorf("refused change left a revert file: %v", serr)
	}
}

func restoreAll(t *testing.T, b *Bench) {
	t.Helper()
	if err := b.inNS(func() error { _, err := b.opts.Sysctl.Restore(); return err }); err != nil {
		t.Error(err)
	}
}
