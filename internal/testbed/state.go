package testbed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"smarth/internal/atomicfile"
	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/topo"
)

// Phases of a testbed's life, recorded in its state.
const (
	PhaseCreating = "creating" // up is running or crashed half way
	PhaseUp       = "up"
)

const stateVersion = 1

// State is everything a testbed made, written before it is made.
type State struct {
	Version      int            `json:"version"`
	Name         string         `json:"name"`
	Phase        string         `json:"phase"`
	Created      time.Time      `json:"created"`
	TopologyFile string         `json:"topology_file"`
	Topology     *topo.Topology `json:"topology"` // with the current shapes
	Namespaces   []string       `json:"namespaces"`
	Netem        bool           `json:"netem"`
	Cgroup       *CgroupState   `json:"cgroup,omitempty"`
	WorkDir      string         `json:"work_dir"`
	Binary       string         `json:"binary"` // runs the daemons
	Tool         string         `json:"tool"`   // runs helpers (enter, delayproxy)
	Daemons      []DaemonState  `json:"daemons,omitempty"`
	Proxies      []ProxyState   `json:"proxies,omitempty"`
	Cuts         []Cut          `json:"cuts,omitempty"` // partitions in force

	path string // the state file
}

// CgroupState records the disk-cap groups.
type CgroupState struct {
	Kind   string            `json:"kind"` // "v1" or "v2"
	Root   string            `json:"root"` // the hierarchy's mount point
	Device string            `json:"device"`
	Dirs   map[string]string `json:"dirs"` // host -> group directory
}

// DaemonState is a started daemon.
type DaemonState struct {
	daemonplan.Daemon
	PID   int            `json:"pid"`
	Ready map[string]any `json:"ready,omitempty"`
}

// ProxyState is a started delay proxy.
type ProxyState struct {
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	ConfigFile string `json:"config_file"`
}

// stateFile is where testbed name keeps its state under root.
func stateFile(root, name string) string { return filepath.Join(root, name, "state.json") }

func (s *State) save() error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.path, append(data, '\n'))
}

// writeFileAtomic replaces path (atomicfile), making its directory.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

// loadState reads testbed name's state; os.ErrNotExist if there is none.
func loadState(root, name string) (*State, error) {
	path := stateFile(root, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read testbed state %s: %w", path, err)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("testbed state %s has version %d, this smarth reads %d", path, s.Version, stateVersion)
	}
	s.path = path
	return &s, nil
}

// listStates names the testbeds that have a state under root.
func listStates(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(stateFile(root, e.Name())); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// lock takes testbed name's lock, so two commands never change one testbed
// at once. The lock is released when the returned function is called or
// the process dies.
func lock(root, name string) (func(), error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(root, name+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another smarth testbed command is working on %q right now (lock %s)", name, path)
	}
	return func() {
		// No state, no testbed: the lock file goes too, still locked,
		// so a testbed that is gone leaves nothing in root.
		if _, err := os.Stat(stateFile(root, name)); errors.Is(err, os.ErrNotExist) {
			os.Remove(path)
		}
		f.Close()
	}, nil
}
