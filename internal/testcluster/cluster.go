package testcluster

import (
	"fmt"
	"sync"
	"testing"

	"smarth/internal/daemonconf"
	"smarth/internal/datanode"
	"smarth/internal/datanode/webhdfs"
	"smarth/internal/namenode"
)

// Cluster is an in-process test cluster: one namenode and N datanodes as
// libraries in the test process, each listening on 127.0.0.1:0 with its
// data in t.TempDir().
type Cluster struct {
	base
	root string // t.TempDir(): namenode/ and dn1.. below

	mu       sync.Mutex // guards nn, nnAddr, nnHTTP, dns
	nn       *namenode.NameNode
	nnAddr   string
	nnHTTP   string
	dns      []*datanode.DataNode // nil while stopped
	restarts []int                // per datanode, for log names
}

// Start starts an in-process cluster and waits until every datanode is
// registered and the namenode has left safe mode. The cluster is closed
// when t ends.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if err := opts.setDefaults(); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{root: t.TempDir()}
	if err := opts.makeKeys(c.root); err != nil {
		t.Fatal(err)
	}
	c.base = base{t: t, opts: opts, logs: newLogs(opts.Verbose), addr: c.NameNodeAddr}
	c.dns = make([]*datanode.DataNode, opts.DataNodes)
	c.restarts = make([]int, opts.DataNodes)
	t.Cleanup(c.Close)
	if err := c.startNameNode("127.0.0.1:0", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for i := range opts.DataNodes {
		if err := c.startDataNode(i); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, Hostname(i))
	}
	if err := c.waitRegistered(hosts); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *Cluster) startNameNode(rpcAddr, httpAddr string) error {
	cfg := namenode.DefaultConfig()
	file, err := c.opts.nameNodeConfig(nodeDir(c.root, "namenode"), rpcAddr, httpAddr)
	if err == nil {
		err = daemonconf.Decode(file, &cfg)
	}
	if err != nil {
		return fmt.Errorf("testcluster: namenode config: %w", err)
	}
	nn, err := namenode.New(cfg, c.logs.logger("namenode"))
	if err != nil {
		return fmt.Errorf("testcluster: namenode: %w", err)
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		return fmt.Errorf("testcluster: start namenode: %w", err)
	}
	c.mu.Lock()
	c.nn, c.nnAddr, c.nnHTTP = nn, nn.Addr(), nn.HTTPAddr()
	c.mu.Unlock()
	return nil
}

func (c *Cluster) startDataNode(i int) error {
	cfg := datanode.DefaultConfig()
	file, err := c.opts.dataNodeConfig(i, c.NameNodeAddr(), nodeDir(c.root, Hostname(i)))
	if err == nil {
		err = daemonconf.Decode(file, &cfg)
	}
	if err != nil {
		return fmt.Errorf("testcluster: %s config: %w", Hostname(i), err)
	}
	if c.opts.Links != nil {
		cfg.Dial = c.opts.Links.dialer(Hostname(i))
	}
	if c.opts.FS != nil {
		cfg.FS = c.opts.FS(i)
	}
	cliTLS, err := cfg.Wire.Client()
	if err != nil {
		return fmt.Errorf("testcluster: %s tls: %w", Hostname(i), err)
	}
	cfg.WebHDFS = webhdfs.New(webhdfs.Config{NameNode: c.NameNodeAddr(), ClientHost: Hostname(i), TLS: cliTLS, Logger: c.logs.logger(Hostname(i) + "-webhdfs")})
	c.mu.Lock()
	c.restarts[i]++
	name := Hostname(i)
	if c.restarts[i] > 1 {
		name = fmt.Sprintf("%s#%d", name, c.restarts[i])
	}
	c.mu.Unlock()
	dn, err := datanode.New(cfg, c.logs.logger(name))
	if err != nil {
		return fmt.Errorf("testcluster: %s: %w", Hostname(i), err)
	}
	if err := dn.Start(); err != nil {
		dn.Close()
		return fmt.Errorf("testcluster: start %s: %w", Hostname(i), err)
	}
	if c.opts.Links != nil {
		c.opts.Links.register(dn.DataAddr(), Hostname(i))
	}
	c.mu.Lock()
	c.dns[i] = dn
	c.mu.Unlock()
	return nil
}

// NameNodeAddr is the namenode's gRPC address.
func (c *Cluster) NameNodeAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nnAddr
}

// NameNodeHTTPAddr is the namenode's web/metrics address.
func (c *Cluster) NameNodeHTTPAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nnHTTP
}

// NameNode is the running namenode.
func (c *Cluster) NameNode() *namenode.NameNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nn
}

// DataNode is datanode i (0-based; hostname dn<i+1>), nil while stopped.
func (c *Cluster) DataNode(i int) *datanode.DataNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dns[i]
}

// DataDir is datanode i's data directory (kept across restarts).
func (c *Cluster) DataDir(i int) string { return nodeDir(c.root, Hostname(i)) }

// takeDataNode removes datanode i from the cluster for stopping it.
func (c *Cluster) takeDataNode(i int) *datanode.DataNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	dn := c.dns[i]
	c.dns[i] = nil
	return dn
}

// StopDataNode shuts datanode i down gracefully.
func (c *Cluster) StopDataNode(i int) {
	if dn := c.takeDataNode(i); dn != nil {
		if err := dn.Close(); err != nil {
			c.t.Errorf("testcluster: stop %s: %v", Hostname(i), err)
		}
	}
}

// KillDataNode stops datanode i as a crash would: listeners and
// connections closed at once, nothing flushed or reported.
func (c *Cluster) KillDataNode(i int) {
	if dn := c.takeDataNode(i); dn != nil {
		dn.Kill()
	}
}

// RestartDataNode stops datanode i if it runs and starts it again with
// the same data directory (new ports), then waits until it is registered.
func (c *Cluster) RestartDataNode(i int) {
	c.StopDataNode(i)
	if err := c.startDataNode(i); err != nil {
		c.t.Fatal(err)
	}
	if err := c.waitRegistered([]string{Hostname(i)}); err != nil {
		c.t.Fatal(err)
	}
}

// RestartNameNode closes the namenode and starts a new one on the same
// addresses and metadata directory.
func (c *Cluster) RestartNameNode() {
	c.mu.Lock()
	nn, addr, httpAddr := c.nn, c.nnAddr, c.nnHTTP
	c.nn = nil
	c.mu.Unlock()
	if nn != nil {
		if err := nn.Close(); err != nil {
			c.t.Errorf("testcluster: stop namenode: %v", err)
		}
	}
	if err := c.startNameNode(addr, httpAddr); err != nil {
		c.t.Fatal(err)
	}
	if err := c.waitRegistered(c.runningHosts()); err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) runningHosts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var hosts []string
	for i, dn := range c.dns {
		if dn != nil {
			hosts = append(hosts, Hostname(i))
		}
	}
	return hosts
}

// Close stops every daemon (datanodes first). Start registers it with
// t.Cleanup; calling it again is harmless.
func (c *Cluster) Close() {
	c.closeAdmin()
	for i := range c.dns {
		c.StopDataNode(i)
	}
	c.mu.Lock()
	nn := c.nn
	c.nn = nil
	c.mu.Unlock()
	if nn != nil {
		if err := nn.Close(); err != nil {
			c.t.Errorf("testcluster: stop namenode: %v", err)
		}
	}
	c.logs.dumpOnFailure(c.t)
}
