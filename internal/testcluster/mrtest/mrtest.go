// Package mrtest runs a MapReduce cluster inside a test: one resource
// manager, one node manager per host (dn1..dnN by default, so that on a
// testcluster DFS every node manager is co-located with a datanode and
// data locality is real), and a job client, all on 127.0.0.1:0 with short
// heartbeats.
//
// It runs over a real DFS (Options.NameNode, e.g. a testcluster's
// namenode: daemons and client use smarth's client library, node managers
// with ClientHost = their hostname) or over any mapreduce.FS
// (Options.FS, e.g. a HostFS: a LocalFS reporting block hosts). It
// decides the test topology and intervals; the daemons are the real
// resourcemanager and nodemanager packages. Logs are kept and printed when the test fails
// (SMARTH_TEST_LOG=1 streams them).
package mrtest

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/nodemanager"
	"smarth/internal/pki"
	"smarth/internal/resourcemanager"
	"smarth/internal/testcluster"
)

// Options describe a test MapReduce cluster. Zero values take the
// defaults named on each field.
type Options struct {
	// NameNode is the DFS namenode's address; FS replaces it for tests
	// without a DFS. One of the two is required.
	NameNode string
	FS       mapreduce.FS
	// DFS, when set, is the test cluster the MapReduce cluster runs on:
	// NameNode is its address, and its credentials and TLS fill in
	// Credential and ServiceCredential (the OS user's: the namenode's
	// superuser), IdentitySecretFile, each daemon's TLS switch and the
	// clients' CA, unless given.
	DFS testcluster.DFS
	// Registry holds the apps jobs may run; required.
	Registry *mapreduce.Registry

	Hosts []string // node manager hostnames; default dn1, dn2, dn3
	// Racks are the node managers' configured racks (used when the
	// namenode knows no datanode of that hostname); default none.
	Racks []string

	Scheduler         string        // default "delay"
	HeartbeatInterval time.Duration // default 30ms
	NodeTimeout       time.Duration // default 1.5s
	SortBufferBytes   int           // default 256 KiB, so maps spill
	// RM and NM adjust the generated configs.
	RM func(*resourcemanager.Config)
	NM func(i int, cfg *nodemanager.Config)
	// WaitTimeout bounds WaitFor; default 30s.
	WaitTimeout time.Duration
	// Unregistered: Start does not wait for the node managers to
	// register (a test of node managers the resource manager refuses).
	Unregistered bool

	// For a secure namenode (the testcluster default): Credential
	// proves the submitter the job client and the test's DFS client act
	// as; ServiceCredential the resource manager and node managers (a
	// proxy user or the namenode's superuser, acting for submitters; with
	// a secure resource manager the node managers prove it on every
	// heartbeat, and its user must be one of RM's NodeManagerUsers, by
	// default the OS user's);
	// IdentitySecretFile makes the resource manager check submitters'
	// credentials (auth: secure).
	Credential, ServiceCredential string
	IdentitySecretFile            string
}

// Cluster is a running test MapReduce cluster; it is closed when the test
// ends.
type Cluster struct {
	t    testing.TB
	opts Options
	root string
	fs   mapreduce.FS
	rm   *resourcemanager.ResourceManager
	jc   *jobclient.Client

	mu  sync.Mutex // guards nms
	nms []*nodemanager.NodeManager
}

