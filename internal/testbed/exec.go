package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"smarth/internal/testbed/netplan"
)

// Command prepares argv to run on host of the testbed: inside the host's
// namespace and disk-cap group, in the host's work directory, with
// SMARTH_NAMENODE and SMARTH_TESTBED_HOST set. The caller wires stdio and
// runs it.
func (m *Manager) Command(ctx context.Context, s *State, host string, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command to run on %s", host)
	}
	if _, ok := s.Topology.Host(host); !ok {
		return nil, fmt.Errorf("testbed %s has no host %q (hosts: %v)", s.Name, host, s.Topology.HostNames())
	}
	if _, err := os.Stat(s.nsPath(host)); err != nil {
		return nil, fmt.Errorf("host %s of testbed %s has no namespace (%v): is the testbed half torn down? `smarth testbed down --name %s` cleans up", host, s.Name, err, s.Name)
	}
	args := []string{"testbed", "enter"}
	if s.Cgroup != nil {
		args = append(args, "--cgroup-procs", s.Cgroup.controller().ProcsFile(s.Cgroup.Dirs[host]))
	}
	args = append(args, "--", "ip", "netns", "exec", netplan.Names{Testbed: s.Name}.Host(host))
	cmd := exec.CommandContext(ctx, s.Tool, append(args, argv...)...)
	cmd.Env = append(os.Environ(), s.Env(host)...)
	cmd.Dir = filepath.Join(s.WorkDir, host)
	if err := os.MkdirAll(cmd.Dir, 0o755); err != nil {
		return nil, err
	}
	return cmd, nil
}
