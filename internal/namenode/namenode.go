package namenode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"smarth/internal/auth"
	"smarth/internal/blocktoken"
	"smarth/internal/diskperm"
	"smarth/internal/hostsfile"
	"smarth/internal/httpserver"
	"smarth/internal/ipc"
	"smarth/internal/namenode/cachemgr"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
	"smarth/internal/namenode/retrycache"
	"smarth/internal/namenode/speeds"
	"smarth/internal/pki"
	"smarth/internal/placement"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
	"smarth/internal/webui"
)

// NameNode is one namenode. Create it with New, then Start.
type NameNode struct {
	cfg       Config
	logger    *slog.Logger
	clock     func() time.Time
	policy    placement.Policy
	racks     *topology.Resolver
	metrics   *metrics
	speeds    *speeds.Table
	startedAt time.Time
	tokens    *blocktoken.Manager // block keys; nil when block_access_token_enable is off
	ident     *identity           // who is calling
	retry     *retrycache.Cache   // outcomes of at-most-once calls (retry.go); nil when retry_cache_enable is off
	retryHits prometheus.Counter

	mu         sync.RWMutex          // guards the fields below up to the blank line
	state      *fsstate.State        // namespace, block map, cache pools and directives
	journal    editLog               // Append under mu (defines the order); Sync outside
	jnl        *journal.Journal      // the file edit log behind journal; nil with HA (replog instead)
	nodes      map[string]*datanode  // by datanode id
	excluded   hostsfile.Set         // hosts_exclude_file's names (decommission.go)
	maint      hostsfile.Maintenance // hosts_maintenance_file's hosts (maintenance.go)
	decomNext  string                // the decommissioning datanode the monitor's next tick starts at (decommission.go)
	moves      map[uint64]string     // block -> source of a balancer move in flight (balance.go)
	leases     *leaseTable
	pending    map[uint64]*pendingTransfer // block id → re-replication in flight
	deleting   deletions                   // replicas of live blocks asked deleted, not yet reported gone (deleting.go)
	recovering map[uint64]time.Time        // block id → when its lease recovery was sent
	postponed  []fsstate.Orphan            // invalidations held back during safe mode
	early      earlyReports                // a standby's reports of blocks its log has not reached (early.go)
	safe       safeMode
	rng        *rand.Rand // placement and replication choices
	dirty      bool       // something changed that the replication monitor should look at
	stats      replStats  // from the last replication scan
	ckptTx     uint64     // txid of the last checkpoint
	ckptAt     time.Time
	cache      *cachemgr.Manager // in-memory caching plan and datanode cache reports (guarded by mu too)
	lowSpace   error             // meta_dir's file system is below resource_du_reserved (editspace.go)

	ckptMu sync.Mutex // serialises checkpoints

	unlockMeta func() error // releases the meta_dir lock

	ha *haNode // the HA group's member (ha.go); nil without HA

	grpc     *grpc.Server
	ipc      *ipc.Server // the lean transport of internal/client, on the same port
	rpcMux   *ipc.Mux    // routes the RPC port's connections to grpc or ipc
	rpcLis   net.Listener
	httpLis  net.Listener
	httpSrv  *http.Server
	stop     chan struct{}
	wg       sync.WaitGroup
	closeErr error
	closed   sync.Once
	started  bool
}

// New checks cfg, loads (or formats) the metadata in cfg.MetaDir and
// returns a namenode ready to Start. It starts in safe mode unless the
// namespace has no complete blocks.
func New(cfg Config, logger *slog.Logger) (*NameNode, error) {
	return newNameNode(cfg, logger, journal.OS{Buffered: cfg.EditLogIO == "buffered"}, time.Now)
}

