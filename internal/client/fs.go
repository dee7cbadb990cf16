package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/user"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"

	"smarth/internal/auth"
	"smarth/internal/pki"
	"smarth/internal/rpc/callid"
	"smarth/internal/rpc/dfspb"
)

// Config configures a FileSystem. Zero values take the defaults named on
// each field.
type Config struct {
	// NameNode is the namenode's RPC "host:port", or the namenodes of an
	// HA group as a comma list "a:8020,b:8020,c:8020": calls then fail
	// over between them (failover.go).
	NameNode string
	User     string // default: the credential's user, else the current OS user name
	// Credential proves the user to a secure namenode ("user:mac", see
	// internal/auth); default: read from TokenFile, else $SMARTH_TOKEN_FILE,
	// else ~/.smarth/token when present. A credential for another user
	// than User (a service acting for a job's submitter) asks the namenode
	// to let it act for User, which only proxy users may.
	Credential string
	TokenFile  string
	// TLS, when set, is used for the namenode RPC and every
	// data-transfer connection, verifying servers against its RootCAs
	// (pki.ClientConfig(the cluster's CA file)); nil: plaintext.
	TLS         *tls.Config
	ClientName  string // default: "smarth-client-<host>-<pid>-<random>"
	ClientHost  string // hostname used for locality (default os.Hostname())
	WriteMode   string // "classic" (default) or "multipipeline"
	Replication int    // 0 = namenode default
	BlockSize   int64  // 0 = namenode default
	Logger      *slog.Logger

	RPCTimeout       time.Duration // deadline of one namenode RPC; default 60s
	DialTimeout      time.Duration // TCP connect to a datanode; default 10s
	IOTimeout        time.Duration // a datanode socket idle this long is dead; default 60s
	PacketSize       int           // data bytes per packet; default 64 KiB
	BytesPerChecksum int           // default 512
	Window           int           // classic in-flight packets; default 80
	CompleteTimeout  time.Duration // how long Close retries Complete; default 2m
	LeaseRenewal     time.Duration // RenewLease period while files are open; default 30s
	SpeedReport      time.Duration // multi-pipeline speed heartbeat period; default 3s
	// ConnectRetry is how long a namenode call keeps retrying, within
	// its deadline, when the namenode is restarting: it refuses
	// connections after this process had reached it, or answers that it
	// is in start-up safe mode. Hadoop's IPC client does the same
	// (ipc.client.connect.max.retries, RetriableException). Either way
	// the call was never applied, so retrying is safe for every method.
	// Default 20s; negative: never retry.
	ConnectRetry time.Duration
	// With several namenodes: how many rounds through them one call may
	// make before it gives up (FailoverAttempts, 15, as HDFS's
	// dfs.client.failover.max.attempts), and the sleep after each round,
	// doubling from FailoverSleepBase (100ms; HDFS's
	// dfs.client.failover.sleep.base.millis is 500) to FailoverSleepMax
	// (2s; HDFS 15s): about 20 s in all, as ConnectRetry for one
	// namenode, while the first rounds come quickly, an election taking
	// about a second.
	FailoverAttempts  int
	FailoverSleepBase time.Duration
	FailoverSleepMax  time.Duration
	// FailoverProbeAfter: with several namenodes, a create, delete,
	// rename or read that has had no answer for this long makes the
	// client ask the other namenodes whether one of them is the active
	// now (a frozen or hung active: no broken connection tells the
	// client); if one is, at a higher term, the call is repeated there,
	// else it keeps waiting (a slow active is not abandoned). Default
	// 500ms: the group cannot have elected a new active sooner (its
	// followers wait replog's HeartbeatTimeout, 500 ms, before an
	// election), and from then on the probe finds it within a round
	// (probeEvery); negative: wait the whole RPCTimeout, as HDFS does.
	FailoverProbeAfter time.Duration
	// ObserverReads: with several namenodes, namespace reads (stat,
	// listing, open's block locations, ...) go first to a standby, which
	// serves them once it has applied every edit this client has seen
	// acknowledged (read-your-writes; observer.go), and to the active
	// when it is behind; the active's load is then mostly writes (HDFS's
	// ObserverReadProxyProvider). Default: $SMARTH_OBSERVER_READS
	// ("true" or "1"), else off.
	ObserverReads bool
	// ObserverAutoMsync: how old the client's last msync may be before an
	// observer read asks the active again (HDFS's
	// dfs.client.failover.observer.auto-msync-period). 0, the default:
	// never again after the first read's (HDFS's -1): reads see this
	// client's writes and what it has heard of, and FileSystem.Msync
	// brings in other clients' writes. > 0: a read sees every write
	// acknowledged, to any client, more than this before it began.
	// MsyncEveryRead: every read sees every write acknowledged before it
	// began (HDFS's 0), at the cost of one call to the active each.
	// Default: $SMARTH_OBSERVER_AUTO_MSYNC_PERIOD in HDFS's terms (-1
	// never, 0 every read, else a duration: "500ms", "1m", or
	// milliseconds).
	ObserverAutoMsync time.Duration
	// MaxPipelines caps the open pipelines of one multi-pipeline file on
	// top of live datanodes / replication; each one holds up to a block of
	// unacknowledged data in memory. Default 4.
	MaxPipelines int
	// LocalThreshold is Algorithm 2's threshold: with probability
	// 1-threshold the first target is swapped with a random other. 0.8.
	LocalThreshold float64
	// Seed seeds Algorithm 2's randomness (0: from the clock).
	Seed int64
	// TrashInterval is this client's fs.trash.interval: how long MoveToTrash
	// keeps deletes. The namenode's trash_interval, when set, wins (as in
	// HDFS); both 0 (the default) mean no trash.
	TrashInterval time.Duration
	// DomainSocketPath is the datanodes' unix socket for short-circuit
	// local reads (shortcircuit.go), as HDFS's dfs.domain.socket.path:
	// "_PORT" in it stands for a datanode's data port. With it, a block
	// whose replica is on this host is read from the replica's files,
	// whose descriptors its datanode passes over the socket, instead of
	// over TCP. "" (the default): every block over TCP. A client of a
	// local cluster learns it from the cluster's home (cluster.json).
	DomainSocketPath string
	// NoShortCircuitReads turns short-circuit reads off although
	// DomainSocketPath is set (HDFS's dfs.client.read.shortcircuit =
	// false; smarth's short_circuit_reads: false).
	NoShortCircuitReads bool
	// Dial opens data-transfer connections; default net.Dialer. Tests
	// inject faults here.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// RPCTransport is how namenode calls travel: "ipc" (internal/ipc,
	// framed calls as Hadoop IPC makes them; the default) or "grpc" (gRPC
	// over HTTP/2). The namenode serves both on its one RPC port. Default:
	// $SMARTH_RPC_TRANSPORT, else "ipc".
	RPCTransport string
	// NameNodeDial opens the namenode connection; default a plain TCP dial.
	// A client running inside a testbed host's network namespace (from a
	// process outside it) sets both this and Dial.
	NameNodeDial func(ctx context.Context, addr string) (net.Conn, error)
}

