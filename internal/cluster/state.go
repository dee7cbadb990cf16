package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"smarth/internal/atomicfile"
	"time"
)

// StateFile is the name of the state file in a cluster home.
const StateFile = "cluster.json"

// Daemon is one process of a running cluster as recorded in the state file.
type Daemon struct {
	Name       string `json:"name"` // namenode, dn1.., rm, nm1..
	Kind       string `json:"kind"` // namenode, datanode, resourcemanager, nodemanager
	PID        int    `json:"pid"`
	Hostname   string `json:"hostname,omitempty"` // datanodes and node managers
	Rack       string `json:"rack,omitempty"`
	ConfigFile string `json:"config_file"`
	LogFile    string `json:"log_file"`
	ReadyFile  string `json:"ready_file"`
	Ready      Ready  `json:"ready"` // addresses, once ready
	WebURL     string `json:"web_url,omitempty"`
}

// State is the content of <home>/cluster.json: enough for status, down,
// `smarth fs` and `smarth job` to find and manage the cluster.
type State struct {
	Home            string    `json:"home"`
	Binary          string    `json:"binary"`
	Started         time.Time `json:"started"`
	Ready           bool      `json:"ready"`                     // every daemon ready, datanodes registered
	NameNode        string    `json:"namenode,omitempty"`        // rpc host:port
	NameNodeHTTP    string    `json:"namenode_http,omitempty"`   // host:port
	ResourceManager string    `json:"resourcemanager,omitempty"` // rpc host:port
	// Auth is the cluster's auth mode (secure: users' token files in
	// home/tokens); TLS says its daemons speak TLS with the CA in
	// home/tls (ClientSecurity).
	Auth    string   `json:"auth,omitempty"`
	TLS     bool     `json:"tls,omitempty"`
	Daemons []Daemon `json:"daemons"`
	// Cgroups are the block I/O groups that cap the datanodes' disks
	// (Options.Cache.DiskReadRate), removed by Down.
	Cgroups []string `json:"cgroups,omitempty"`
	// DomainSocketPath is the datanodes' domain_socket_path ("_PORT":
	// a datanode's data port): clients of the cluster read replicas on
	// this host through it (short-circuit reads), unless
	// ShortCircuitReads is false (the switch, as HDFS's
	// dfs.client.read.shortcircuit; on when unset). ClientDomainSocket.
	DomainSocketPath  string `json:"domain_socket_path,omitempty"`
	ShortCircuitReads *bool  `json:"short_circuit_reads,omitempty"`
}

// Daemon returns the recorded daemon with the given name.
func (s *State) Daemon(name string) (*Daemon, bool) {
	for i := range s.Daemons {
		if s.Daemons[i].Name == name {
			return &s.Daemons[i], true
		}
	}
	return nil, false
}

// Running reports whether the daemon's pid still runs this daemon.
func (d *Daemon) Running() bool { return pidRuns(d.PID, d.ConfigFile) }

// LoadState reads <home>/cluster.json.
func LoadState(home string) (*State, error) {
	p := filepath.Join(home, StateFile)
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, noClusterError{home}
		}
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &s, nil
}

// save writes the state atomically (atomicfile) so that readers never see
// half a file, even if `up` is killed while writing.
func (s *State) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(s.Home, StateFile), append(b, '\n'), 0o644)
}

// noClusterError says that a home has no state file. It matches
// os.ErrNotExist without repeating its text.
type noClusterError struct{ home string }

func (e noClusterError) Error() string {
	return fmt.Sprintf("no cluster in %s (no %s there; start one with `smarth cluster up`)", e.home, StateFile)
}

func (e noClusterError) Is(target error) bool { return target == os.ErrNotExist }

// Home is the cluster home used when none is given: $SMARTH_HOME, else
// ./.smarth in the current directory (the project-local default of the
// README's first command).
func Home() string {
	if h := os.Getenv("SMARTH_HOME"); h != "" {
		return h
	}
	return ".smarth"
}

// DefaultNameNodeAddr is the namenode address when nothing else says.
const DefaultNameNodeAddr = "127.0.0.1:8020"

// DefaultNameNode is the namenode address client commands (`smarth fs`,
// `smarth job`, `smarth bench`) use when no --namenode flag is given:
// $SMARTH_NAMENODE, else the local cluster's address from the state file in
// Home() if one is recorded, else 127.0.0.1:8020.
func DefaultNameNode() string {
	if a := os.Getenv("SMARTH_NAMENODE"); a != "" {
		return a
	}
	if s, err := LoadState(Home()); err == nil && s.NameNode != "" {
		return s.NameNode
	}
	return DefaultNameNodeAddr
}

// DefaultResourceManager is like DefaultNameNode for the resource manager:
// $SMARTH_RESOURCEMANAGER, else the state file, else 127.0.0.1:8032 (the
// YARN resource manager's well-known port).
func DefaultResourceManager() string {
	if a := os.Getenv("SMARTH_RESOURCEMANAGER"); a != "" {
		return a
	}
	if s, err := LoadState(Home()); err == nil && s.ResourceManager != "" {
		return s.ResourceManager
	}
	return "127.0.0.1:8032"
}
