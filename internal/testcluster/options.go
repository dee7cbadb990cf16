package testcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os/user"
	"path/filepath"
	"time"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/daemonconf"
	"smarth/internal/datanode/store/vfs"
	"smarth/internal/pki"
)

// Options describe a test cluster. Zero values take the defaults named on
// each field.
type Options struct {
	DataNodes int // default 3
	// NoDataNodes starts the namenode alone (for "no live datanodes"
	// cases); DataNodes and Racks are then ignored.
	NoDataNodes bool
	// Racks is the rack of dn1..dnN; default every datanode in
	// /default-rack. Given to the namenode's racks map and to each
	// datanode's own rack key.
	Racks     []string
	Placement string // namenode placement policy: a name in placement.Policies (default "rackaware")

	BlockSize      int64 // default 1 MiB, so small files span blocks
	Replication    int   // default min(3, DataNodes)
	MinReplication int   // default 1

	HeartbeatInterval   time.Duration // datanodes and namenode; default 200ms
	DeadNodeTimeout     time.Duration // default 3s
	ReplicationInterval time.Duration // default 300ms
	BlockReportInterval time.Duration // default: the datanode's (1h)
	LeaseSoftLimit      time.Duration // default: the namenode's
	LeaseHardLimit      time.Duration // default: the namenode's

	// NameNode and DataNode are extra config keys (the YAML keys of the
	// daemon config contract) merged over the generated ones, e.g.
	// {"permissions_enabled": false}. DataNodeFor sets keys for one
	// datanode (0-based index), over DataNode.
	NameNode    map[string]any
	DataNode    map[string]any
	DataNodeFor func(i int) map[string]any

	// FS, if set, gives datanode i (0-based) the file system under its
	// block store (datanode.Config.FS), nil for the OS's: tests pass an
	// errorfs wrapper to inject disk faults. In-process clusters only.
	FS func(i int) vfs.FS

	// Links, if set, shapes or cuts data-transfer links between the
	// clients and datanodes and among datanodes (in-process clusters only).
	Links *Links

	// WaitTimeout bounds WaitFor and start-up steps; default 30s.
	WaitTimeout time.Duration
	// Verbose streams every daemon's log to stderr (also on with
	// SMARTH_TEST_LOG=1). Without it logs are kept and shown only when the
	// test fails.
	Verbose bool

	// Binary is the smarth executable of StartProcs; default: built once
	// per test process with `go build ./cmd/smarth` (or $SMARTH_BINARY).
	Binary string

	// Simple runs the namenode in simple mode: it trusts the user a
	// client asserts (Hadoop's simple auth), with no identity secret or
	// datanode key. Only tests about simple mode set it; by default a
	// test cluster is secure, as every generated config is
	// (docs/security.md): the namenode verifies credentials, datanodes
	// prove the datanode key, and the harness's clients (Client, mrtest
	// with Options.DFS) get credentials minted for their user
	// (Credential, TokenFile give more).
	Simple bool
	// TLS turns the wire's TLS on (internal/pki): a CA made for the
	// cluster, a certificate per daemon, the harness's clients verifying
	// against the CA (ClientTLS, CAFile).
	TLS bool

	keyDir    string // set by Start and StartProcs unless Simple
	secret    []byte
	tlsDir    string // set by Start and StartProcs with TLS
	ca        *pki.CA
	clientTLS *tls.Config // one for all clients: they share namenode connections per config
}