func (c *Config) setDefaults() error {
	if c.NameNode == "" {
		c.NameNode = "127.0.0.1:8020"
	}
	if err := c.loadCredential(); err != nil {
		return err
	}
	if c.User == "" && c.Credential != "" {
		c.User, _, _ = strings.Cut(c.Credential, ":")
	}
	if c.User == "" {
		if u, err := user.Current(); err == nil {
			c.User = u.Username
		} else {
			c.User = "smarth"
		}
	}
	host, _ := os.Hostname()
	if c.ClientHost == "" {
		c.ClientHost = host
	}
	if c.ClientName == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.ClientName = fmt.Sprintf("smarth-client-%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if c.WriteMode == "" {
		c.WriteMode = "classic"
	}
	if c.RPCTransport == "" {
		c.RPCTransport = os.Getenv("SMARTH_RPC_TRANSPORT")
	}
	if v := os.Getenv("SMARTH_OBSERVER_READS"); !c.ObserverReads && (v == "true" || v == "1") {
		c.ObserverReads = true
	}
	if v := os.Getenv("SMARTH_OBSERVER_AUTO_MSYNC_PERIOD"); c.ObserverAutoMsync == 0 && v != "" {
		d, err := parseAutoMsync(v)
		if err != nil {
			return fmt.Errorf("$SMARTH_OBSERVER_AUTO_MSYNC_PERIOD=%q: %v (want -1 for never, 0 for every read, or a duration such as 500ms or 1m)", v, err)
		}
		c.ObserverAutoMsync = d
	}
	switch c.RPCTransport {
	case "":
		c.RPCTransport = TransportIPC
	case TransportIPC, TransportGRPC:
	default:
		return fmt.Errorf("unknown namenode RPC transport %q (want %s or %s; from Config.RPCTransport or $SMARTH_RPC_TRANSPORT)", c.RPCTransport, TransportIPC, TransportGRPC)
	}
	if _, ok := writeModes[c.WriteMode]; !ok {
		return fmt.Errorf("unknown write mode %q (want one of %s)", c.WriteMode, strings.Join(WriteModes(), ", "))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RPCTimeout, 60*time.Second)
	if c.ConnectRetry == 0 {
		c.ConnectRetry = 20 * time.Second
	}
	def(&c.DialTimeout, 10*time.Second)
	def(&c.FailoverSleepBase, 100*time.Millisecond)
	def(&c.FailoverSleepMax, 2*time.Second)
	if c.FailoverProbeAfter == 0 {
		c.FailoverProbeAfter = 500 * time.Millisecond
	}
	if c.FailoverAttempts <= 0 {
		c.FailoverAttempts = 15
	}
	def(&c.IOTimeout, 60*time.Second)
	def(&c.CompleteTimeout, 2*time.Minute)
	def(&c.LeaseRenewal, 30*time.Second)
	def(&c.SpeedReport, 3*time.Second)
	if c.PacketSize <= 0 {
		c.PacketSize = 64 << 10
	}
	if c.BytesPerChecksum <= 0 {
		c.BytesPerChecksum = 512
	}
	if c.PacketSize%c.BytesPerChecksum != 0 {
		return fmt.Errorf("packet size %d is not a multiple of bytes per checksum %d", c.PacketSize, c.BytesPerChecksum)
	}
	if c.Window <= 0 {
		c.Window = 80
	}
	if c.MaxPipelines <= 0 {
		c.MaxPipelines = 4
	}
	if c.LocalThreshold <= 0 {
		c.LocalThreshold = 0.8
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	if c.Dial == nil {
		d := &net.Dialer{Timeout: c.DialTimeout}
		c.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	return nil
}

// FileSystem is a client of one smarth namenode, or of the namenodes of
// an HA group (failover.go). It is safe for concurrent use; Close it when
// done.
type FileSystem struct {
	cfg Config
	log *slog.Logger
	// conns are the connections to each configured namenode.
	conns []addrConn
	// sharedConn: conns are the process's shared connections
	// (nnconn.go), released rather than closed.
	sharedConn bool
	nn         dfspb.ClientProtocolClient
	fo         *failoverConn // with several namenodes (nil with one)

	defaultsOnce sync.Once
	defaults     *dfspb.GetServerDefaultsResponse
	defaultsErr  error

	leases *leaseRenewer
	speeds *speedReporter
	sc     *shortCircuit // nil: short-circuit reads off

	closeOnce sync.Once
	files     atomic.Uint64 // files created, to seed each one's randomness
}

// rand gives each file its own deterministic stream (Config.Seed, file
// number): Algorithm 2 draws from it in the file's streamer goroutine.
func (f *FileSystem) rand() *mrand.Rand {
	return mrand.New(mrand.NewPCG(uint64(f.cfg.Seed), f.files.Add(1)))
}

// New connects lazily to cfg.NameNode (each namenode of a comma list);
// the first RPC reports an unreachable namenode.
func New(cfg Config) (*FileSystem, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	// Here, on New's copy, not in setDefaults: a Config passed on (a
	// pool of per-user clients) must not get TLS wrapped twice.
	cfg.Dial = pki.Dialer(cfg.TLS, cfg.Dial)
	caller := auth.Caller{User: cfg.User, Credential: cfg.Credential, Client: cfg.ClientName}
	if u := auth.CredentialUser(cfg.Credential); cfg.Credential != "" && u != cfg.User {
		caller.ProxyUser = cfg.User // act for the configured user (a proxy user's credential)
	}
	md := caller.MD()
	addrs := NameNodes(cfg.NameNode)
	if len(addrs) > 1 {
		if err := checkNameNodes(cfg.NameNode, addrs); err != nil {
			return nil, err
		}
	}
	f := &FileSystem{cfg: cfg, log: cfg.Logger, sharedConn: cfg.NameNodeDial == nil}
	ids := callid.NewSource() // this FileSystem's client id
	fc := &failoverConn{attempts: cfg.FailoverAttempts, sleepBase: cfg.FailoverSleepBase, sleepMax: cfg.FailoverSleepMax, log: cfg.Logger,
		ids: ids, probeAfter: cfg.FailoverProbeAfter}
	fc.obs.on = cfg.ObserverReads && len(addrs) > 1
	fc.obs.autoMsync = cfg.ObserverAutoMsync
	fc.obs.skipUntil = make([]atomic.Int64, len(addrs))
	for _, addr := range addrs {
		conn, ic, err := f.connect(addr, md)
		if err != nil {
			f.closeConns()
			return nil, fmt.Errorf("namenode %s: %w", addr, err)
		}
		f.conns = append(f.conns, addrConn{addr, conn})
		// With several namenodes a refused connection moves the call to
		// the next one at once (failoverConn) instead of waiting here
		// for this one to come back.
		ic.failover = len(addrs) > 1
		ic.ids = ids
		fc.members = append(fc.members, &failoverMember{addr: addr, ic: ic})
	}
	if len(fc.members) == 1 {
		f.nn = dfspb.NewClientProtocolClient(fc.members[0].ic) // one namenode: no failover layer
	} else {
		f.nn, f.fo = dfspb.NewClientProtocolClient(fc), fc
	}
	f.leases = newLeaseRenewer(f)
	f.speeds = newSpeedReporter(f)
	f.sc = newShortCircuit(cfg)
	return f, nil
}

func (f *FileSystem) closeConns() error {
	var err error
	for _, c := range f.conns {
		var e error
		if f.sharedConn {
			e = releaseNameNodeConn(c.addr, f.cfg.TLS, f.cfg.RPCTransport, c.conn)
		} else {
			e = c.conn.Close()
		}
		err = cmp.Or(err, e)
	}
	return err
}

type addrConn struct {
	addr string
	conn nnConn
}

// connect opens (or shares) the connection to one namenode and gives the
// FileSystem's view of it.
func (f *FileSystem) connect(addr string, md metadata.MD) (nnConn, *identConn, error) {
	cfg := &f.cfg
	var conn nnConn
	var err error
	reached := new(atomic.Bool)
	if f.sharedConn {
		conn, reached, err = acquireNameNodeConn(addr, cfg.TLS, cfg.RPCTransport)
	} else {
		conn, err = dialNameNode(addr, cfg.TLS, cfg.RPCTransport, cfg.NameNodeDial)
	}
	if err != nil {
		return nil, nil, err
	}
	ic := newIdentConn(conn, md)
	ic.timeout, ic.addr, ic.retry, ic.reached = cfg.RPCTimeout, addr, cfg.ConnectRetry, reached
	return conn, ic, nil
}

// NewWithClient builds a FileSystem over an existing ClientProtocol client
// (tests with a fake namenode).
func NewWithClient(cfg Config, nn dfspb.ClientProtocolClient) (*FileSystem, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	f := &FileSystem{cfg: cfg, log: cfg.Logger, nn: nn}
	f.leases = newLeaseRenewer(f)
	f.speeds = newSpeedReporter(f)
	return f, nil
}

// Close stops background work and closes the namenode connection. Open
// writers are not completed: Close them first.
func (f *FileSystem) Close() error {
	var err error
	f.closeOnce.Do(func() {
		f.leases.stop()
		f.speeds.stop()
		f.speeds.report()
		err = f.closeConns()
	})
	return err
}

// ClientName is the name this client holds leases under.
func (f *FileSystem) ClientName() string { return f.cfg.ClientName }

// Namenode exposes the raw ClientProtocol for admin tools (fsck, reports).
func (f *FileSystem) Namenode() dfspb.ClientProtocolClient { return f.nn }

// ObserverReads counts this client's observer reads (Config.ObserverReads)
// that a standby served, and those that went to the active instead (the
// standby was behind, skipped, or did not answer).
func (f *FileSystem) ObserverReads() (served, toActive int64) {
	if f.fo == nil {
		return 0, 0
	}
	return f.fo.obs.served.Load(), f.fo.obs.toActive.Load()
}

// Msync brings this client's view up to the active namenode's: reads
// after it see every operation acknowledged, to any client, before it
// returned (HDFS's FileSystem.msync). Only observer reads need it (a
// read a standby serves sees what this client has heard of, not another
// client's writes): a program that hands a path from one client to
// another calls it in between. Without observer reads every read is the
// active's, and Msync does nothing.
func (f *FileSystem) Msync(ctx context.Context) error {
	if f.fo == nil || !f.fo.obs.on || f.fo.obs.off.Load() {
		return nil
	}
	f.fo.obs.syncMu.Lock()
	defer f.fo.obs.syncMu.Unlock()
	return f.fo.msyncCall(ctx)
}

func (f *FileSystem) serverDefaults(ctx context.Context) (*dfspb.GetServerDefaultsResponse, error) {
	f.defaultsOnce.Do(func() {
		f.defaults, f.defaultsErr = f.nn.GetServerDefaults(ctx, &dfspb.GetServerDefaultsRequest{})
	})
	return f.defaults, f.defaultsErr
}

// FileInfo describes a file or directory.
type FileInfo struct {
	Path              string
	Name              string
	Size              int64
	IsDir             bool
	Mode              fs.FileMode
	Owner, Group      string
	ModTime           time.Time
	AccessTime        time.Time
	Replication       int
	BlockSize         int64
	UnderConstruction bool
	Children          int // directories: number of entries, when the namenode says
	FileID            uint64
	HasACL            bool  // an extended ACL: ls shows "+" after the mode
	Snapshottable     bool  // a directory that allows snapshots
	StoragePolicy     uint8 // effective storage policy id; 0 unspecified (HOT)
}

func fileInfo(st *dfspb.FileStatus) FileInfo {
	fi := FileInfo{
		Path:              st.GetPath(),
		Name:              path.Base(st.GetPath()),
		Size:              st.GetLength(),
		IsDir:             st.GetType() == dfspb.FileType_DIRECTORY,
		Mode:              ModeOf(st.GetPermission()), // keeps the sticky bit: ls shows "t" as HDFS does
		Owner:             st.GetOwner(),
		Group:             st.GetGroup(),
		ModTime:           time.UnixMilli(st.GetModificationTimeMs()),
		AccessTime:        time.UnixMilli(st.GetAccessTimeMs()),
		Replication:       int(st.GetReplication()),
		BlockSize:         st.GetBlockSize(),
		UnderConstruction: st.GetUnderConstruction(),
		Children:          int(st.GetChildrenNum()),
		FileID:            st.GetFileId(),
		HasACL:            st.GetFlags()&1 != 0,
		Snapshottable:     st.GetFlags()&8 != 0,
		StoragePolicy:     uint8(st.GetStoragePolicy()),
	}
	if fi.IsDir {
		fi.Mode |= fs.ModeDir
	}
	return fi
}

// cleanPath makes p absolute and clean; the namenode validates names.
func cleanPath(p string) (string, error) {
	if p == "" {
		return "", &PathError{Op: "path", Path: p, Kind: fs.ErrInvalid, Msg: "empty path"}
	}
	if p[0] != '/' {
		p = "/" + p
	}
	return path.Clean(p), nil
}

// Stat returns the status of path.
func (f *FileSystem) Stat(ctx context.Context, p string) (FileInfo, error) {
	p, err := cleanPath(p)
	if err != nil {
		return FileInfo{}, err
	}
	resp, err := f.nn.GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: p})
	if err != nil {
		return FileInfo{}, mapError("stat", p, err)
	}
	if resp.GetStatus() == nil {
		return FileInfo{}, &PathError{Op: "stat", Path: p, Kind: fs.ErrNotExist, Msg: kindText[fs.ErrNotExist]}
	}
	return fileInfo(resp.GetStatus()), nil
}

