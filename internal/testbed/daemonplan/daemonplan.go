package daemonplan

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/pki"
	"smarth/internal/testbed/topo"
)

// Well-known ports, one set per host address (Hadoop's defaults).
const (
	NameNodeRPC         = 8020
	NameNodeHTTP        = 9870
	DataNodeData        = 9866
	DataNodeIPC         = 9867
	DataNodeHTTP        = 9864
	ResourceManagerRPC  = 8032
	ResourceManagerHTTP = 8088
	NodeManagerRPC      = 8040
	NodeManagerShuffle  = 13562
	NodeManagerHTTP     = 8042
	// NameNodeRaft is an HA member's replicated-log port: HDFS's
	// JournalNode RPC port, the role the group's log plays there.
	NameNodeRaft = 8485
)

// Stages of start-up: each waits for the previous one to be ready.
const (
	StageNameNode = iota
	StageDataNodes
	StageResourceManager
	StageNodeManagers
)

// Daemon is one daemon to start.
type Daemon struct {
	Host       string         `json:"host"`
	Role       topo.Role      `json:"role"`
	Stage      int            `json:"stage"`
	Config     map[string]any `json:"-"` // the keys of its config file (daemonconf.Keys)
	ConfigFile string         `json:"config_file"`
	ReadyFile  string         `json:"ready_file"`
	LogFile    string         `json:"log_file"`
	OutFile    string         `json:"out_file"` // the child's stdout and stderr
	// Proxies are the delay proxies in front of this daemon's ports
	// (latency_mode proxy only).
	Proxies []Proxy `json:"proxies,omitempty"`
	// Secrets are the names of the cluster's secret files (AuthKey,
	// DataNodeKey, ServiceToken) this daemon's config points at in its
	// host's keys directory (KeyFile); the testbed copies them there, 0600,
	// before the start. Each host gets only what its daemons need.
	Secrets []string `json:"secrets,omitempty"`
	// Cert is the TLS certificate the testbed issues this daemon from
	// its CA before the start (topology tls, or an HA group); its files
	// are among Secrets.
	Cert *Cert `json:"cert,omitempty"`
}

// Cert is a daemon's certificate: its name (the common name, and the
// files' name in the keys directory) and the host names and addresses it
// is good for.
type Cert struct {
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
}

// The cluster's secret files (docs/security.md): the namenode's identity
// secret, the datanode key, and the services' token (the testbed
// owner's credential: the namenode's superuser, so the resource manager
// and node managers may act for submitters).
const (
	AuthKey      = "auth.key"
	DataNodeKey  = "datanode.key"
	ServiceToken = "service.token"
	// CACert is the testbed CA's certificate (its key never leaves the
	// testbed's own keys directory).
	CACert = "ca.pem"
)

// KeyFile is where host's copy of the secret file name lives.
func KeyFile(workDir, host, name string) string {
	return filepath.Join(workDir, host, "keys", name)
}

// Name is "<role>@<host>", for messages.
func (d Daemon) Name() string { return string(d.Role) + "@" + d.Host }

// Args are the smarth subcommand and flags that start the daemon.
func (d Daemon) Args() []string {
	return []string{string(d.Role), "--config", d.ConfigFile, "--ready-file", d.ReadyFile, "--log-file", d.LogFile}
}

// Proxy forwards a public address of a host to a daemon's private one.
type Proxy struct {
	Host   string `json:"host"`
	Listen string `json:"listen"`
	Target string `json:"target"`
}

// Plan lists the daemons of t, in start order. workDir holds one directory
// per host (configs, data, logs, ready files). It fails only on a
// topology's extra key that the daemon's config does not have or whose
// value does not fit (topo.Parse refuses those already).
func Plan(t *topo.Topology, workDir string) ([]Daemon, error) {
	p := planner{t: t, workDir: workDir, proxy: t.LatencyMode == topo.LatencyProxy}
	nn := t.WithRole(topo.NameNode)
	rm := t.WithRole(topo.ResourceManager)
	var ds []Daemon
	add := func(d Daemon, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name(), err)
		}
		ds = append(ds, d)
		return nil
	}
	for i, h := range nn {
		if err := add(p.nameNode(h, i)); err != nil {
			return nil, err
		}
	}
	for _, h := range t.WithRole(topo.DataNode) {
		if err := add(p.dataNode(h)); err != nil {
			return nil, err
		}
	}
	if len(rm) == 1 {
		if err := add(p.resourceManager(rm[0])); err != nil {
			return nil, err
		}
		for _, h := range t.WithRole(topo.NodeManager) {
			if err := add(p.nodeManager(h, rm[0])); err != nil {
				return nil, err
			}
		}
	}
	return ds, nil
}

// NameNodeAddr is the namenode setting clients and daemons get: the
// namenode's RPC address, or an HA group's members' as a comma list in
// file order, which they fail over across ("" without a namenode).
func NameNodeAddr(t *topo.Topology) string { return nameNodeList(t, NameNodeRPC) }

