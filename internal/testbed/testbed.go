package testbed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/netplan"
)

// Default locations. State lives in /run (gone after a reboot, like the
// namespaces it describes); data and logs live on disk, where disk caps
// and datanode blocks belong.
const (
	DefaultStateRoot = "/run/smarth-testbed"
	DefaultWorkRoot  = "/var/tmp/smarth-testbed"
)

// Options configure a Manager. Zero values take the defaults named.
type Options struct {
	StateRoot string // default DefaultStateRoot
	WorkRoot  string // default DefaultWorkRoot; a testbed's files go to <WorkRoot>/<name>
	// Tool is the smarth executable that runs the testbed's helpers
	// ("smarth testbed enter", "smarth testbed delayproxy"); default the
	// running executable.
	Tool string
	// Binary is the smarth executable that runs the daemons; default Tool.
	Binary string
	Runner Runner    // default ExecRunner
	Out    io.Writer // progress lines; default discard

	ReadyTimeout time.Duration // per start-up stage; default 60s
	StopGrace    time.Duration // SIGTERM to SIGKILL; default 10s

	// Seams for tests of the pre-flight checks.
	Euid      func() int
	LookPath  func(string) (string, error)
	Mountinfo string // default /proc/self/mountinfo
}

// Manager brings testbeds up and down and works with running ones.
type Manager struct{ opt Options }

// New checks nothing yet: each operation checks what it needs.
func New(opt Options) (*Manager, error) {
	if opt.StateRoot == "" {
		opt.StateRoot = DefaultStateRoot
	}
	if opt.WorkRoot == "" {
		opt.WorkRoot = DefaultWorkRoot
	}
	if opt.Tool == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the smarth binary: %w", err)
		}
		opt.Tool = exe
	}
	if opt.Binary == "" {
		opt.Binary = opt.Tool
	}
	for _, p := range []*string{&opt.Tool, &opt.Binary, &opt.WorkRoot, &opt.StateRoot} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	if opt.Runner == nil {
		opt.Runner = ExecRunner{}
	}
	if opt.Out == nil {
		opt.Out = io.Discard
	}
	if opt.ReadyTimeout == 0 {
		opt.ReadyTimeout = 60 * time.Second
	}
	if opt.StopGrace == 0 {
		opt.StopGrace = 10 * time.Second
	}
	if opt.Euid == nil {
		opt.Euid = os.Geteuid
	}
	if opt.LookPath == nil {
		opt.LookPath = exec.LookPath
	}
	if opt.Mountinfo == "" {
		opt.Mountinfo = "/proc/self/mountinfo"
	}
	return &Manager{opt: opt}, nil
}

func (m *Manager) logf(format string, a ...any) { fmt.Fprintf(m.opt.Out, format+"\n", a...) }

// ErrNotRoot is returned when the caller is not root.
var ErrNotRoot = errors.New("smarth testbed needs root: it creates network namespaces, veth pairs, tc qdiscs and cgroups (run it with sudo)")

// Preflight checks what every changing operation needs: root and iproute2.
func (m *Manager) Preflight() error {
	if m.opt.Euid() != 0 {
		return ErrNotRoot
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := m.opt.LookPath(tool); err != nil {
			return fmt.Errorf("iproute2 is missing: %q is not in PATH (install the iproute2 package, e.g. apt-get install iproute2)", tool)
		}
	}
	return nil
}

// Names lists the testbeds that have a state on this machine.
func (m *Manager) Names() ([]string, error) { return listStates(m.opt.StateRoot) }

// pick resolves an empty name to the only testbed that is up.
func (m *Manager) pick(name string) (string, error) {
	if name != "" {
		return name, nil
	}
	names, err := m.Names()
	if err != nil {
		return "", err
	}
	switch len(names) {
	case 0:
		return "", errors.New("no testbed is up (smarth testbed up FILE.yaml starts one)")
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("several testbeds are up (%s): choose one with --name", strings.Join(names, ", "))
}

// Load reads the state of testbed name ("" = the only one up).
func (m *Manager) Load(name string) (*State, error) {
	name, err := m.pick(name)
	if err != nil {
		return nil, err
	}
	s, err := loadState(m.opt.StateRoot, name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("testbed %q is not up (no state at %s)", name, stateFile(m.opt.StateRoot, name))
	}
	return s, err
}

// nsPath is the namespace file of host h of state s.
func (s *State) nsPath(host string) string {
	return netns.Path(netplan.Names{Testbed: s.Name}.Host(host))
}