// listPage is how many entries one GetListing asks for.
const listPage = 1000

// List returns the entries of a directory in name order; a file lists
// itself.
func (f *FileSystem) List(ctx context.Context, p string) ([]FileInfo, error) {
	st, err := f.Stat(ctx, p)
	if err != nil {
		return nil, relabel(err, "ls")
	}
	if !st.IsDir {
		return []FileInfo{st}, nil
	}
	var out []FileInfo
	after := ""
	for {
		resp, err := f.nn.GetListing(ctx, &dfspb.GetListingRequest{Path: st.Path, StartAfter: after, Limit: listPage})
		if err != nil {
			return nil, mapError("ls", st.Path, err)
		}
		for _, e := range resp.GetEntries() {
			fi := fileInfo(e)
			if fi.Path == "" || fi.Path == "." || !path.IsAbs(fi.Path) {
				// Tolerate a namenode that returns bare names.
				fi.Path = path.Join(st.Path, e.GetPath())
				fi.Name = path.Base(fi.Path)
			}
			out = append(out, fi)
		}
		if resp.GetRemaining() == 0 || len(resp.GetEntries()) == 0 {
			return out, nil
		}
		after = out[len(out)-1].Name
	}
}

// relabel changes the op of a *PathError (Stat used on behalf of another op).
func relabel(err error, op string) error {
	var pe *PathError
	if errors.As(err, &pe) {
		c := *pe
		c.Op = op
		return &c
	}
	return err
}

