package testbed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"smarth/internal/testbed/netplan"
)

// recorder is a Runner that records commands instead of running them, and
// fails the first command containing failOn.
type recorder struct {
	mu     sync.Mutex // guards cmds
	cmds   []string
	failOn string
}

func (r *recorder) Run(_ context.Context, c netplan.Cmd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, c.String())
	if r.failOn != "" && strings.Contains(c.String(), r.failOn) {
		return &CmdError{Cmd: c, Msg: "Error: Specified qdisc kind is unknown."}
	}
	return nil
}

func (r *recorder) has(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.cmds {
		if strings.Contains(c, sub) {
			return true
		}
	}
	return false
}

// fakeManager is a Manager whose commands go to a recorder, as root, with
// state and work dirs in temp dirs and no cgroups.
func fakeManager(t *testing.T, r *recorder) *Manager {
	t.Helper()
	m, err := New(Options{
		StateRoot: t.TempDir(), WorkRoot: t.TempDir(), Tool: "/bin/true", Runner: r,
		Euid: func() int { return 0 }, Mountinfo: filepath.Join(t.TempDir(), "none"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writeTopology(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "topo.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// uniqueName keeps fake testbeds apart from anything real in /run/netns.
func uniqueName(t *testing.T) string {
	return "unit-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))[:min(20, len(t.Name()))]
}

func small(name string) string {
	return "name: " + name + `
defaults: {nic: 100mbit, cross_rack: 50mbit}
racks: [{name: a}, {name: b}]
hosts:
  - {name: h1, rack: a, roles: [client]}
  - {name: h2, rack: b}
`
}

func TestUpDownWithFakeRunner(t *testing.T) {
	r := &recorder{}
	m := fakeManager(t, r)
	name := uniqueName(t)
	s, err := m.Up(context.Background(), writeTopology(t, small(name)), UpOptions{NoDaemons: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != PhaseUp || s.Netem != true || len(s.Namespaces) != 3 {
		t.Errorf("state: phase %s netem %v namespaces %v", s.Phase, s.Netem, s.Namespaces)
	}
	if !r.has("ip netns add smarth."+name+".h2") || !r.has("match ip dst 10.77.0.0/16 flowid 1:20") {
		t.Errorf("plan not run:\n%s", strings.Join(r.cmds, "\n"))
	}
	loaded, err := m.Load("")
	if err != nil || loaded.Name != name || loaded.Topology.Hosts[1].Addr.String() != "10.77.2.11" {
		t.Fatalf("Load = %+v, %v", loaded, err)
	}
	// A second up of the same name is refused.
	_, err = m.Up(context.Background(), writeTopology(t, small(name)), UpOptions{NoDaemons: true})
	if err == nil || !strings.Contains(err.Error(), "is already up") || !strings.Contains(err.Error(), "smarth testbed down --name "+name) {
		t.Errorf("second up: %v", err)
	}
	rep, err := m.Down(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Name != name {
		t.Errorf("down report %+v", rep)
	}
	if _, err := m.Load(name); err == nil {
		t.Error("state still there after down")
	}
	if _, err := m.Down(context.Background(), name); err == nil || !strings.Contains(err.Error(), "not up") {
		t.Errorf("second down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m.opt.StateRoot, name+".lock")); !os.IsNotExist(err) {
		t.Errorf("lock file left after down: %v", err)
	}
	os.MkdirAll(filepath.Join(m.opt.WorkRoot, name, "nn", "data"), 0o755)
	if dir, err := m.Purge(name); err != nil || dir != filepath.Join(m.opt.WorkRoot, name) {
		t.Errorf("Purge = %s, %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(m.opt.WorkRoot, name)); !os.IsNotExist(err) {
		t.Errorf("work dir left after purge: %v", err)
	}
	if _, err := m.Purge("../x"); err == nil {
		t.Error("Purge accepted a path")
	}
}

func TestUpErrors(t *testing.T) {
	name := uniqueName(t)
	cases := []struct {
		name   string
		opt    func(*Options)
		topo   string
		failOn string
		want   string
	}{
		{"not root", func(o *Options) { o.Euid = func() int { return 1000 } }, small(name), "", "needs root"},
		{"no iproute2", func(o *Options) {
			o.LookPath = func(s string) (string, error) { return "", errors.New("not found") }
		}, small(name), "", `iproute2 is missing: "ip" is not in PATH`},
		{"invalid topology", nil, "name: x\nracks: [{name: a}]\nhosts: [{name: h, rack: z}]\n", "", `unknown rack "z"`},
		{"no netem for latency", nil, strings.Replace(small(name), "{name: h2, rack: b}", "{name: h2, rack: b, latency: 5ms}", 1),
			"netem delay 1ms", "no netem"},
		{"proxy cannot lose", nil, strings.Replace(small(name), "{name: h2, rack: b}", "{name: h2, rack: b, loss: 1%}", 1) + "latency_mode: proxy\n",
			"", "loss needs the netem qdisc"},
		{"failing command", nil, small(name), "u32 match ip src", "Specified qdisc kind is unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{failOn: c.failOn}
			m := fakeManager(t, r)
			if c.opt != nil {
				c.opt(&m.opt)
			}
			_, err := m.Up(context.Background(), writeTopology(t, c.topo), UpOptions{NoDaemons: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Up error %v, want it to contain %q", err, c.want)
			}
			if names, _ := m.Names(); len(names) != 0 {
				t.Errorf("state left behind after a failed up: %v", names)
			}
		})
	}
}

func TestFailedUpSaysItCleanedUp(t *testing.T) {
	r := &recorder{failOn: "route add"}
	m := fakeManager(t, r)
	_, err := m.Up(context.Background(), writeTopology(t, small(uniqueName(t))), UpOptions{NoDaemons: true})
	if err == nil || !strings.Contains(err.Error(), "route add") || !strings.Contains(err.Error(), "removed again") {
		t.Fatalf("error %v", err)
	}
	r2 := &recorder{failOn: "route add"}
	m2 := fakeManager(t, r2)
	s, err := m2.Up(context.Background(), writeTopology(t, small(uniqueName(t))), UpOptions{NoDaemons: true, KeepOnError: true})
	if err == nil || !strings.Contains(err.Error(), "left for inspection") || s == nil || s.Phase != PhaseCreating {
		t.Fatalf("keep on error: %v, state %+v", err, s)
	}
	if _, err := m2.Load(s.Name); err != nil {
		t.Errorf("kept state unreadable: %v", err)
	}
}

func TestShapeChangesTheClasses(t *testing.T) {
	r := &recorder{}
	m := fakeManager(t, r)
	name := uniqueName(t)
	if _, err := m.Up(context.Background(), writeTopology(t, small(name)), UpOptions{NoDaemons: true}); err != nil {
		t.Fatal(err)
	}
	nic, cross := "20mbit", "unlimited"
	old, now, err := m.Shape(context.Background(), "", "h2", Change{NIC: &nic, CrossRack: &cross})
	if err != nil {
		t.Fatal(err)
	}
	if old.NIC != 100e6 || now.NIC != 20e6 || now.CrossRack != 0 || now.SameRack != 0 {
		t.Errorf("shape %+v -> %+v", old, now)
	}
	if !r.has("tc -n smarth."+name+".h2 class change dev eth0 parent 1: classid 1:1 htb rate 20000000bit ceil 20000000bit") ||
		!r.has("tc -n smarth."+name+"._core class change dev h1 parent 1:1 classid 1:20") {
		t.Errorf("reshape not run:\n%s", strings.Join(r.cmds, "\n"))
	}
	s, _ := m.Load(name)
	if h, _ := s.Topology.Host("h2"); h.Shape.NIC != 20e6 {
		t.Errorf("state not updated: %+v", h.Shape)
	}
	bad := "50"
	if _, _, err := m.Shape(context.Background(), "", "h2", Change{NIC: &bad}); err == nil || !strings.Contains(err.Error(), "no unit") {
		t.Errorf("unitless rate: %v", err)
	}
	if _, _, err := m.Shape(context.Background(), "", "nope", Change{NIC: &nic}); err == nil || !strings.Contains(err.Error(), `no host "nope"`) {
		t.Errorf("unknown host: %v", err)
	}
	disk := "10MB/s"
	if _, _, err := m.Shape(context.Background(), "", "h2", Change{DiskRead: &disk}); err == nil || !strings.Contains(err.Error(), "cgroup") {
		t.Errorf("disk cap without cgroups: %v", err)
	}
	if _, now, err := m.ShapeUplink(context.Background(), "", "b", "30mbit"); err != nil || now != 30e6 ||
		!r.has("class change dev r2 parent 1: classid 1:1 htb rate 30000000bit") {
		t.Errorf("uplink: %v %v", now, err)
	}
	m.Down(context.Background(), name)
}

func TestPick(t *testing.T) {
	m := fakeManager(t, &recorder{})
	if _, err := m.Load(""); err == nil || !strings.Contains(err.Error(), "no testbed is up") {
		t.Errorf("no testbed: %v", err)
	}
	for _, n := range []string{"aa", "bb"} {
		(&State{Version: stateVersion, Name: n, path: stateFile(m.opt.StateRoot, n)}).save()
	}
	if _, err := m.Load(""); err == nil || !strings.Contains(err.Error(), "several testbeds are up (aa, bb)") {
		t.Errorf("two testbeds: %v", err)
	}
	if s, err := m.Load("bb"); err != nil || s.Name != "bb" {
		t.Errorf("Load(bb) = %v, %v", s, err)
	}
}
