package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"smarth/internal/testbed/cgroup"
	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/netplan"
)

// DownReport says what Down removed.
type DownReport struct {
	Name       string
	Stopped    int      // processes stopped inside the namespaces
	Namespaces []string // deleted
	Cgroups    []string // removed
	WorkDir    string   // kept: data and logs
}

// Down stops everything running in testbed name's namespaces, deletes the
// namespaces (and with them every link, bridge and qdisc), removes its
// cgroups and its state. It works from the state file and also sweeps by
// name prefix, so it cleans up after a crash of up, or with no state at
// all. Running it twice is harmless.
func (m *Manager) Down(ctx context.Context, name string) (DownReport, error) {
	if err := m.Preflight(); err != nil {
		return DownReport{}, err
	}
	name, err := m.pick(name)
	if err != nil {
		return DownReport{}, err
	}
	unlock, err := lock(m.opt.StateRoot, name)
	if err != nil {
		return DownReport{}, err
	}
	defer unlock()
	s, err := loadState(m.opt.StateRoot, name)
	if errors.Is(err, os.ErrNotExist) {
		left, lerr := netns.List(netplan.NetnsPrefix(name))
		if lerr != nil {
			return DownReport{}, lerr
		}
		if len(left) == 0 && !m.hasCgroups(name) {
			return DownReport{Name: name}, fmt.Errorf("testbed %q is not up: no state and nothing left to remove", name)
		}
		// Lost state: tear down what the prefix finds.
		s = &State{Name: name, path: stateFile(m.opt.StateRoot, name)}
	} else if err != nil {
		// Unreadable state: still sweep by prefix, then remove it.
		m.logf("warning: %v; removing by name instead", err)
		s = &State{Name: name, path: stateFile(m.opt.StateRoot, name)}
	}
	return m.teardown(ctx, s)
}

// teardown removes everything s names, plus anything found by prefix.
func (m *Manager) teardown(ctx context.Context, s *State) (DownReport, error) {
	r := DownReport{Name: s.Name, WorkDir: s.WorkDir}
	names := slices.Clone(s.Namespaces)
	if left, err := netns.List(netplan.NetnsPrefix(s.Name)); err == nil {
		for _, n := range left {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	// Stop the daemons and proxies first, politely and in reverse start
	// order, then whatever else still runs inside (exec'd shells, tests).
	var pids []nsPID
	for i := len(s.Daemons) - 1; i >= 0; i-- {
		pids = append(pids, nsPID{s.Daemons[i].PID, s.nsPath(s.Daemons[i].Host)})
	}
	for _, p := range s.Proxies {
		pids = append(pids, nsPID{p.PID, s.nsPath(p.Host)})
	}
	r.Stopped += m.stop(pids)
	var rest []nsPID
	for _, n := range names {
		found, _ := netns.PIDs(netns.Path(n))
		for _, pid := range found {
			rest = append(rest, nsPID{pid, netns.Path(n)})
		}
	}
	r.Stopped += m.stop(rest)

	var errs []error
	for _, n := range names {
		if _, err := os.Stat(netns.Path(n)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := runAll(ctx, m.opt.Runner, netplan.Down([]string{n})); err != nil {
			errs = append(errs, err)
			continue
		}
		r.Namespaces = append(r.Namespaces, n)
	}
	r.Cgroups, errs = m.removeCgroups(s, errs)
	if len(errs) == 0 && s.Name != "" {
		if err := os.RemoveAll(filepath.Join(m.opt.StateRoot, s.Name)); err != nil {
			errs = append(errs, err)
		}
	}
	return r, errors.Join(errs...)
}

type nsPID struct {
	pid  int
	path string // the namespace it must be in to be signalled
}

// stop sends SIGTERM to every pid still inside its namespace, waits up to
// the grace period for them to go, then sends SIGKILL to the rest. It
// returns how many it signalled.
func (m *Manager) stop(pids []nsPID) int {
	n := 0
	var alive []nsPID
	for _, p := range pids {
		if p.pid > 0 && netns.Signal(p.pid, p.path, syscall.SIGTERM) {
			n++
			alive = append(alive, p)
		}
	}
	deadline := time.Now().Add(m.opt.StopGrace)
	for len(alive) > 0 && time.Now().Before(deadline) {
		alive = slices.DeleteFunc(alive, func(p nsPID) bool { return !netns.PIDIn(p.pid, p.path) })
		time.Sleep(20 * time.Millisecond) // polling processes for exit; no event to wait on
	}
	for _, p := range alive {
		m.logf("%d did not stop within %s: SIGKILL", p.pid, m.opt.StopGrace)
		netns.Signal(p.pid, p.path, syscall.SIGKILL)
	}
	// Wait (bounded) for the kill to land, so the namespaces are free.
	deadline = time.Now().Add(5 * time.Second)
	for len(alive) > 0 && time.Now().Before(deadline) {
		alive = slices.DeleteFunc(alive, func(p nsPID) bool { return !netns.PIDIn(p.pid, p.path) })
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// removeCgroups removes the groups in the state and any other group of the
// testbed found under the controller's hierarchy.
func (m *Manager) removeCgroups(s *State, errs []error) ([]string, []error) {
	var dirs []string
	var ctl cgroup.Controller
	if s.Cgroup != nil {
		ctl = s.Cgroup.controller()
		for _, d := range s.Cgroup.Dirs {
			dirs = append(dirs, d)
		}
	} else if c, err := cgroup.Detect(m.opt.Mountinfo); err == nil {
		ctl = c
	}
	if ctl == nil {
		return nil, errs
	}
	base := filepath.Join(cgroupRoot(ctl), cgroup.Base, s.Name)
	if entries, err := os.ReadDir(base); err == nil {
		for _, e := range entries {
			if d := filepath.Join(base, e.Name()); e.IsDir() && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	slices.Sort(dirs)
	var removed []string
	for _, d := range dirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := ctl.Remove(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, d)
	}
	return removed, errs
}

// hasCgroups reports whether testbed name left groups behind.
func (m *Manager) hasCgroups(name string) bool {
	ctl, err := cgroup.Detect(m.opt.Mountinfo)
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(cgroupRoot(ctl), cgroup.Base, name))
	return err == nil
}

// Purge deletes testbed name's work dir (configs, data, logs). It refuses
// while the testbed is up.
func (m *Manager) Purge(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "/.") {
		return "", fmt.Errorf("purge: bad testbed name %q", name)
	}
	if _, err := loadState(m.opt.StateRoot, name); err == nil {
		return "", fmt.Errorf("testbed %q is up: run `smarth testbed down --name %s` first", name, name)
	}
	dir := filepath.Join(m.opt.WorkRoot, name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return dir, nil
	}
	return dir, os.RemoveAll(dir)
}