// Mkdir creates a directory; with parents, missing parents too and no
// error if it exists as a directory.
func (f *FileSystem) Mkdir(ctx context.Context, p string, perm fs.FileMode, parents bool) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	if perm == 0 {
		perm = 0o755
	}
	_, err = f.nn.Mkdirs(ctx, &dfspb.MkdirsRequest{Path: p, Permission: uint32(perm.Perm()), CreateParent: parents})
	if err != nil {
		err = mapError("mkdir", p, err)
		if parents && errors.Is(err, fs.ErrExist) {
			if st, serr := f.Stat(ctx, p); serr == nil && st.IsDir {
				return nil
			}
		}
		return err
	}
	return nil
}

// Delete removes path; a non-empty directory needs recursive. Deleting a
// missing path is an fs.ErrNotExist error.
func (f *FileSystem) Delete(ctx context.Context, p string, recursive bool) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	resp, err := f.nn.Delete(ctx, &dfspb.DeleteRequest{Path: p, Recursive: recursive})
	if err != nil {
		return mapError("rm", p, err)
	}
	if !resp.GetDeleted() {
		return &PathError{Op: "rm", Path: p, Kind: fs.ErrNotExist, Msg: kindText[fs.ErrNotExist]}
	}
	return nil
}

// Rename moves src to dst with HDFS semantics: onto an existing directory
// moves into it; onto an existing file is an error.
func (f *FileSystem) Rename(ctx context.Context, src, dst string) error {
	src, err := cleanPath(src)
	if err != nil {
		return err
	}
	if dst, err = cleanPath(dst); err != nil {
		return err
	}
	if _, err := f.nn.Rename(ctx, &dfspb.RenameRequest{Src: src, Dst: dst}); err != nil {
		return mapError("mv", src, err)
	}
	return nil
}