func (o *Options) setDefaults() error {
	if o.NoDataNodes {
		o.DataNodes, o.Racks = 0, nil
	} else if o.DataNodes == 0 {
		o.DataNodes = 3
	}
	if o.DataNodes < 0 {
		return fmt.Errorf("testcluster: %d datanodes", o.DataNodes)
	}
	if len(o.Racks) == 0 {
		for range o.DataNodes {
			o.Racks = append(o.Racks, "/default-rack")
		}
	}
	if len(o.Racks) != o.DataNodes {
		return fmt.Errorf("testcluster: %d racks for %d datanodes", len(o.Racks), o.DataNodes)
	}
	if o.Placement == "" {
		o.Placement = "rackaware"
	}
	if o.BlockSize == 0 {
		o.BlockSize = 1 << 20
	}
	if o.Replication == 0 {
		o.Replication = max(1, min(3, o.DataNodes))
	}
	if o.MinReplication == 0 {
		o.MinReplication = 1
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.HeartbeatInterval, 200*time.Millisecond)
	def(&o.DeadNodeTimeout, 3*time.Second)
	def(&o.ReplicationInterval, 300*time.Millisecond)
	def(&o.WaitTimeout, 30*time.Second)
	return nil
}

// Hostname is datanode i's hostname (0-based): dn1, dn2, ...
func Hostname(i int) string { return fmt.Sprintf("dn%d", i+1) }

// nameNodeConfig is the namenode's config file: the typed config the
// options make, with the caller's extra keys merged over it
// (daemonconf.Marshal, which refuses a key the namenode does not have).
// In-process clusters decode it as the namenode process reads its file.
func (o *Options) nameNodeConfig(metaDir, rpcAddr, httpAddr string) ([]byte, error) {
	racks := map[string]string{}
	for i, r := range o.Racks {
		racks[Hostname(i)] = r
	}
	c := daemonconf.NameNodeConfig{
		RPCAddr:             rpcAddr,
		HTTPAddr:            httpAddr,
		MetaDir:             metaDir,
		BlockSize:           o.BlockSize,
		Replication:         o.Replication,
		MinReplication:      o.MinReplication,
		HeartbeatInterval:   o.HeartbeatInterval,
		DeadNodeTimeout:     o.DeadNodeTimeout,
		ReplicationInterval: o.ReplicationInterval,
		Placement:           o.Placement,
		Racks:               racks,
		LeaseSoftLimit:      o.LeaseSoftLimit, // 0: the namenode's
		LeaseHardLimit:      o.LeaseHardLimit,
		Wire:                o.wire("namenode"),
	}
	if o.keyDir != "" {
		c.Auth = auth.Secure
		c.AuthSecretFile = filepath.Join(o.keyDir, "auth.key")
		c.DatanodeKeyFile = filepath.Join(o.keyDir, "datanode.key")
	} else {
		c.Auth = auth.Simple
	}
	// Said as a key: a zero field is not written, and a test cluster
	// leaves safe mode at once whatever the namenode's default.
	noWait := map[string]any{"safe_mode_extension": "0s"}
	return daemonconf.Marshal(c, noWait, o.NameNode)
}

// dataNodeConfig is datanode i's config file, as nameNodeConfig.
func (o *Options) dataNodeConfig(i int, nameNode, dataDir string) ([]byte, error) {
	c := daemonconf.DataNodeConfig{
		NameNode:            nameNode,
		Hostname:            Hostname(i),
		AdvertiseIP:         "127.0.0.1",
		DataAddr:            "127.0.0.1:0",
		IPCAddr:             "127.0.0.1:0",
		HTTPAddr:            "127.0.0.1:0",
		DataDir:             dataDir,
		Rack:                o.Racks[i],
		HeartbeatInterval:   o.HeartbeatInterval,
		BlockReportInterval: o.BlockReportInterval, // 0: the datanode's
		Wire:                o.wire(Hostname(i)),
	}
	if o.keyDir != "" {
		c.DatanodeKeyFile = filepath.Join(o.keyDir, "datanode.key")
	} else {
		c.Auth = auth.Simple // said explicitly: the default is secure
	}
	var forI map[string]any
	if o.DataNodeFor != nil {
		forI = o.DataNodeFor(i)
	}
	return daemonconf.Marshal(c, o.DataNode, forI)
}

// ClientOption adjusts the client.Config of Client.
type ClientOption func(*client.Config)

// WithWriteMode sets the write mode: "classic" or "multipipeline".
func WithWriteMode(mode string) ClientOption {
	return func(c *client.Config) { c.WriteMode = mode }
}