// NameNodeHTTPAddr is the namenodes' web addresses the same way: what
// node managers fetch jobs' delegation tokens from.
func NameNodeHTTPAddr(t *topo.Topology) string { return nameNodeList(t, NameNodeHTTP) }

func nameNodeList(t *topo.Topology, port int) string {
	var addrs []string
	for _, h := range t.WithRole(topo.NameNode) {
		addrs = append(addrs, hostPort(h.Addr, port))
	}
	return strings.Join(addrs, ",")
}

// HAID is the id of the i-th namenode (0-based, file order) of an HA
// group, as the local cluster names them: nn1, nn2, ... The first
// bootstraps the group.
func HAID(i int) string { return fmt.Sprintf("nn%d", i+1) }

// ResourceManagerAddr is the address job clients use for the resource
// manager ("" without one).
func ResourceManagerAddr(t *topo.Topology) string {
	rm := t.WithRole(topo.ResourceManager)
	if len(rm) == 0 {
		return ""
	}
	return hostPort(rm[0].Addr, ResourceManagerRPC)
}

type planner struct {
	t       *topo.Topology
	workDir string
	proxy   bool
}

func hostPort(a netip.Addr, port int) string { return net.JoinHostPort(a.String(), strconv.Itoa(port)) }

func (p planner) base(h *topo.Host, role topo.Role, stage int) Daemon {
	dir := filepath.Join(p.workDir, h.Name)
	r := string(role)
	return Daemon{
		Host: h.Name, Role: role, Stage: stage,
		ConfigFile: filepath.Join(dir, "conf", r+".yaml"),
		ReadyFile:  filepath.Join(dir, "run", r+".ready"),
		LogFile:    filepath.Join(dir, "logs", r+".log"),
		OutFile:    filepath.Join(dir, "logs", r+".out"),
	}
}

// listen is the address a daemon binds for port: the host's own, or
// loopback behind a proxy.
func (p planner) listen(d *Daemon, h *topo.Host, port int) string {
	public := hostPort(h.Addr, port)
	if !p.proxy {
		return public
	}
	private := hostPort(netip.MustParseAddr("127.0.0.1"), port)
	d.Proxies = append(d.Proxies, Proxy{Host: h.Name, Listen: public, Target: private})
	return private
}

func (p planner) dataDir(h *topo.Host, what string) string {
	return filepath.Join(p.workDir, h.Name, "data", what)
}

// key is the path of h's copy of the secret file name, which d then
// needs (the testbed copies it there before the start).
func (p planner) key(d *Daemon, h *topo.Host, name string) string {
	d.Secrets = append(d.Secrets, name)
	slices.Sort(d.Secrets)
	return KeyFile(p.workDir, h.Name, name)
}

// finish is d with its config file: cfg, the typed config p makes, and
// the topology's extra keys (file-wide, then the host's) merged over it.
func finish[C daemonconf.Config](p planner, d Daemon, h *topo.Host, cfg C) (Daemon, error) {
	keys, err := daemonconf.Keys(cfg, p.t.Daemons[string(d.Role)], h.Config[string(d.Role)])
	d.Config = keys
	return d, err
}

func (p planner) racks() map[string]string {
	m := map[string]string{}
	for _, h := range p.t.Hosts {
		r, _ := p.t.Rack(h.Rack)
		m[h.Name] = r.Path()
		m[h.Addr.String()] = r.Path()
	}
	return m
}

// Every generated config is secure (auth: secure for the namenode and the
// resource manager, as the local cluster's): each daemon's keys point at
// the secrets in its host's keys directory.

func (p planner) nameNode(h *topo.Host, i int) (Daemon, error) {
	d := p.base(h, topo.NameNode, StageNameNode)
	c := daemonconf.NameNodeConfig{
		RPCAddr:         p.listen(&d, h, NameNodeRPC),
		HTTPAddr:        p.listen(&d, h, NameNodeHTTP),
		MetaDir:         p.dataDir(h, "namenode"),
		Racks:           p.racks(),
		DefaultRack:     "/default-rack",
		Replication:     min(3, max(1, len(p.t.WithRole(topo.DataNode)))),
		Auth:            auth.Secure,
		AuthSecretFile:  p.key(&d, h, AuthKey),
		DatanodeKeyFile: p.key(&d, h, DataNodeKey),
	}
	name := "namenode-" + h.Name
	if p.t.HA() {
		name = HAID(i)
		c.HA = p.haGroup(name, i == 0)
	}
	c.Wire = p.wire(&d, h, name)
	return finish(p, d, h, c)
}

// haGroup is member id's ha_* keys: every member's public addresses
// (what clients are sent to), and its raft port on the host's own
// address even in proxy mode, since a member binds the raft address the
// others dial (the group's log then does not pass through a delay
// proxy). Each member's certificate is named after its id, which is how
// the raft port knows a member from another daemon of the cluster.
func (p planner) haGroup(id string, bootstrap bool) daemonconf.NameNodeHA {
	peers := map[string]daemonconf.NameNodeHAPeer{}
	for j, m := range p.t.WithRole(topo.NameNode) {
		peers[HAID(j)] = daemonconf.NameNodeHAPeer{
			RPC:  hostPort(m.Addr, NameNodeRPC),
			HTTP: hostPort(m.Addr, NameNodeHTTP),
			Raft: hostPort(m.Addr, NameNodeRaft),
		}
	}
	return daemonconf.NameNodeHA{ID: id, Peers: peers, Bootstrap: bootstrap}
}