// SetReplication changes a file's target replication; the namenode
// re-replicates or trims in the background.
func (f *FileSystem) SetReplication(ctx context.Context, p string, replication int) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	if replication < 1 || replication > 512 {
		return &PathError{Op: "setrep", Path: p, Kind: fs.ErrInvalid, Msg: fmt.Sprintf("replication %d out of range 1..512", replication)}
	}
	if _, err := f.nn.SetReplication(ctx, &dfspb.SetReplicationRequest{Path: p, Replication: uint32(replication)}); err != nil {
		return mapError("setrep", p, err)
	}
	return nil
}

// ContentSummary totals a subtree.
type ContentSummary struct {
	Length, FileCount, DirectoryCount, SpaceConsumed int64
	// Quota and SpaceQuota are the directory's name and space quotas, -1
	// when not set.
	Quota, SpaceQuota int64
	// TypeQuotas are its storage-type quotas (Hadoop StorageType names)
	// with the space counted against each; types without one are absent.
	TypeQuotas map[string]TypeQuota
}

// TypeQuota is one storage type's quota and what counts against it.
type TypeQuota struct{ Quota, Consumed int64 }

// ContentSummary returns the sizes and counts under path.
func (f *FileSystem) ContentSummary(ctx context.Context, p string) (ContentSummary, error) {
	p, err := cleanPath(p)
	if err != nil {
		return ContentSummary{}, err
	}
	r, err := f.nn.GetContentSummary(ctx, &dfspb.GetContentSummaryRequest{Path: p})
	if err != nil {
		return ContentSummary{}, mapError("du", p, err)
	}
	cs := ContentSummary{Length: r.GetLength(), FileCount: r.GetFileCount(), DirectoryCount: r.GetDirectoryCount(),
		SpaceConsumed: r.GetSpaceConsumed(), Quota: r.GetQuota(), SpaceQuota: r.GetSpaceQuota()}
	for _, tq := range r.GetTypeQuotas() {
		if cs.TypeQuotas == nil {
			cs.TypeQuotas = map[string]TypeQuota{}
		}
		cs.TypeQuotas[tq.GetStorageType()] = TypeQuota{Quota: tq.GetQuota(), Consumed: tq.GetConsumed()}
	}
	return cs, nil
}