// newNameNode is New with an injectable file system and clock, for tests.
func newNameNode(cfg Config, logger *slog.Logger, fs journal.FS, clock func() time.Time) (*NameNode, error) {
	if cfg.Superuser == "" {
		cfg.Superuser = DefaultConfig().Superuser
	}
	if cfg.Supergroup == "" {
		cfg.Supergroup = namespace.DefaultSupergroup
	}
	if cfg.Auth == "" { // a config that names no auth is secure (docs/security.md)
		cfg.Auth = auth.DefaultMode
	}
	if cfg.BlockAccessTokenLifetime == 0 { // configs written before tokens existed
		cfg.BlockAccessTokenLifetime = blocktoken.DefaultLifetime
	}
	if cfg.BlockKeyUpdateInterval == 0 {
		cfg.BlockKeyUpdateInterval = blocktoken.DefaultRoll
	}
	if cfg.CachePolicy == "" { // configs written before caching existed
		cfg.CachePolicy = "none"
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("namenode config: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	racks, err := topology.NewMapping(cfg.mapping())
	if err != nil {
		return nil, err
	}
	excluded, err := hostsfile.Read("hosts_exclude_file", cfg.HostsExcludeFile)
	if err != nil {
		return nil, fmt.Errorf("namenode config: %w", err)
	}
	maint, err := hostsfile.ReadMaintenance("hosts_maintenance_file", cfg.HostsMaintenanceFile)
	if err != nil {
		return nil, fmt.Errorf("namenode config: %w", err)
	}
	nn := &NameNode{
		excluded: excluded, maint: maint,
		cfg: cfg, logger: logger, clock: clock, racks: racks,
		policy:     placement.Policies[cfg.Placement](),
		speeds:     speeds.New(),
		nodes:      map[string]*datanode{},
		leases:     newLeaseTable(),
		pending:    map[uint64]*pendingTransfer{},
		deleting:   deletions{},
		recovering: map[uint64]time.Time{},
		rng:        rand.New(rand.NewSource(clock().UnixNano())),
		stop:       make(chan struct{}),
		startedAt:  clock(),
	}
	if nn.ident, err = newIdentity(cfg, logger); err != nil {
		return nil, fmt.Errorf("namenode: %w", err)
	}
	nn.ident.web.datanodeIPs = nn.datanodeIPs
	nn.ident.web.store = tokenLog{nn}
	if nn.tokens, err = newTokens(cfg, clock()); err != nil {
		return nil, fmt.Errorf("namenode: block keys: %w", err)
	}
	if !cfg.BlockAccessTokenEnable {
		logger.Warn("block_access_token_enable is off: any peer that can reach a datanode reads and writes any block by id; use only for compatibility on a trusted network")
	}
	nn.cache, err = cachemgr.New(cachemgr.Config{Policy: cfg.CachePolicy, Window: cfg.CacheWindow, TTL: cfg.CacheTTL,
		Affinity: cfg.CacheAffinity, AffinitySource: cfg.CacheAffinitySource, MaxReplication: cfg.MaxReplication}, cacheView{nn}, &nn.mu, clock, logger)
	if err != nil {
		return nil, fmt.Errorf("namenode config: cache_policy: %w", err)
	}
	nn.metrics = newMetrics(nn)
	nn.initRetryCache()
	nn.unlockMeta = func() error { return nil }
	if _, real := fs.(journal.OS); real {
		// meta_dir holds the namespace (every name, owner and block) and
		// the keys: the namenode's alone, whatever an older release left.
		if _, err := diskperm.Fix(cfg.MetaDir, diskperm.Dir, logger.With("key", "meta_dir")); err != nil {
			return nil, fmt.Errorf("namenode: meta_dir: %w", err)
		}
		if nn.unlockMeta, err = journal.LockDir(cfg.MetaDir); err != nil {
			return nil, fmt.Errorf("namenode: meta_dir: %w", err)
		}
	}
	load := nn.load
	if cfg.HA.ID != "" {
		load = nn.loadHA
	}
	if err := load(fs); err != nil {
		nn.unlockMeta()
		return nil, err
	}
	return nn, nil
}

// rebuildLeasesLocked gives every open file a fresh lease for its writer.
// Leases are not persisted (nor replicated): after a restart, as after an
// HDFS restart, and on a namenode that becomes the active one.
func (nn *NameNode) rebuildLeasesLocked(now time.Time) {
	nn.leases = newLeaseTable()
	nn.state.Tree().Walk(func(n *namespace.INode) bool {
		if n.Writer() != nil {
			nn.leases.add(n.Writer().Client, n.ID, now)
		}
		return true
	})
}

// load reads the image and edit log, or formats an empty directory.
func (nn *NameNode) load(fs journal.FS) error {
	now := nn.clock()
	nn.state = nn.emptyState(now)
	j, err := journal.Open(fs, nn.cfg.MetaDir, nn.logger)
	if err != nil {
		return err
	}
	j.OnSync = nn.metrics.observeSync
	start := time.Now()
	// A load only adds to the heap: what it allocates is the namespace,
	// live to the end, plus the image's records, live until the load
	// ends. Collections during it would mark that growing heap again
	// and again (over 40% of a 1M-file load's CPU) and free next to
	// nothing, so the collector waits until the load is done.
	gc := debug.SetGCPercent(-1)
	hadImage, last, err := j.Load(retryLoader{nn.state, nn})
	debug.SetGCPercent(gc)
	if err != nil {
		return fmt.Errorf("namenode: load metadata from %s: %w", nn.cfg.MetaDir, err)
	}
	nn.journal, nn.jnl = j, j
	nn.ckptTx, nn.ckptAt = last, now
	if !hadImage {
		nn.logger.Info("formatting a new namespace", "meta_dir", nn.cfg.MetaDir, "superuser", nn.cfg.Superuser)
		if err := nn.checkpoint(); err != nil {
			return err
		}
	}
	nn.rebuildLeasesLocked(now)
	nn.initSafeMode(now)
	// Loading decoded the whole image into short-lived buffers and records
	// (as large as the namespace itself); collect them and give the pages
	// back now rather than carry them as resident memory until the heap
	// next grows that far.
	debug.FreeOSMemory()
	nn.logger.Info("namespace loaded", "meta_dir", nn.cfg.MetaDir, "last_txid", last,
		"files", nn.state.Tree().Files(), "dirs", nn.state.Tree().Dirs(), "blocks", nn.state.Blocks().Len(),
		"open_files", nn.leases.files(), "took", time.Since(start).String(), "safe_mode", nn.safe.on)
	return nil
}

// Start binds the RPC and HTTP addresses and starts serving and the
// background monitors.
func (nn *NameNode) Start() error {
	if nn.started {
		return errors.New("namenode: already started")
	}
	srvTLS, err := nn.cfg.Wire.Server()
	if err != nil {
		return fmt.Errorf("namenode: %w", err)
	}
	rpcLis, err := net.Listen("tcp", nn.cfg.RPCAddr)
	if err != nil {
		return fmt.Errorf("namenode: listen on rpc_addr %s: %w", nn.cfg.RPCAddr, err)
	}
	// The TLS listener wraps every handler of the web server (console,
	// metrics, WebHDFS) at once.
	httpLis, err := pki.Listen(nn.cfg.HTTPAddr, srvTLS)
	if err != nil {
		rpcLis.Close()
		return fmt.Errorf("namenode: listen on http_addr %s: %w", nn.cfg.HTTPAddr, err)
	}
	nn.started = true
	nn.rpcLis, nn.httpLis = rpcLis, httpLis
	// One RPC port for both transports: datanodes, the web UI and older
	// tools speak gRPC, the smarth client the lean IPC transport; the mux
	// terminates TLS for both and routes each connection by what it says.
	nn.rpcMux = ipc.NewMux(rpcLis, srvTLS, nn.logger)
	if n := nn.cfg.RPCMaxConnections; n > 0 {
		nn.rpcMux.SetMaxConns(n)
	}
	if n := nn.cfg.RPCMaxConnectionsPerHost; n > 0 {
		nn.rpcMux.SetMaxConnsPerHost(n)
	}
	nn.metrics.registerPort(nn.rpcMux)
	nn.grpc = nn.newGRPCServer(nn.rpcMux.GRPCServerOptions()...)
	nn.ipc = nn.newIPCServer()
	httpSrv := httpserver.New("namenode http", webui.SecureHeaders(nn.httpHandler()), nn.cfg.HTTP, nn.logger)
	nn.httpSrv = httpSrv.Server
	nn.wg.Add(6)
	go func() {
		defer nn.wg.Done()
		if err := nn.grpc.Serve(nn.rpcMux.GRPC()); !cleanStop(err) {
			nn.logger.Error("rpc server stopped", "error", err)
		}
	}()
	go func() {
		defer nn.wg.Done()
		if err := nn.ipc.Serve(nn.rpcMux.IPC()); !cleanStop(err) {
			nn.logger.Error("ipc server stopped", "error", err)
		}
	}()
	go func() {
		defer nn.wg.Done()
		if err := nn.rpcMux.Serve(); err != nil {
			nn.logger.Error("rpc port closed", "error", err)
		}
	}()
	go func() {
		defer nn.wg.Done()
		if err := httpSrv.Serve(httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			nn.logger.Error("http server stopped", "error", err)
		}
	}()
	go nn.loop(nn.monitorInterval(), nn.monitor)
	go nn.loop(nn.cfg.ReplicationInterval, nn.activeOnly(nn.replicationTick))
	if every := nn.trashEmptierInterval(); every > 0 {
		nn.wg.Add(1)
		go nn.loop(every, nn.activeOnly(nn.emptyTrashTick))
	}
	if nn.ha != nil {
		nn.wg.Add(1)
		go nn.ha.watch()
	}
	nn.logger.Info("namenode started", "rpc", nn.Addr(), "http", nn.HTTPAddr(), "placement", nn.cfg.Placement)
	return nil
}

// monitorInterval is how often liveness, leases, safe mode and checkpoints
// are checked: often enough to notice a dead node within a tenth of the
// timeout.
func (nn *NameNode) monitorInterval() time.Duration {
	d := min(nn.cfg.DeadNodeTimeout/10, nn.cfg.HeartbeatInterval, time.Second)
	return max(d, 10*time.Millisecond)
}

func (nn *NameNode) loop(every time.Duration, fn func()) {
	defer nn.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-nn.stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// Addr is the bound gRPC address.
func (nn *NameNode) Addr() string {
	if nn.rpcLis == nil {
		return nn.cfg.RPCAddr
	}
	return nn.rpcLis.Addr().String()
}

// HTTPAddr is the bound HTTP address.
func (nn *NameNode) HTTPAddr() string {
	if nn.httpLis == nil {
		return nn.cfg.HTTPAddr
	}
	return nn.httpLis.Addr().String()
}

// Close stops serving, checkpoints and closes the edit log. Operations
// already acknowledged are durable whether or not Close runs.
func (nn *NameNode) Close() error {
	nn.closed.Do(func() {
		close(nn.stop)
		if nn.started {
			done := make(chan struct{})
			nn.rpcMux.Close()
			go func() {
				var wg sync.WaitGroup
				wg.Go(nn.grpc.GracefulStop)
				wg.Go(nn.ipc.GracefulStop)
				wg.Wait()
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				nn.grpc.Stop()
				nn.ipc.Stop()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = nn.httpSrv.Shutdown(ctx)
			cancel()
		}
		nn.wg.Wait()
		if nn.ha != nil {
			nn.closeErr = nn.ha.log.Close()
		} else {
			if nn.journal.Err() == nil && nn.journal.LastTxID() > nn.ckptTx {
				if err := nn.checkpoint(); err != nil {
					nn.logger.Warn("checkpoint at shutdown failed; the edit log still has everything", "error", err)
				}
			}
			nn.closeErr = nn.jnl.Close()
		}
		nn.unlockMeta()
		nn.logger.Info("namenode stopped")
	})
	return nn.closeErr
}

// monitor runs the frequent checks.
func (nn *NameNode) monitor() {
	now := nn.clock()
	nn.checkDatanodes(now)
	active := nn.isActive()
	if active {
		nn.checkLeases(now)
	}
	nn.checkEditsSpace()
	nn.mu.Lock()
	nn.checkSafeMode(now)
	// With HA the group's snapshots are the checkpoints (replog).
	due := nn.jnl != nil && (nn.journal.LastTxID()-nn.ckptTx >= nn.cfg.CheckpointTxns ||
		(now.Sub(nn.ckptAt) >= nn.cfg.CheckpointPeriod && nn.journal.LastTxID() > nn.ckptTx))
	nn.mu.Unlock()
	if active {
		nn.cache.Tick(now)
	}
	nn.rollKeys(now)
	if n := nn.speeds.Expire(now, nn.cfg.SpeedRecordTTL); n > 0 {
		nn.logger.Info("forgot speed records of silent clients", "clients", n)
	}
	if due {
		if err := nn.checkpoint(); err != nil {
			nn.logger.Error("checkpoint failed", "error", err)
		}
	}
}

// checkpoint saves an image of the current state and trims the log.
func (nn *NameNode) checkpoint() error {
	nn.ckptMu.Lock()
	defer nn.ckptMu.Unlock()
	start := time.Now()
	nn.mu.Lock()
	tx, err := nn.jnl.Roll()
	if err != nil {
		nn.mu.Unlock()
		return err
	}
	im := nn.state.Image(tx)
	now := nn.clock()
	nn.mu.Unlock()
	if err := nn.jnl.SaveImage(im); err != nil {
		return err
	}
	nn.mu.Lock()
	nn.ckptTx, nn.ckptAt = tx, now
	nn.mu.Unlock()
	nn.metrics.checkpoints.Inc()
	nn.logger.Info("checkpoint", "txid", tx, "took", time.Since(start).String())
	return nil
}

// nowMs is the clock in unix milliseconds, the unit of inode times.
func (nn *NameNode) nowMs() int64 { return nn.clock().UnixMilli() }

// sync waits until txid is durable. Called without nn.mu.
func (nn *NameNode) sync(txid uint64) error {
	if txid == 0 {
		return nil
	}
	if err := nn.journal.Sync(txid); err != nil {
		if nn.ha != nil {
			if refusal := nn.ha.syncError(err); refusal != nil {
				return refusal
			}
		}
		if errors.Is(err, syscall.ENOSPC) {
			return errUnavailable("the namenode's edit log is out of space, so this operation is not acknowledged; it is held in memory and may still take effect once space is freed on meta_dir (%v)", err)
		}
		return errUnavailable("the namenode cannot write its edit log (%v); nothing more can be acknowledged", err)
	}
	return nil
}

// logOp appends op to the edit log. Callers hold nn.mu.
func (nn *NameNode) logOp(op fsstate.Record) uint64 { return nn.logCall(nil, op) }

// logCall appends op, wrapped with the ids of the client call that made
// it when there are any (call, from loggedCall): the other members and a
// restart rebuild the retry cache from them (retry.go).
func (nn *NameNode) logCall(call *fsstate.Call, op fsstate.Record) uint64 {
	nn.metrics.edits.WithLabelValues(op.Kind().String()).Inc()
	if call != nil {
		return nn.journal.Append(fsstate.Encode(&fsstate.Call{ID: call.ID, User: call.User, Op: op}))
	}
	return nn.journal.Append(fsstate.Encode(op))
}

func (nn *NameNode) isLive(id string) bool {
	dn := nn.nodes[id]
	return dn != nil && dn.live
}

// datanodeInfos returns the infos of the given datanode ids that are
// known, in order.
func (nn *NameNode) datanodeInfos(ids []string) []*dfspb.DatanodeInfo {
	out := make([]*dfspb.DatanodeInfo, 0, len(ids))
	for _, id := range ids {
		if dn := nn.nodes[id]; dn != nil {
			out = append(out, dn.snapshot())
		}
	}
	return out
}

// cleanStop reports whether a server's Serve returned because the
// namenode closed it: its listener closed, or the server stopped before
// Serve began (a namenode closed right after it started: a CI run of
// TestCleanStopLogsNoError logged the IPC server's answer as an error).
func cleanStop(err error) bool {
	return err == nil || errors.Is(err, net.ErrClosed) || errors.Is(err, grpc.ErrServerStopped) || errors.Is(err, ipc.ErrServerStopped)
}