// Start starts the resource manager, the node managers and a job client,
// and waits until every node manager has registered (unless
// Unregistered).
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.DFS != nil {
		opts.fromDFS(t)
	}
	if opts.NameNode == "" && opts.FS == nil {
		t.Fatal("mrtest: neither NameNode nor FS given")
	}
	if opts.Registry == nil {
		t.Fatal("mrtest: no app registry")
	}
	if len(opts.Hosts) == 0 {
		opts.Hosts = []string{"dn1", "dn2", "dn3"}
	}
	if opts.Scheduler == "" {
		opts.Scheduler = "delay"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&opts.HeartbeatInterval, 30*time.Millisecond)
	def(&opts.NodeTimeout, 1500*time.Millisecond)
	def(&opts.WaitTimeout, 30*time.Second)
	if opts.SortBufferBytes == 0 {
		opts.SortBufferBytes = 256 << 10
	}
	c := &Cluster{t: t, opts: opts, root: t.TempDir(), fs: opts.FS}
	logs := &logSet{verbose: os.Getenv("SMARTH_TEST_LOG") != ""}
	t.Cleanup(func() {
		c.close()
		if t.Failed() {
			t.Logf("mrtest daemon logs (last lines):\n%s", logs.dump())
		}
	})

	rc := resourcemanager.DefaultConfig()
	rc.RPCAddr, rc.HTTPAddr, rc.NameNode, rc.FS = "127.0.0.1:0", "127.0.0.1:0", opts.NameNode, opts.FS
	rc.Scheduler, rc.HeartbeatInterval, rc.NodeTimeout = opts.Scheduler, opts.HeartbeatInterval, opts.NodeTimeout
	rc.NodeSkips, rc.RackSkips = 2, 4
	rc.Wire = opts.wire(t, "resourcemanager")
	serviceToken := c.writeServiceToken(t)
	rc.TokenFile = serviceToken
	if opts.IdentitySecretFile != "" {
		rc.Auth, rc.AuthSecretFile = auth.Secure, opts.IdentitySecretFile
	} else {
		rc.Auth = auth.Simple // job callers assert their names (the default is secure)
	}
	if opts.RM != nil {
		opts.RM(&rc)
	}
	rm, err := resourcemanager.New(rc, logs.logger("resourcemanager"))
	if err != nil {
		t.Fatalf("mrtest: resource manager: %v", err)
	}
	if err := rm.Start(); err != nil {
		t.Fatalf("mrtest: resource manager: %v", err)
	}
	c.rm = rm
	c.startNodeManagers(t, logs, serviceToken)
	if c.fs == nil {
		dfs, err := client.New(client.Config{NameNode: opts.NameNode, ClientHost: "mrtest-client",
			Credential: opts.Credential, TLS: opts.clientTLS(), Logger: logs.logger("client"), RPCTimeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("mrtest: DFS client: %v", err)
		}
		t.Cleanup(func() { dfs.Close() })
		c.fs = mapreduce.DFS(dfs)
	}
	c.jc, err = jobclient.New(jobclient.Config{ResourceManager: rm.RPCAddr(), FS: c.fs, Registry: opts.Registry,
		Credential: opts.Credential, TLS: opts.clientTLS(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("mrtest: job client: %v", err)
	}
	if !opts.Unregistered {
		c.WaitFor(t, fmt.Sprintf("%d node managers to register", len(opts.Hosts)), func() bool {
			return len(rm.Nodes()) == len(opts.Hosts)
		})
	}
	return c
}

// fromDFS fills in what Options.DFS says about its cluster.
func (o *Options) fromDFS(t testing.TB) {
	if o.NameNode == "" && o.FS == nil {
		o.NameNode = o.DFS.NameNodeAddr()
	}
	me := "smarth"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	if o.Credential == "" {
		o.Credential = o.DFS.Credential(me)
	}
	if o.ServiceCredential == "" {
		o.ServiceCredential = o.DFS.Credential(me)
	}
	if o.IdentitySecretFile == "" {
		o.IdentitySecretFile = o.DFS.IdentitySecretFile()
	}
}

// wire is a daemon's TLS switch: a certificate from the DFS's CA when it
// runs TLS.
func (o *Options) wire(t testing.TB, name string) pki.Config {
	if o.DFS == nil {
		return pki.Config{}
	}
	return o.DFS.Wire(t, name)
}

// clientTLS is the clients' TLS config (nil: plaintext).
func (o *Options) clientTLS() *tls.Config {
	if o.DFS == nil {
		return nil
	}
	return o.DFS.ClientTLS()
}

// writeServiceToken stores ServiceCredential in a 0600 token file for the
// daemons' configs ("" without one: they use the client library's default).
func (c *Cluster) writeServiceToken(t testing.TB) string {
	if c.opts.ServiceCredential == "" {
		return ""
	}
	path := filepath.Join(c.root, "service.token")
	if err := auth.WriteTokenFile(path, c.opts.ServiceCredential); err != nil {
		t.Fatalf("mrtest: service token: %v", err)
	}
	return path
}

// startNodeManagers starts one node manager per host.
func (c *Cluster) startNodeManagers(t testing.TB, logs *logSet, serviceToken string) {
	t.Helper()
	opts := c.opts
	for i, h := range opts.Hosts {
		nc := nodemanager.DefaultConfig()
		nc.ResourceManager, nc.NameNode, nc.FS, nc.Registry = c.rm.RPCAddr(), opts.NameNode, opts.FS, opts.Registry
		nc.Hostname, nc.WorkDir, nc.HeartbeatInterval = h, filepath.Join(c.root, "nm-"+h), opts.HeartbeatInterval
		nc.SortBufferBytes, nc.TokenFile = opts.SortBufferBytes, serviceToken
		if serviceToken == "" && opts.FS == nil {
			nc.Auth = auth.Simple // a simple namenode: no credential to need (the default is secure)
		}
		nc.Wire = opts.wire(t, "nm-"+h)
		nc.Rack = ""
		if i < len(opts.Racks) {
			nc.Rack = opts.Racks[i]
		}
		if opts.NM != nil {
			opts.NM(i, &nc)
		}
		nm, err := nodemanager.New(nc, logs.logger("nm-"+h))
		if err != nil {
			t.Fatalf("mrtest: node manager %s: %v", h, err)
		}
		if err := nm.Start(); err != nil {
			t.Fatalf("mrtest: node manager %s: %v", h, err)
		}
		c.mu.Lock()
		c.nms = append(c.nms, nm)
		c.mu.Unlock()
	}
}

func (c *Cluster) close() {
	if c.jc != nil {
		c.jc.Close()
	}
	c.mu.Lock()
	nms := c.nms
	c.mu.Unlock()
	for _, nm := range nms {
		if nm != nil {
			nm.Close()
		}
	}
	if c.rm != nil {
		c.rm.Close()
	}
}

// Client is the job client; its FS is the cluster's file system.
func (c *Cluster) Client() *jobclient.Client { return c.jc }

// FS is the file system jobs run against (a DFS client when NameNode was
// given).
func (c *Cluster) FS() mapreduce.FS { return c.fs }

// RM is the resource manager.
func (c *Cluster) RM() *resourcemanager.ResourceManager { return c.rm }

// NodeManager is node manager i (0-based), nil once stopped.
func (c *Cluster) NodeManager(i int) *nodemanager.NodeManager {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nms[i]
}

// StopNodeManager closes node manager i: its tasks die and it stops
// heartbeating, so the resource manager loses it after NodeTimeout.
func (c *Cluster) StopNodeManager(i int) {
	c.mu.Lock()
	nm := c.nms[i]
	c.nms[i] = nil
	c.mu.Unlock()
	if nm != nil {
		nm.Close()
	}
}

// WaitFor polls cond until it holds or fails t with "timed out waiting
// for <what>".
func (c *Cluster) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(c.opts.WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (after %v)", what, c.opts.WaitTimeout)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a condition with a deadline
	}
}

// logSet keeps the tail of each daemon's log for a failing test.
type logSet struct {
	verbose bool
	mu      sync.Mutex // guards bufs, names
	bufs    map[string]*tailBuffer
	names   []string
}

func (l *logSet) logger(name string) *slog.Logger {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bufs == nil {
		l.bufs = map[string]*tailBuffer{}
	}
	b := &tailBuffer{max: 32 << 10}
	l.bufs[name] = b
	l.names = append(l.names, name)
	var w io.Writer = b
	if l.verbose {
		w = io.MultiWriter(b, prefixWriter{name: name, w: os.Stderr})
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logSet) dump() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	for _, n := range l.names {
		fmt.Fprintf(&b, "--- %s\n%s\n", n, l.bufs[n].String())
	}
	return b.String()
}

// tailBuffer keeps roughly the last max bytes written.
type tailBuffer struct {
	max int
	mu  sync.Mutex // guards b
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) > t.max {
		return string(t.b[len(t.b)-t.max:])
	}
	return string(t.b)
}

type prefixWriter struct {
	name string
	w    io.Writer
}

func (p prefixWriter) Write(b []byte) (int, error) {
	io.WriteString(p.w, p.name+" | "+string(b))
	return len(b), nil
}