// BlockLocation is where one block of a file lives.
type BlockLocation struct {
	Offset, Length int64
	BlockID        uint64
	Hosts          []string // datanode hostnames (locality matching), closest first
	Addrs          []string // "ip:dataport"
	Racks          []string
	Cached         []string // hostnames holding it in memory
	Corrupt        bool
}

// BlockLocations returns the blocks overlapping [offset, offset+length)
// with their replicas, closest to this client first.
func (f *FileSystem) BlockLocations(ctx context.Context, p string, offset, length int64) ([]BlockLocation, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	lbs, err := f.locations(ctx, "locations", p, offset, length)
	if err != nil {
		return nil, err
	}
	var out []BlockLocation
	for _, lb := range allBlocks(lbs) {
		out = append(out, blockLocation(lb))
	}
	return out, nil
}

func blockLocation(lb *dfspb.LocatedBlock) BlockLocation {
	bl := BlockLocation{Offset: lb.GetOffset(), Length: lb.GetBlock().GetNumBytes(), BlockID: lb.GetBlock().GetBlockId(), Corrupt: lb.GetCorrupt()}
	byID := map[string]string{}
	for _, d := range lb.GetLocations() {
		bl.Hosts = append(bl.Hosts, d.GetHostname())
		bl.Addrs = append(bl.Addrs, dataAddr(d))
		bl.Racks = append(bl.Racks, d.GetRack())
		byID[d.GetId()] = d.GetHostname()
	}
	for _, id := range lb.GetCachedOn() {
		if h, ok := byID[id]; ok {
			bl.Cached = append(bl.Cached, h)
		}
	}
	return bl
}

