package cluster

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"smarth/internal/atomicfile"
	"smarth/internal/auth"
	"smarth/internal/daemonconf"
)

// Options describe the local cluster to start. Zero values take the
// defaults named on each field.
type Options struct {
	Home   string // configs, logs, data, cluster.json; default Home()
	Binary string // the smarth executable; default the running one

	// NameNodes is how many namenodes: 1 (the default: one namenode
	// called namenode, today's layout) or an HA group of 3 or 5 called
	// nn1..nnN (see ha.go; it turns TLS on).
	NameNodes int
	DataNodes int      // default 3
	Racks     []string // rack of dn1..dnN; default alternating /rack-a, /rack-b
	// NodeManagers also starts a resource manager and one node manager
	// per datanode, with the datanode's hostname (data locality).
	NodeManagers bool

	Replication int   // namenode default replication; default min(3, DataNodes)
	BlockSize   int64 // namenode default block size; 0 = the namenode's default

	// NameNodeRPC and NameNodeHTTP are the namenode's addresses; default
	// 127.0.0.1:8020 and 127.0.0.1:9870 when free, else port 0.
	NameNodeRPC, NameNodeHTTP string
	// ResourceManagerHTTP is the resource manager's web address (with
	// NodeManagers); default YARN's 127.0.0.1:8088 when free, else port
	// 0. When NameNodeHTTP asks for port 0 (tests and benchmarks keeping
	// off the well-known ports) it defaults to port 0 too. A concrete
	// port is given to the namenode as resourcemanager_web, so its
	// console links to the job pages; a port-0 one is known only after
	// the namenode started, and the namenode then shows no link.
	ResourceManagerHTTP string

	// Cache selects the seed 003 baseline: block cache, cache policy,
	// scheduler, drop-behind and a disk read cap.
	Cache CacheOptions

	// Auth is the cluster's auth mode: "secure" (the default: keys made
	// under home/keys, the launching user's token file written to
	// home/tokens; see secure.go) or "simple" (the namenode trusts
	// asserted names; Up warns).
	Auth string
	// TLS turns the wire's TLS on for every daemon: a CA and a
	// certificate per daemon made under home/tls (see secure.go).
	TLS bool

	// Extra config keys per daemon kind, merged over the generated ones
	// (e.g. {"placement": "speedaware"} for the namenode).
	NameNode, DataNode, ResourceManager, NodeManager map[string]any

	// Detach lets the daemons outlive this process (smarth cluster up).
	// Without it they die with the thread that started them.
	Detach bool

	// socketPath is the datanodes' domain_socket_path (shortcircuit.go),
	// set by Up; "" leaves them without one.
	socketPath string

	ReadyTimeout time.Duration // per step; default 60s
	StopGrace    time.Duration // SIGTERM to SIGKILL; default 10s
	Out          io.Writer     // progress lines; default discard
}

func (o *Options) setDefaults() error {
	// Home, timeouts and output default as for one daemon's control.
	c := ControlOptions{Home: o.Home, ReadyTimeout: o.ReadyTimeout, StopGrace: o.StopGrace, Out: o.Out}
	if err := c.setDefaults(); err != nil {
		return err
	}
	o.Home, o.ReadyTimeout, o.StopGrace, o.Out = c.Home, c.ReadyTimeout, c.StopGrace, c.Out
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the smarth binary: %w", err)
		}
		o.Binary = exe
	}
	if o.DataNodes == 0 {
		o.DataNodes = 3
	}
	if o.DataNodes < 1 {
		return fmt.Errorf("--datanodes must be at least 1, got %d", o.DataNodes)
	}
	if len(o.Racks) == 0 {
		for i := range o.DataNodes {
			o.Racks = append(o.Racks, []string{"/rack-a", "/rack-b"}[i%2])
		}
	}
	if len(o.Racks) != o.DataNodes {
		return fmt.Errorf("%d racks given for %d datanodes", len(o.Racks), o.DataNodes)
	}
	if err := o.checkNameNodes(); err != nil {
		return err
	}
	if err := o.Cache.check(); err != nil {
		return err
	}
	if err := o.checkAuth(); err != nil {
		return err
	}
	if err := o.checkExtraKeys(); err != nil {
		return err
	}
	if o.Replication == 0 {
		o.Replication = min(3, o.DataNodes)
	}
	if o.NameNodeRPC == "" {
		o.NameNodeRPC = freeOrAny("127.0.0.1:8020")
	}
	if o.NameNodeHTTP == "" {
		o.NameNodeHTTP = freeOrAny("127.0.0.1:9870")
	}
	if o.NodeManagers && o.ResourceManagerHTTP == "" {
		o.ResourceManagerHTTP = "127.0.0.1:0"
		if !anyPort(o.NameNodeHTTP) {
			o.ResourceManagerHTTP = freeOrAny("127.0.0.1:8088")
		}
	}
	return nil
}

// freeOrAny returns addr if it can be bound now, else the same host with
// port 0. The port may be taken between this check and the daemon's bind;
// the daemon then fails with a clear error and `up` reports it.
func freeOrAny(addr string) string {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		host, _, _ := net.SplitHostPort(addr)
		return net.JoinHostPort(host, "0")
	}
	l.Close()
	return addr
}

// anyPort reports whether addr asks for any free port (port 0).
func anyPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && (port == "0" || port == "")
}

