package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"smarth/internal/testbed/cgroup"
	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/netplan"
	"smarth/internal/testbed/topo"
)

// startAll starts the proxies and daemons stage by stage, waiting for each
// stage's ready files, and then for the datanodes to register.
func (m *Manager) startAll(ctx context.Context, s *State) error {
	plan, err := daemonplan.Plan(s.Topology, s.WorkDir)
	if err != nil {
		return err
	}
	if len(plan) == 0 {
		return nil
	}
	if err := s.prepareSecrets(plan); err != nil {
		return err
	}
	if err := m.startProxies(ctx, s, plan); err != nil {
		return err
	}
	for stage := daemonplan.StageNameNode; stage <= daemonplan.StageNodeManagers; stage++ {
		var started []*child
		for _, d := range plan {
			if d.Stage != stage {
				continue
			}
			c, err := m.startDaemon(s, d)
			if err != nil {
				return err
			}
			started = append(started, c)
		}
		if len(started) == 0 {
			continue
		}
		if err := s.save(); err != nil {
			return err
		}
		if err := m.waitReady(ctx, s, started); err != nil {
			return err
		}
		if err := s.save(); err != nil {
			return err
		}
		if stage == daemonplan.StageDataNodes {
			if err := m.waitRegistered(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// child is a process this Manager started and reaps.
type child struct {
	name     string
	ready    string // ready file, "" for none
	out, log string // where to look when it fails
	index    int    // in s.Daemons, -1 for others
	exited   chan struct{}
	err      error // valid once exited is closed
}

// launch starts argv inside host's namespace (and cgroup), detached from
// this process so it outlives `smarth testbed up`, with stdout and stderr
// to outFile. The command line is the testbed's own helper:
//
//	smarth testbed enter --cgroup-procs F -- ip netns exec NS argv...
//
// which joins the cgroup and then execs, so the pid recorded is the
// daemon's own.
func (m *Manager) launch(s *State, host, outFile string, argv []string, env []string) (*exec.Cmd, *child, error) {
	args := []string{"testbed", "enter"}
	if s.Cgroup != nil {
		args = append(args, "--cgroup-procs", s.Cgroup.controller().ProcsFile(s.Cgroup.Dirs[host]))
	}
	ns := netplan.Names{Testbed: s.Name}.Host(host)
	args = append(args, "--", "ip", "netns", "exec", ns)
	args = append(args, argv...)
	if err := os.MkdirAll(filepath.Dir(outFile), 0o755); err != nil {
		return nil, nil, err
	}
	out, err := os.OpenFile(outFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(s.Tool, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = filepath.Join(s.WorkDir, host)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := os.MkdirAll(cmd.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s on %s: %w", argv[0], host, err)
	}
	c := &child{out: outFile, index: -1, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return cmd, c, nil
}

// Env is the environment of every process the testbed starts on a host,
// so that tools inside find their cluster: SMARTH_NAMENODE (an HA
// group's members as a comma list, which clients fail over across),
// SMARTH_RESOURCEMANAGER and, with TLS, SMARTH_TLS_CA_FILE are what
// smarth fs, admin, job and bench read.
func (s *State) Env(host string) []string {
	env := []string{"SMARTH_TESTBED=" + s.Name, "SMARTH_TESTBED_HOST=" + host}
	if nn := daemonplan.NameNodeAddr(s.Topology); nn != "" {
		env = append(env, "SMARTH_NAMENODE="+nn)
	}
	if rm := daemonplan.ResourceManagerAddr(s.Topology); rm != "" {
		env = append(env, "SMARTH_RESOURCEMANAGER="+rm)
	}
	// The cluster is secure: tools act as the testbed's owner.
	env = append(env, "SMARTH_TOKEN_FILE="+s.TokenFile())
	if ca := s.CAFile(); ca != "" {
		env = append(env, "SMARTH_TLS_CA_FILE="+ca)
	}
	return env
}

func (m *Manager) startDaemon(s *State, d daemonplan.Daemon) (*child, error) {
	for _, dir := range []string{filepath.Dir(d.ConfigFile), filepath.Dir(d.ReadyFile), filepath.Dir(d.LogFile)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	for _, key := range []string{"meta_dir", "data_dir", "work_dir"} {
		if dir, ok := d.Config[key].(string); ok {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
	}
	if err := s.placeSecrets(d); err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(d.Config)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(d.ConfigFile, data); err != nil {
		return nil, err
	}
	if err := os.Remove(d.ReadyFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the stale ready file of %s: %w", d.Name(), err)
	}
	argv := append([]string{s.Binary}, d.Args()...)
	cmd, c, err := m.launch(s, d.Host, d.OutFile, argv, s.Env(d.Host))
	if err != nil {
		return nil, err
	}
	c.name, c.ready, c.log, c.index = d.Name(), d.ReadyFile, d.LogFile, len(s.Daemons)
	s.Daemons = append(s.Daemons, DaemonState{Daemon: d, PID: cmd.Process.Pid})
	m.logf("started %s (pid %d)", d.Name(), cmd.Process.Pid)
	return c, nil
}

// waitReady waits until every child has written its ready file, failing
// early with the child's last output if one exits first.
func (m *Manager) waitReady(ctx context.Context, s *State, cs []*child) error {
	ctx, cancel := context.WithTimeout(ctx, m.opt.ReadyTimeout)
	defer cancel()
	for _, c := range cs {
		for {
			ready, err := readReady(c.ready)
			if err == nil {
				if c.index >= 0 {
					s.Daemons[c.index].Ready = ready
				}
				break
			}
			select {
			case <-c.exited:
				return fmt.Errorf("%s exited before it was ready (%v):\n%s", c.name, c.err, c.tail())
			case <-ctx.Done():
				return fmt.Errorf("%s did not write its ready file %s within %s:\n%s", c.name, c.ready, m.opt.ReadyTimeout, c.tail())
			case <-time.After(25 * time.Millisecond): // poll the ready file
			}
		}
	}
	return nil
}

func readReady(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// tail is the end of the child's output and log, for error messages.
func (c *child) tail() string {
	var b strings.Builder
	for _, f := range []string{c.out, c.log} {
		if f == "" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil || len(data) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 15 {
			lines = lines[len(lines)-15:]
		}
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", f, len(lines), strings.Join(lines, "\n"))
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return b.String()
}

// Enter is the helper behind `smarth testbed enter`: it moves this
// process into the cgroup whose procs file is given (if any), then execs
// argv. The caller has already chosen argv to start with `ip netns exec`.
func Enter(cgroupProcs string, argv []string) error {
	if len(argv) == 0 {
		return errors.New("enter: no command")
	}
	if cgroupProcs != "" {
		if err := cgroup.Join(cgroupFileController(cgroupProcs), filepath.Dir(cgroupProcs), os.Getpid()); err != nil {
			return fmt.Errorf("join the host's cgroup: %w", err)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

// cgroupFileController is a controller whose procs file is the given one;
// v1 and v2 both call it cgroup.procs.
func cgroupFileController(string) cgroup.Controller { return cgroup.V1{} }

// hostsWith lists the names of the hosts with role r.
func hostsWith(t *topo.Topology, r topo.Role) []string {
	var names []string
	for _, h := range t.WithRole(r) {
		names = append(names, h.Name)
	}
	return names
}