// allBlocks is the located blocks plus an under-construction last block
// the namenode lists separately.
func allBlocks(lbs *dfspb.LocatedBlocks) []*dfspb.LocatedBlock {
	out := lbs.GetBlocks()
	if last := lbs.GetLastBlock(); last != nil && last.GetBlock() != nil {
		seen := false
		for _, b := range out {
			if b.GetBlock().GetBlockId() == last.GetBlock().GetBlockId() {
				seen = true
			}
		}
		if !seen {
			out = append(append([]*dfspb.LocatedBlock(nil), out...), last)
		}
	}
	return out
}

func (f *FileSystem) locations(ctx context.Context, op, p string, offset, length int64) (*dfspb.LocatedBlocks, error) {
	resp, err := f.nn.GetBlockLocations(ctx, &dfspb.GetBlockLocationsRequest{Path: p, Offset: offset, Length: length, ClientHost: f.cfg.ClientHost})
	if err != nil {
		return nil, mapError(op, p, err)
	}
	if resp.GetLocations() == nil {
		return &dfspb.LocatedBlocks{}, nil
	}
	return resp.GetLocations(), nil
}

func dataAddr(d *dfspb.DatanodeInfo) string {
	return net.JoinHostPort(d.GetIpAddr(), fmt.Sprint(d.GetDataPort()))
}