// WithUser sets the user the client acts as.
func WithUser(user string) ClientOption { return func(c *client.Config) { c.User = user } }

// WithClientHost makes the client claim a host name, e.g. a datanode's
// ("dn2") to write and read node-locally.
func WithClientHost(host string) ClientOption {
	return func(c *client.Config) { c.ClientHost = host }
}

// WithDial sets the client's data-transfer dialer: a test can slow or cut
// links to chosen datanodes here.
func WithDial(dial func(ctx context.Context, addr string) (net.Conn, error)) ClientOption {
	return func(c *client.Config) { c.Dial = dial }
}

// WithConfig applies any change to the client config.
func WithConfig(f func(*client.Config)) ClientOption { return ClientOption(f) }

// makeKeys creates the cluster's identity secret and datanode key under
// root/keys (unless Simple), and with TLS its CA under root/tls.
func (o *Options) makeKeys(root string) error {
	if o.TLS {
		o.tlsDir = filepath.Join(root, "tls")
		ca, err := pki.LoadOrCreateCA(o.tlsDir, "smarth test cluster CA")
		if err != nil {
			return fmt.Errorf("testcluster: CA: %w", err)
		}
		caFile, _ := pki.CAFiles(o.tlsDir)
		if o.clientTLS, err = pki.ClientConfig(caFile); err != nil {
			return fmt.Errorf("testcluster: CA: %w", err)
		}
		o.ca = ca
	}
	if o.Simple {
		return nil
	}
	o.keyDir = filepath.Join(root, "keys")
	if _, err := auth.LoadOrCreateKey(filepath.Join(o.keyDir, "datanode.key")); err != nil {
		return fmt.Errorf("testcluster: datanode key: %w", err)
	}
	secret, err := auth.LoadOrCreateKey(filepath.Join(o.keyDir, "auth.key"))
	if err != nil {
		return fmt.Errorf("testcluster: identity secret: %w", err)
	}
	o.secret = secret
	return nil
}

// Wire is the TLS switch of a daemon named name on a cluster started
// with o: a certificate for 127.0.0.1 and localhost signed by the
// cluster's CA (zero without TLS). mrtest gives it to its resource
// manager and node managers.
func (o *Options) Wire(name string) (pki.Config, error) {
	if o.ca == nil {
		return pki.Config{}, nil
	}
	cert, key, err := o.ca.Issue(o.tlsDir, name, []string{"127.0.0.1", "localhost", name})
	if err != nil {
		return pki.Config{}, fmt.Errorf("testcluster: certificate for %s: %w", name, err)
	}
	ca, _ := pki.CAFiles(o.tlsDir)
	return pki.Config{TLS: true, CertFile: cert, KeyFile: key, CAFile: ca}, nil
}

// wire is the TLS switch of a daemon's config (off without TLS).
// Issuing cannot fail but for a broken temp dir: the daemon then fails
// on its missing files with a message naming them.
func (o *Options) wire(name string) pki.Config {
	w, _ := o.Wire(name)
	return w
}

// ClientTLS is the TLS config of a client of the cluster: trusting its CA
// (nil without TLS).
func (o *Options) ClientTLS() *tls.Config { return o.clientTLS }

// Credential is a credential for user on a cluster started with o (the
// cluster's identity secret signs it).
func (o *Options) Credential(user string) string {
	if o.secret == nil {
		return ""
	}
	return auth.UserCredential(o.secret, user)
}

// newClientConfig is the base client config of a test client: its user
// (the OS user unless an option names one) gets a credential.
func (o *Options) newClientConfig(addr string, log *slog.Logger, opts []ClientOption) client.Config {
	cfg := client.Config{NameNode: addr, Logger: log, RPCTimeout: 20 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.TLS == nil {
		cfg.TLS = o.ClientTLS()
	}
	if cfg.Credential == "" && o.secret != nil {
		u := cfg.User
		if u == "" {
			u = osUser()
		}
		cfg.Credential = o.Credential(u)
	}
	return cfg
}

func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "smarth"
}

func nodeDir(root, name string) string { return filepath.Join(root, name) }
