package datanode

import (
	"cmp"
	"smarth/internal/auth"
	"smarth/internal/blocktoken"
	"smarth/internal/connlimit"
	"smarth/internal/httpserver"
	"smarth/internal/units"
	"smarth/internal/webui"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"smarth/internal/datanode/memcache"
	"smarth/internal/datanode/store"
	"smarth/internal/diskperm"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// DataNode is one datanode daemon. Create it with New, bind it with Start,
// stop it with Close (or Kill to simulate a crash).
type DataNode struct {
	cfg     Config
	balance *throttle // balancer moves' shared budget (nil: unlimited)
	log     *slog.Logger
	store   *store.Store
	metrics *metrics
	user    string               // identity sent to the namenode (gRPC metadata smarth-user)
	tokens  *blocktoken.Verifier // the namenode's block keys, for access checks
	dnKey   []byte               // cluster datanode key (datanode_key_file); nil: none configured

	ctx    context.Context // canceled by Close/Kill: every goroutine stops
	cancel context.CancelFunc
	wg     sync.WaitGroup
	killed atomic.Bool // Kill was called: report nothing more to the namenode
	// bufferHigh is the most bytes any multi-pipeline client had buffered
	// here at once (the per_client_buffer bound, checked by tests).
	bufferHigh atomic.Int64
	recv       *recvBudget // receive_buffer_budget: packet buffers of all write connections
	// volumeCheck asks checkVolumesLoop for a check now (volumes.go);
	// selfStop is set when the datanode shut itself down.
	volumeCheck chan struct{}
	selfStop    atomic.Pointer[selfStop]

	// srvTLS and cliTLS are the wire's TLS (nil: off): srvTLS on every
	// server socket, cliTLS on every connection this datanode makes.
	srvTLS, cliTLS *tls.Config

	dataLn net.Listener
	// dataGate bounds the data port's accepted connections, in all and
	// per peer address.
	dataGate *connlimit.Gate
	ipcLn    net.Listener
	httpLn   net.Listener
	grpcSrv  *grpc.Server
	httpSrv  *http.Server
	// scLn is the short-circuit read socket (domain_socket_path; nil:
	// none), scSlots its connections in progress (shortcircuit.go).
	scLn    *net.UnixListener
	scSlots chan struct{}
	// actors talk to each namenode (one, or every namenode of an HA
	// group), in the configured order.
	actors []*bpActor
	// haMu guards the fence (actor.go): the highest term any namenode
	// reported and the actor of the namenode obeyed at that term.
	haMu     sync.Mutex
	haTerm   uint64
	haActive *bpActor

	scanner *scanner
	cache   *memcache.Cache // whole finalized replicas in memory (empty after a restart)
	cacher  *cacher         // runs cache/uncache commands
	reads   *readWindow     // recently read blocks left in the page cache (drop_cache_behind_reads)
	net     *netTuning      // seed 001: socket profile and transfer log

	mu      sync.Mutex
	info    *dfspb.DatanodeInfo     // guarded by mu: how this node registers (addresses known after Start)
	conns   map[net.Conn]struct{}   // guarded by mu: open data-transfer connections, closed by Kill/Close
	clients map[string]*clientState // guarded by mu: multi-pipeline writers per client name
	closed  bool                    // guarded by mu
}

// New checks cfg, opens the data directory (creating its stable id on first
// use) and returns a datanode that is not yet listening.
func New(cfg Config, logger *slog.Logger) (*DataNode, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("datanode config: %w", err)
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The cache starts empty on every start, as in HDFS: what was cached
	// before a restart is gone with the process, and the first heartbeat
	// tells the namenode so.
	cache := memcache.New(cfg.CacheCapacity)
	var k *cacher
	reserve, err := units.ParseReserve(cfg.DuReserved)
	if err != nil {
		return nil, fmt.Errorf("datanode config: du_reserved: %w", err)
	}
	// Every data directory is the datanode's alone (data_dir_perm),
	// checked before the store reads it: replicas an older release wrote
	// 0644 are narrowed now, with a WARN, rather than left readable.
	for _, dir := range cfg.dataDirs() {
		if _, err := diskperm.Fix(dir, cfg.DataDirPerm.Perm(), logger.With("key", "data_dir_perm")); err != nil {
			// A failing disk fails here too: the store's volume check
			// decides below whether the datanode can run without it.
			logger.Warn("data directory permissions not checked", "dir", dir, "err", err)
		}
	}
	st, err := store.OpenVolumes(cfg.dataDirs(), store.Options{SyncOnClose: cfg.SyncOnClose, Reserve: reserve, VolumeChoice: cfg.VolumeChoosingPolicy, FS: cfg.FS,
		Changed: func(id uint64) {
			if k != nil { // nil only while the store loads, before anything can be cached
				k.replicaChanged(id)
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("datanode: open data directories %s: %w", strings.Join(cfg.dataDirs(), ", "), err)
	}
	if failed := st.Failed(); len(failed) > cfg.FailedVolumesTolerated {
		return nil, fmt.Errorf("datanode: %d data directories failed, more than failed_volumes_tolerated (%d): %w",
			len(failed), cfg.FailedVolumesTolerated, failedErr(failed))
	}
	if cfg.Auth == auth.Simple {
		logger.Warn(auth.SimpleWarning, "component", "datanode")
	}
	var dnKey []byte
	if cfg.DatanodeKeyFile != "" {
		if dnKey, err = auth.LoadKey(cfg.DatanodeKeyFile); err != nil {
			return nil, fmt.Errorf("datanode: datanode_key_file: %w", err)
		}
	}
	name := "datanode"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &DataNode{
		cfg:         cfg,
		log:         logger.With("datanode", st.ID()),
		store:       st,
		metrics:     newMetrics(),
		user:        name,
		tokens:      blocktoken.NewVerifier(),
		dnKey:       dnKey,
		ctx:         ctx,
		cancel:      cancel,
		conns:       make(map[net.Conn]struct{}),
		volumeCheck: make(chan struct{}, 1),
		clients:     make(map[string]*clientState),
	}
	if d.net, err = newNetTuning(cfg); err != nil {
		return nil, fmt.Errorf("datanode: %w", err)
	}
	d.recv = newRecvBudget(cfg.ReceiveBufferBudget, func(delta int64) { d.metrics.receiveBuffers.Add(float64(delta)) })
	d.reads = newReadWindow(cfg.PageCacheBudget, d.dropReplicaRange)
	d.scanner = newScanner(d)
	d.balance = newThrottle(cfg.BalanceBandwidth)
	d.cache = cache
	k = newCacher(d, cache)
	d.cacher = k
	d.metrics.watchCache(cache)
	return d, nil
}

// ID is the datanode's stable id (a UUID kept in data_dir/VERSION).
func (d *DataNode) ID() string { return d.store.ID() }

// DataAddr is the bound data-transfer address (after Start).
func (d *DataNode) DataAddr() string { return addrString(d.dataLn) }

// IPCAddr is the bound InterDatanodeProtocol address (after Start).
func (d *DataNode) IPCAddr() string { return addrString(d.ipcLn) }

// HTTPAddr is the bound /metrics address (after Start).
func (d *DataNode) HTTPAddr() string { return addrString(d.httpLn) }

func addrString(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// DomainSocket is the short-circuit read socket's path (after Start; ""
// without domain_socket_path).
func (d *DataNode) DomainSocket() string {
	if d.scLn == nil {
		return ""
	}
	return d.scLn.Addr().String()
}

// Info is the DatanodeInfo this node registers with (after Start).
func (d *DataNode) Info() *dfspb.DatanodeInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return cloneInfo(d.info)
}

// Start binds data_addr, ipc_addr and http_addr and starts serving, talking
// to the namenode (retrying while it is down) and scanning blocks.
func (d *DataNode) Start() error {
	var err error
	d.mu.Lock()
	started := d.dataLn != nil || d.closed
	d.mu.Unlock()
	if started {
		return errors.New("datanode: Start called twice or after Close")
	}
	if d.srvTLS, err = d.cfg.Wire.Server(); err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	if d.cliTLS, err = d.cfg.Wire.Client(); err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	// The data listener stays plain: serveConn tunes the TCP socket and
	// then does the TLS handshake itself, under io_timeout.
	dataLn, err := net.Listen("tcp", d.cfg.DataAddr)
	if err != nil {
		return fmt.Errorf("datanode: listen data_addr: %w", err)
	}
	ipcLn, err := net.Listen("tcp", d.cfg.IPCAddr)
	if err != nil {
		dataLn.Close()
		return fmt.Errorf("datanode: listen ipc_addr: %w", err)
	}
	httpLn, err := pki.Listen(d.cfg.HTTPAddr, d.srvTLS)
	if err != nil {
		dataLn.Close()
		ipcLn.Close()
		return fmt.Errorf("datanode: listen http_addr: %w", err)
	}
	addrs := d.cfg.nameNodes()
	for _, addr := range addrs {
		conn, err := grpc.NewClient(addr, pki.DialOption(d.cliTLS))
		if err != nil {
			d.closeNameNodeConns()
			dataLn.Close()
			ipcLn.Close()
			httpLn.Close()
			return fmt.Errorf("datanode: namenode %s: %w", addr, err)
		}
		a := &bpActor{d: d, addr: addr, conn: conn, nn: dfspb.NewDatanodeProtocolClient(conn), ibr: newReportQueue()}
		if len(addrs) > 1 {
			a.source = addr
		} else {
			a.noHA.Store(true) // a single namenode is obeyed from the start, as it always was
		}
		d.actors = append(d.actors, a)
	}
	if d.cfg.DomainSocketPath != "" {
		// After the data port is bound: _PORT in the path is its port.
		if d.scLn, err = d.listenDomainSocket(int(portOf(dataLn))); err != nil {
			d.closeNameNodeConns()
			dataLn.Close()
			ipcLn.Close()
			httpLn.Close()
			return fmt.Errorf("datanode: domain_socket_path: %w", err)
		}
		d.scSlots = make(chan struct{}, d.cfg.MaxXceiversPerHost)
	}
	d.dataLn, d.ipcLn, d.httpLn = dataLn, ipcLn, httpLn
	d.dataGate = connlimit.NewGate("data", d.cfg.MaxXceivers, d.cfg.MaxXceiversPerHost, d.log)
	d.mu.Lock()
	d.info = &dfspb.DatanodeInfo{
		Id:            d.store.ID(),
		Hostname:      d.cfg.Hostname,
		IpAddr:        advertiseIP(d.cfg, d.dataLn.Addr()),
		DataPort:      portOf(d.dataLn),
		IpcPort:       portOf(d.ipcLn),
		HttpPort:      portOf(d.httpLn),
		Rack:          d.cfg.Rack,
		CacheCapacity: d.cfg.CacheCapacity,
	}
	d.mu.Unlock()

	d.grpcSrv = grpc.NewServer(append(pki.ServerOption(d.srvTLS), grpc.UnaryInterceptor(d.authorizePeer))...)
	dfspb.RegisterInterDatanodeProtocolServer(d.grpcSrv, &interDatanode{d: d})
	httpSrv := httpserver.New("datanode http", webui.SecureHeaders(d.httpHandler()), d.cfg.HTTP, d.log)
	d.httpSrv = httpSrv.Server

	d.goRun(func() { d.serveData() })
	if d.scLn != nil {
		d.goRun(func() { d.serveShortCircuit(d.scLn) })
	}
	d.goRun(func() { _ = d.grpcSrv.Serve(d.ipcLn) })
	d.goRun(func() { _ = httpSrv.Serve(d.httpLn) })
	for _, a := range d.actors {
		d.goRun(a.run)
		d.goRun(a.runReports)
	}
	d.goRun(d.scanner.run)
	d.goRun(d.checkVolumesLoop)
	for range d.cfg.CacheConcurrency {
		d.goRun(d.cacher.run)
	}
	info := d.Info()
	d.log.Info("datanode started", "data", d.DataAddr(), "ipc", d.IPCAddr(), "http", d.HTTPAddr(), "domain_socket", d.DomainSocket(),
		"advertise", net.JoinHostPort(info.IpAddr, strconv.Itoa(int(info.DataPort))), "hostname", info.Hostname,
		"data_dirs", d.store.Dirs(), "failed_dirs", len(d.store.Failed()), "replicas", len(d.store.Replicas()), "namenode", d.cfg.NameNode)
	return nil
}

func portOf(ln net.Listener) uint32 {
	if ta, ok := ln.Addr().(*net.TCPAddr); ok {
		return uint32(ta.Port)
	}
	return 0
}

func (d *DataNode) goRun(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// Close stops the datanode: listeners and data connections are closed
// (writes in progress stay as RBW replicas for recovery), background work
// stops, and Close waits for it.
func (d *DataNode) Close() error {
	if !d.shutdown() {
		return nil
	}
	stopped := make(chan struct{})
	go func() { d.grpcSrv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		d.grpcSrv.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = d.httpSrv.Shutdown(ctx)
	cancel()
	d.wg.Wait()
	d.cache.Close()
	d.net.close()
	d.log.Info("datanode stopped")
	return d.closeNameNodeConns()
}

// Kill stops the datanode abruptly, like a crash: listeners and every
// connection are closed at once, nothing more is reported to the namenode
// and replicas are left as they are on disk. For tests.
func (d *DataNode) Kill() {
	d.killed.Store(true)
	if !d.shutdown() {
		return
	}
	d.grpcSrv.Stop()
	_ = d.httpSrv.Close()
	d.wg.Wait()
	d.cache.Close()
	d.net.close()
	_ = d.closeNameNodeConns()
}

func (d *DataNode) closeNameNodeConns() error {
	var err error
	for _, a := range d.actors {
		err = cmp.Or(err, a.conn.Close())
	}
	return err
}

// shutdown cancels everything and closes listeners and connections; it
// reports false if already done or never started.
func (d *DataNode) shutdown() bool {
	d.mu.Lock()
	if d.closed || d.dataLn == nil {
		d.mu.Unlock()
		return false
	}
	d.closed = true
	conns := make([]net.Conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	d.cancel()
	d.dataLn.Close()
	if d.scLn != nil {
		d.scLn.Close() // removes the socket file: clients read over TCP
	}
	for _, c := range conns {
		c.Close()
	}
	return true
}

// track registers a data connection so Kill/Close can cut it; it reports
// false (and closes c) when the node is shutting down.
func (d *DataNode) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		c.Close()
		return false
	}
	d.conns[c] = struct{}{}
	return true
}

func (d *DataNode) untrack(c net.Conn) {
	d.mu.Lock()
	delete(d.conns, c)
	d.mu.Unlock()
}

// rpcContext is a context for one namenode call: a deadline, the
// caller's identity and, with a datanode key, the proof of membership.
func (d *DataNode) rpcContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(d.ctx, timeout)
	c := auth.Caller{User: d.user, Client: "datanode-" + d.store.ID()}
	if d.dnKey != nil {
		c.Datanode = auth.DatanodeCredential(d.dnKey, d.store.ID())
	}
	return c.Outgoing(ctx), cancel
}

var errKilled = errors.New("datanode was killed")