// layout names the files of one daemon in a cluster home.
type layout struct{ home string }

func (l layout) config(name string) string { return filepath.Join(l.home, "conf", name+".yaml") }
func (l layout) ready(name string) string  { return filepath.Join(l.home, "run", name+".ready") }
func (l layout) log(name string) string    { return filepath.Join(l.home, "logs", name+".log") }
func (l layout) out(name string) string    { return filepath.Join(l.home, "logs", name+".out") }
func (l layout) data(name string) string   { return filepath.Join(l.home, "data", name) }

// Hostname is the hostname of datanode i (0-based): dn1, dn2, ...
func Hostname(i int) string { return fmt.Sprintf("dn%d", i+1) }

// nameNodeConfig is the namenode's config file, as its keys: the typed
// config the options make (a field left zero keeps the namenode's
// default) with the caller's extra keys merged over it (daemonconf.Keys,
// which refuses a key the namenode does not have).
func (o *Options) nameNodeConfig(l layout) (map[string]any, error) {
	return o.nameNodeConfigFor(l, "namenode", o.NameNodeRPC, o.NameNodeHTTP, daemonconf.NameNodeHA{})
}

// nameNodeConfigFor is the config of the namenode called name (its
// metadata under data/<name>, its certificate <name>.pem) at the given
// addresses, a member of an HA group when ha has an id.
func (o *Options) nameNodeConfigFor(l layout, name, rpc, http string, ha daemonconf.NameNodeHA) (map[string]any, error) {
	racks := map[string]string{}
	for i, r := range o.Racks {
		racks[Hostname(i)] = r
	}
	// Clients on this machine reach the namenode from 127.0.0.1: map it
	// to the first rack, as an HDFS topology table maps a gateway host,
	// so rack-aware placement puts an off-cluster writer's first replica
	// in its rack. Datanodes are placed by their hostnames (looked up
	// first), so this changes only clients.
	if len(o.Racks) > 0 {
		racks["127.0.0.1"] = o.Racks[0]
	}
	c := daemonconf.NameNodeConfig{
		RPCAddr:     rpc,
		HTTPAddr:    http,
		MetaDir:     l.data(name),
		Replication: o.Replication,
		Racks:       racks,
		// Deletes go to the trash for a day, as most HDFS deployments
		// configure it (HDFS's own default is off).
		TrashInterval: 24 * time.Hour,
		BlockSize:     o.BlockSize, // 0: the namenode's default
		Wire:          o.wire(l, name),
		HA:            ha,
	}
	if o.NodeManagers && o.ResourceManagerHTTP != "" && !anyPort(o.ResourceManagerHTTP) {
		c.ResourceManagerWeb = o.ResourceManagerHTTP
	}
	o.nameNodeAuth(l, &c)
	o.Cache.nameNode(&c)
	return daemonconf.Keys(c, o.NameNode)
}

func (o *Options) dataNodeConfig(l layout, i int, nn string) (map[string]any, error) {
	name := Hostname(i)
	c := daemonconf.DataNodeConfig{
		NameNode: nn,
		Hostname: name,
		DataAddr: "127.0.0.1:0",
		IPCAddr:  "127.0.0.1:0",
		HTTPAddr: "127.0.0.1:0",
		DataDir:  l.data(name),
		Rack:     o.Racks[i],
		Wire:     o.wire(l, name),
		// Clients here read replicas on this host from their files.
		DomainSocketPath: o.socketPath,
	}
	o.dataNodeAuth(l, &c)
	o.Cache.dataNode(&c)
	return daemonconf.Keys(c, o.DataNode)
}

func (o *Options) resourceManagerConfig(l layout, nn string) (map[string]any, error) {
	c := daemonconf.ResourceManagerConfig{
		RPCAddr:  "127.0.0.1:0",
		HTTPAddr: cmp.Or(o.ResourceManagerHTTP, "127.0.0.1:0"),
		NameNode: nn,
		// The local cluster is one user's machine: streaming jobs run
		// commands as that user anyway.
		AllowStreaming: true,
		// Jobs outlive a restart of the resource manager (job history).
		HistoryDir: l.data("resourcemanager"),
		Wire:       o.wire(l, "resourcemanager"),
	}
	o.resourceManagerAuth(l, &c)
	o.Cache.resourceManager(&c)
	return daemonconf.Keys(c, o.ResourceManager)
}

func (o *Options) nodeManagerConfig(l layout, i int, nn, nnHTTP, rm string) (map[string]any, error) {
	c := daemonconf.NodeManagerConfig{
		ResourceManager: rm,
		NameNode:        nn,
		Hostname:        Hostname(i),
		Rack:            o.Racks[i],
		RPCAddr:         "127.0.0.1:0",
		ShuffleAddr:     "127.0.0.1:0",
		HTTPAddr:        "127.0.0.1:0",
		WorkDir:         l.data(fmt.Sprintf("nm%d", i+1)),
		Wire:            o.wire(l, fmt.Sprintf("nm%d", i+1)),
	}
	o.nodeManagerAuth(l, &c)
	if o.Auth != auth.Simple && nnHTTP != "" {
		// Containers get a delegation token of their job's submitter.
		c.NameNodeHTTP = nnHTTP
	}
	return daemonconf.Keys(c, o.NodeManager)
}

func writeConfig(path string, c map[string]any) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o644)
}