// wire is d's TLS switch: off unless the topology has TLS, else d's
// certificate (named name, good for the host's name, its address, and
// loopback, where a daemon behind a delay proxy listens) and the CA, which
// the testbed places in the host's keys directory.
func (p planner) wire(d *Daemon, h *topo.Host, name string) pki.Config {
	if !p.t.TLS {
		return pki.Config{}
	}
	d.Cert = &Cert{Name: name, Hosts: []string{h.Name, h.Addr.String(), "127.0.0.1", "localhost"}}
	return pki.Config{TLS: true, CAFile: p.key(d, h, CACert),
		CertFile: p.key(d, h, name+".pem"), KeyFile: p.key(d, h, name+".key")}
}

func (p planner) rackOf(h *topo.Host) string {
	r, _ := p.t.Rack(h.Rack)
	return r.Path()
}

func (p planner) dataNode(h *topo.Host) (Daemon, error) {
	d := p.base(h, topo.DataNode, StageDataNodes)
	c := daemonconf.DataNodeConfig{
		NameNode:        NameNodeAddr(p.t),
		Hostname:        h.Name,
		AdvertiseIP:     h.Addr.String(),
		DataAddr:        p.listen(&d, h, DataNodeData),
		IPCAddr:         p.listen(&d, h, DataNodeIPC),
		HTTPAddr:        p.listen(&d, h, DataNodeHTTP),
		DataDir:         p.dataDir(h, "datanode"),
		Rack:            p.rackOf(h),
		DatanodeKeyFile: p.key(&d, h, DataNodeKey),
	}
	c.Wire = p.wire(&d, h, "datanode-"+h.Name)
	return finish(p, d, h, c)
}

func (p planner) resourceManager(h *topo.Host) (Daemon, error) {
	d := p.base(h, topo.ResourceManager, StageResourceManager)
	c := daemonconf.ResourceManagerConfig{
		RPCAddr:        p.listen(&d, h, ResourceManagerRPC),
		HTTPAddr:       p.listen(&d, h, ResourceManagerHTTP),
		NameNode:       NameNodeAddr(p.t),
		Auth:           auth.Secure,
		AuthSecretFile: p.key(&d, h, AuthKey),
		TokenFile:      p.key(&d, h, ServiceToken),
	}
	c.Wire = p.wire(&d, h, "resourcemanager-"+h.Name)
	return finish(p, d, h, c)
}

// nodeManager binds the host's address even in proxy mode: a node manager
// reports its own addresses to the resource manager and to reducers, and
// loopback would be useless to them.
func (p planner) nodeManager(h, rm *topo.Host) (Daemon, error) {
	d := p.base(h, topo.NodeManager, StageNodeManagers)
	c := daemonconf.NodeManagerConfig{
		ResourceManager: hostPort(rm.Addr, ResourceManagerRPC),
		NameNode:        NameNodeAddr(p.t),
		NameNodeHTTP:    NameNodeHTTPAddr(p.t),
		Hostname:        h.Name,
		Rack:            p.rackOf(h),
		RPCAddr:         hostPort(h.Addr, NodeManagerRPC),
		ShuffleAddr:     hostPort(h.Addr, NodeManagerShuffle),
		HTTPAddr:        hostPort(h.Addr, NodeManagerHTTP),
		WorkDir:         p.dataDir(h, "nodemanager"),
		TokenFile:       p.key(&d, h, ServiceToken),
	}
	c.Wire = p.wire(&d, h, "nodemanager-"+h.Name)
	return finish(p, d, h, c)
}

// Summary is one line per daemon saying where it listens, for `up`.
func Summary(ds []Daemon) []string {
	var lines []string
	for _, d := range ds {
		var addr string
		switch d.Role {
		case topo.NameNode, topo.ResourceManager:
			addr = fmt.Sprintf("rpc %v, http %v", public(d, "rpc_addr"), public(d, "http_addr"))
		case topo.DataNode:
			addr = fmt.Sprintf("data %v, http %v", public(d, "data_addr"), public(d, "http_addr"))
		case topo.NodeManager:
			addr = fmt.Sprintf("rpc %v, shuffle %v", d.Config["rpc_addr"], d.Config["shuffle_addr"])
		}
		lines = append(lines, fmt.Sprintf("%-16s %-9s %s", string(d.Role), d.Host, addr))
	}
	return lines
}

// public is the address others use for a config key: the proxy's when one
// fronts it.
func public(d Daemon, key string) string {
	v, _ := d.Config[key].(string)
	for _, p := range d.Proxies {
		if p.Target == v {
			return p.Listen
		}
	}
	return v
}
