package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"smarth/internal/testbed/cgroup"
	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/netplan"
	"smarth/internal/testbed/topo"
)

// UpOptions change what Up does.
type UpOptions struct {
	NoDaemons   bool // build the network only
	KeepOnError bool // leave a half-built testbed for inspection
	// NameNodes, when set, gives the namenode role to this many hosts
	// (1, 3 or 5; topo.Topology.SetNameNodes picks them): more than one
	// is an HA group, with TLS on every daemon.
	NameNodes int
}

// load reads the topology at path with u's changes.
func (u UpOptions) load(path string) (*topo.Topology, error) {
	t, err := topo.Load(path)
	if err != nil {
		return nil, err
	}
	if u.NameNodes > 0 {
		if err := t.SetNameNodes(u.NameNodes); err != nil {
			return nil, fmt.Errorf("topology %s: %w", path, err)
		}
	}
	return t, nil
}

// DryRun is what Up would run for the topology at path, without running
// anything: the commands (assuming no netem unless netem is set) and the
// daemons.
func (m *Manager) DryRun(path string, netem bool, u UpOptions) ([]netplan.Cmd, []daemonplan.Daemon, error) {
	t, err := u.load(path)
	if err != nil {
		return nil, nil, err
	}
	plan, err := daemonplan.Plan(t, filepath.Join(m.opt.WorkRoot, t.Name))
	if err != nil {
		return nil, nil, err
	}
	return netplan.Up(t, netplan.Options{Netem: netem && t.LatencyMode == topo.LatencyNetem}), plan, nil
}

// Up builds the testbed described by the topology file at path and starts
// its daemons. On failure it removes what it built, unless KeepOnError.
func (m *Manager) Up(ctx context.Context, path string, u UpOptions) (*State, error) {
	t, err := u.load(path)
	if err != nil {
		return nil, err
	}
	if err := m.Preflight(); err != nil {
		return nil, err
	}
	if t.LatencyMode == topo.LatencyProxy && t.Lossy() {
		return nil, errors.New("loss needs the netem qdisc: the delay proxy (latency_mode: proxy) can only add latency and jitter, TCP hides loss from it")
	}
	unlock, err := lock(m.opt.StateRoot, t.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := m.checkNotUp(t.Name); err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(path)
	s := &State{
		Version: stateVersion, Name: t.Name, Phase: PhaseCreating, Created: time.Now().UTC(),
		TopologyFile: abs, Topology: t, Namespaces: netplan.Namespaces(t),
		WorkDir: filepath.Join(m.opt.WorkRoot, t.Name), Binary: m.opt.Binary, Tool: m.opt.Tool,
		path: stateFile(m.opt.StateRoot, t.Name),
	}
	if err := m.prepareCgroups(s); err != nil {
		return nil, err
	}
	// The state goes to disk before anything exists, so that `down`
	// finds everything even if this process dies half way.
	if err := s.save(); err != nil {
		return nil, fmt.Errorf("record the testbed state: %w", err)
	}
	if err := m.build(ctx, s, u); err != nil {
		if u.KeepOnError {
			return s, fmt.Errorf("%w\n(the half-built testbed is left for inspection; `smarth testbed down --name %s` removes it)", err, t.Name)
		}
		if _, derr := m.teardown(context.WithoutCancel(ctx), s); derr != nil {
			return nil, fmt.Errorf("%w\n(cleaning up also failed: %v)", err, derr)
		}
		return nil, fmt.Errorf("%w\n(everything it had built was removed again)", err)
	}
	s.Phase = PhaseUp
	return s, s.save()
}

// checkNotUp refuses to build over a testbed of the same name, whether it
// has a state or only leftover namespaces.
func (m *Manager) checkNotUp(name string) error {
	if s, err := loadState(m.opt.StateRoot, name); err == nil {
		return fmt.Errorf("testbed %q is already up (phase %s, since %s, state %s): run `smarth testbed down --name %s` first",
			name, s.Phase, s.Created.Local().Format(time.DateTime), s.path, name)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: run `smarth testbed down --name %s` to clean up", err, name)
	}
	left, err := netns.List(netplan.NetnsPrefix(name))
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("namespaces of a previous testbed %q are still there (%s): run `smarth testbed down --name %s` first",
			name, strings.Join(left, ", "), name)
	}
	return nil
}