// Fsck asks the namenode for the health of the blocks under path.
func (f *FileSystem) Fsck(ctx context.Context, p string) (*dfspb.FsckResponse, error) {
	return f.fsck(ctx, p, false)
}

// FsckTree is Fsck whose answer lists the directories too, each before
// what it holds (fsck -files).
func (f *FileSystem) FsckTree(ctx context.Context, p string) (*dfspb.FsckResponse, error) {
	return f.fsck(ctx, p, true)
}

func (f *FileSystem) fsck(ctx context.Context, p string, dirs bool) (*dfspb.FsckResponse, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	r, err := f.nn.Fsck(ctx, &dfspb.FsckRequest{Path: p, IncludeDirectories: dirs})
	if err != nil {
		return nil, mapError("fsck", p, err)
	}
	return r, nil
}

// Datanodes lists the datanodes the namenode knows (state UNSPECIFIED = all).
func (f *FileSystem) Datanodes(ctx context.Context, state dfspb.DatanodeState) ([]*dfspb.DatanodeInfo, error) {
	r, err := f.nn.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{State: state})
	if err != nil {
		return nil, mapError("datanodes", "", err)
	}
	return r.GetDatanodes(), nil
}

// loadCredential reads the token file when no credential is given. A
// missing default file is fine (simple-mode namenodes need none); a named
// file that cannot be read, or one others can read, is an error.
func (c *Config) loadCredential() error {
	if c.Credential != "" {
		return nil
	}
	path, named := c.TokenFile, c.TokenFile != ""
	if !named {
		path = auth.DefaultTokenFile()
	}
	if path == "" {
		return nil
	}
	cred, err := auth.ReadTokenFile(path)
	switch {
	case err == nil:
		c.Credential = cred
	case errors.Is(err, os.ErrNotExist) && !named:
	default:
		return fmt.Errorf("client: token file: %w", err)
	}
	return nil
}