// build does the work of Up once the state is recorded.
func (m *Manager) build(ctx context.Context, s *State, u UpOptions) error {
	t := s.Topology
	m.logf("creating testbed %s: %d racks, %d hosts", t.Name, len(t.Racks), len(t.Hosts))
	if err := runAll(ctx, m.opt.Runner, netplan.Core(t)); err != nil {
		return err
	}
	s.Netem = runAll(ctx, m.opt.Runner, netplan.NetemProbe(t)) == nil
	if t.Delayed() && t.LatencyMode == topo.LatencyNetem && !s.Netem {
		return errors.New("the topology asks for latency, jitter or loss, which need the netem qdisc, and this kernel has no netem " +
			"(tc: \"Specified qdisc kind is unknown\"). Remove them, or set latency_mode: proxy to add latency and jitter " +
			"with a user-space TCP delay proxy in front of each daemon")
	}
	if err := s.save(); err != nil {
		return err
	}
	netem := s.Netem && t.LatencyMode == topo.LatencyNetem
	if err := runAll(ctx, m.opt.Runner, netplan.Hosts(t, netplan.Options{Netem: netem})); err != nil {
		return err
	}
	if err := m.createCgroups(s); err != nil {
		return err
	}
	if err := s.save(); err != nil {
		return err
	}
	m.logf("network ready: %d namespaces, shaping in place", len(s.Namespaces))
	if u.NoDaemons {
		return nil
	}
	return m.startAll(ctx, s)
}

// prepareCgroups finds the disk-cap controller and the disk of the work
// dir. Without disk caps in the topology a missing controller is not an
// error; the testbed simply cannot cap disks later.
func (m *Manager) prepareCgroups(s *State) error {
	ctl, err := cgroup.Detect(m.opt.Mountinfo)
	if err == nil {
		if err = os.MkdirAll(s.WorkDir, 0o755); err == nil {
			var dev cgroup.Device
			if dev, err = cgroup.DeviceOf(s.WorkDir, "/sys/dev/block"); err == nil {
				s.Cgroup = &CgroupState{Root: cgroupRoot(ctl), Kind: cgroupKind(ctl), Device: dev.String(), Dirs: map[string]string{}}
				for _, h := range s.Topology.Hosts {
					s.Cgroup.Dirs[h.Name] = filepath.Join(s.Cgroup.Root, cgroup.Base, s.Name, h.Name)
				}
			}
		}
	}
	if err != nil && s.Topology.DiskCapped() {
		return fmt.Errorf("the topology caps disk bandwidth, but: %w", err)
	}
	return nil
}

func cgroupKind(c cgroup.Controller) string {
	if _, ok := c.(cgroup.V2); ok {
		return "v2"
	}
	return "v1"
}

func cgroupRoot(c cgroup.Controller) string {
	if v, ok := c.(cgroup.V2); ok {
		return v.Root
	}
	return c.(cgroup.V1).Root
}

// controller rebuilds the controller recorded in the state.
func (c *CgroupState) controller() cgroup.Controller {
	if c.Kind == "v2" {
		return cgroup.V2{Root: c.Root}
	}
	return cgroup.V1{Root: c.Root}
}

func (c *CgroupState) device() (cgroup.Device, error) {
	var d cgroup.Device
	_, err := fmt.Sscanf(c.Device, "%d:%d", &d.Major, &d.Minor)
	return d, err
}

// createCgroups makes one group per host and applies its disk caps.
func (m *Manager) createCgroups(s *State) error {
	if s.Cgroup == nil {
		return nil
	}
	ctl := s.Cgroup.controller()
	for _, h := range s.Topology.Hosts {
		rel, _ := filepath.Rel(s.Cgroup.Root, s.Cgroup.Dirs[h.Name])
		if _, err := ctl.Create(rel); err != nil {
			return fmt.Errorf("create the %s group of %s: %w", ctl.Kind(), h.Name, err)
		}
		if err := m.limitDisk(s, h.Name, h.Shape); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) limitDisk(s *State, host string, sh topo.Shape) error {
	dev, err := s.Cgroup.device()
	if err != nil {
		return err
	}
	ctl := s.Cgroup.controller()
	if err := ctl.Limit(s.Cgroup.Dirs[host], dev, uint64(sh.DiskRead), uint64(sh.DiskWrite)); err != nil {
		return fmt.Errorf("cap the disk of %s: %w", host, err)
	}
	return nil
}
