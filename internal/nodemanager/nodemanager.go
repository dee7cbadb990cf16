package nodemanager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/container"
	"smarth/internal/diskperm"
	"smarth/internal/httpserver"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/shuffle"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/webui"
)

// NodeManager is the daemon.
type NodeManager struct {
	cfg Config
	log *slog.Logger
	fs  mapreduce.FS // as the node manager itself (racks, datanode report)
	dfs *client.FileSystem
	// users gives tasks the file system as their job's submitter, so the
	// namenode checks a task's reads and writes against the user's rights,
	// not the node manager's.
	users mapreduce.UserFS
	http  *http.Client
	// srvTLS and cliTLS are the wire's TLS (nil: off).
	srvTLS, cliTLS *tls.Config

	rpcLn, shuffleLn, httpLn net.Listener
	grpcSrv                  *grpc.Server
	shuffleSrv, httpSrv      *http.Server
	conn                     *grpc.ClientConn
	rm                       mrpb.ResourceManagerClient

	// containers runs tasks' user code (container_executor).
	containers *container.Launcher
	// tokens are the jobs' delegation tokens for containers (nil: none;
	// namenode_http unset or auth: simple).
	tokens *jobTokens
	// shipped holds each job's localized -files and -archives.
	shipped shippedCache

	buffers *mapreduce.SortBuffers  // map tasks' sort arenas, recycled
	memory  *mapreduce.MemoryBudget // map outputs held in memory

	stop   chan struct{}
	wake   chan struct{} // a task finished: heartbeat now
	wg     sync.WaitGroup
	tasks  sync.WaitGroup
	nodeID string

	reg          *prometheus.Registry
	launched     prometheus.Counter
	failed       prometheus.Counter
	shuffleBytes prometheus.Counter

	// rackChecked is when the namenode was last asked for this node's
	// rack (heartbeat goroutine only).
	rackChecked time.Time

	mu      sync.Mutex // guards running, reports, outputs, secrets, interval, rack
	running map[string]*runningTask
	reports []*mrpb.TaskReport // finished attempts not yet acknowledged
	outputs map[string]map[string]*mapreduce.MapOutput
	// secrets are the shuffle secrets of the jobs this node ran tasks of,
	// until the job is over: map output is served only to their holders.
	secrets  map[string][]byte
	interval time.Duration
	rack     string // as the namenode places this host's datanode, else cfg.Rack
	// lastHeartbeat is when the resource manager last answered (health).
	lastHeartbeat time.Time
	// rmAuth is the metadata every call to the resource manager carries:
	// the user and, in secure mode, the credential that proves it, as a
	// job client sends them (the resource manager accepts heartbeats only
	// from its nodemanager_users).
	rmAuth auth.Caller
	// refusal is the resource manager's last refusal, logged once
	// (heartbeat goroutine only).
	refusal string
}

type runningTask struct {
	launch   *mrpb.TaskLaunch
	started  time.Time
	cancel   context.CancelFunc
	killed   atomic.Bool
	progress atomic.Int64
}

// New returns a node manager; Start binds and begins heartbeating.
func New(cfg Config, logger *slog.Logger) (*NodeManager, error) {
	if cfg.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		cfg.Hostname = h
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Auth == auth.Simple {
		logger.Warn(auth.SimpleWarning, "component", "nodemanager")
	}
	rmAuth, err := rmCredential(cfg)
	if err != nil {
		return nil, err
	}
	srvTLS, err := cfg.Wire.Server()
	if err != nil {
		return nil, err
	}
	cliTLS, err := cfg.Wire.Client()
	if err != nil {
		return nil, err
	}
	nm := &NodeManager{rmAuth: rmAuth, srvTLS: srvTLS, cliTLS: cliTLS, cfg: cfg, log: logger, fs: cfg.FS, stop: make(chan struct{}), wake: make(chan struct{}, 1),
		running: map[string]*runningTask{}, outputs: map[string]map[string]*mapreduce.MapOutput{}, secrets: map[string][]byte{},
		interval: cfg.HeartbeatInterval, reg: prometheus.NewRegistry(), http: shuffle.NewClient(cliTLS), rack: cfg.Rack,
		buffers: mapreduce.NewSortBuffers(cfg.MapSlots), memory: mapreduce.NewMemoryBudget(cfg.MapOutputMemoryBytes)}
	nm.launched = prometheus.NewCounter(prometheus.CounterOpts{Name: "smarth_nm_tasks_launched_total", Help: "Task attempts started."})
	nm.failed = prometheus.NewCounter(prometheus.CounterOpts{Name: "smarth_nm_tasks_failed_total", Help: "Task attempts that failed."})
	nm.reg.MustRegister(nm.launched, nm.failed,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "smarth_nm_map_output_memory_bytes",
			Help: "Bytes of finished map output held in memory."}, func() float64 { return float64(nm.memory.Used()) }))
	nm.registerWebMetrics()
	return nm, nil
}

// Start binds the addresses, connects to the resource manager and starts
// heartbeating.
func (nm *NodeManager) Start() error {
	if err := nm.privateWorkDir(); err != nil {
		return fmt.Errorf("work_dir: %w", err)
	}
	// Task logs hold what users' tasks printed: the node manager's alone
	// (it serves them over HTTP), narrowed with a WARN where an older
	// release left them open.
	if _, err := diskperm.Fix(nm.logDir(), diskperm.Dir, nm.log.With("key", "log_dir")); err != nil {
		return fmt.Errorf("log_dir: %w", err)
	}
	if nm.fs == nil {
		c, err := client.New(client.Config{NameNode: nm.cfg.NameNode, ClientHost: nm.cfg.Hostname,
			ClientName: fmt.Sprintf("smarth-nodemanager-%s-%d", nm.cfg.Hostname, os.Getpid()), TokenFile: nm.cfg.TokenFile, TLS: nm.cliTLS, Logger: nm.log})
		if err != nil {
			return fmt.Errorf("namenode client: %w", err)
		}
		nm.dfs, nm.fs = c, mapreduce.DFS(c)
	}
	switch {
	case nm.cfg.UserFS != nil:
		nm.users = nm.cfg.UserFS
	case nm.cfg.FS != nil:
		nm.users = mapreduce.SharedFS{FS: nm.cfg.FS}
	default:
		nm.users = mapreduce.NewDFSPool(client.Config{NameNode: nm.cfg.NameNode, ClientHost: nm.cfg.Hostname,
			ClientName: fmt.Sprintf("smarth-nodemanager-%s-%d", nm.cfg.Hostname, os.Getpid()), TokenFile: nm.cfg.TokenFile, TLS: nm.cliTLS, Logger: nm.log})
	}
	var err error
	// rpc_addr is gRPC, which does its own TLS (ServerOption below); the
	// shuffle and web servers get TLS listeners.
	listen := func(addr, key string, t *tls.Config) net.Listener {
		if err != nil || addr == "" {
			return nil
		}
		var ln net.Listener
		if ln, err = pki.Listen(addr, t); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
		return ln
	}
	nm.rpcLn = listen(nm.cfg.RPCAddr, "rpc_addr", nil)
	nm.shuffleLn = listen(nm.cfg.ShuffleAddr, "shuffle_addr", nm.srvTLS)
	nm.httpLn = listen(nm.cfg.HTTPAddr, "http_addr", nm.srvTLS)
	if err != nil {
		nm.closeListeners()
		return err
	}
	nm.containers, err = container.NewLauncher(container.Config{Executor: nm.cfg.ContainerExecutor, Policy: nm.cfg.Containers,
		Dir: filepath.Join(nm.cfg.WorkDir, "containers"), Secure: nm.cfg.Auth != auth.Simple, Logger: nm.log,
		// Unique per node manager on a host (tests run several in one process).
		Name: fmt.Sprintf("smarth-nm-%d-%s", os.Getpid(), portOf(nm.ShuffleAddr()))})
	if err != nil {
		nm.closeListeners()
		return fmt.Errorf("containers: %w", err)
	}
	if nm.cfg.NameNodeHTTP != "" && nm.cfg.Auth != auth.Simple {
		cred, cerr := auth.LoadCredential(nm.cfg.TokenFile)
		if cerr != nil || cred == "" {
			nm.closeListeners()
			nm.containers.Close()
			return fmt.Errorf("namenode_http: containers' delegation tokens need the node manager's token_file: %v", cerr)
		}
		nm.tokens = newJobTokens(nm.cfg.NameNodeHTTP, nm.cliTLS != nil, cred, nm.http)
	}
	nm.conn, err = grpc.NewClient(nm.cfg.ResourceManager, pki.DialOption(nm.cliTLS))
	if err != nil {
		nm.closeListeners()
		nm.containers.Close()
		return fmt.Errorf("resourcemanager: %w", err)
	}
	nm.rm = mrpb.NewResourceManagerClient(nm.conn)
	nm.nodeID = nm.cfg.Hostname + "@" + nm.ShuffleAddr()

	shuffleSrv := httpserver.New("shuffle", nm.countShuffle(shuffle.Handler(nm.lookupOutput, nm.jobSecret)), nm.cfg.HTTP, nm.log)
	nm.shuffleSrv = shuffleSrv.Server
	nm.serve(func() { shuffleSrv.Serve(nm.shuffleLn) })
	if nm.rpcLn != nil {
		nm.grpcSrv = grpc.NewServer(pki.ServerOption(nm.srvTLS)...)
		healthpb.RegisterHealthServer(nm.grpcSrv, health.NewServer())
		nm.serve(func() { nm.grpcSrv.Serve(nm.rpcLn) })
	}
	if nm.httpLn != nil {
		httpSrv := httpserver.New("node manager http", webui.SecureHeaders(nm.httpHandler()), nm.cfg.HTTP, nm.log)
		nm.httpSrv = httpSrv.Server
		nm.serve(func() { httpSrv.Serve(nm.httpLn) })
	}
	nm.serve(nm.heartbeatLoop)
	nm.serve(nm.logJanitor)
	nm.log.Info("node manager started", "node", nm.nodeID, "rack", nm.cfg.Rack, "shuffle", nm.ShuffleAddr(),
		"container_executor", nm.cfg.ContainerExecutor, "containers_switch_user", nm.containers.Linux(), "cgroups", nm.containers.Cgroups())
	return nil
}

func (nm *NodeManager) serve(f func()) {
	nm.wg.Add(1)
	go func() { defer nm.wg.Done(); f() }()
}

func (nm *NodeManager) closeListeners() {
	for _, ln := range []net.Listener{nm.rpcLn, nm.shuffleLn, nm.httpLn} {
		if ln != nil {
			ln.Close()
		}
	}
}

func addr(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// RPCAddr, ShuffleAddr and HTTPAddr are the bound addresses.
func (nm *NodeManager) RPCAddr() string     { return addr(nm.rpcLn) }
func (nm *NodeManager) ShuffleAddr() string { return addr(nm.shuffleLn) }
func (nm *NodeManager) HTTPAddr() string    { return addr(nm.httpLn) }

// ID is the node's ID at the resource manager.
func (nm *NodeManager) ID() string { return nm.nodeID }

// Close stops heartbeating, kills running tasks and stops serving. To the
// resource manager it looks like a lost node.
func (nm *NodeManager) Close() error {
	select {
	case <-nm.stop:
		return nil
	default:
	}
	close(nm.stop)
	nm.mu.Lock()
	for _, rt := range nm.running {
		rt.killed.Store(true)
		rt.cancel()
	}
	nm.mu.Unlock()
	nm.tasks.Wait()
	nm.containers.Close()
	if nm.tokens != nil {
		// Its tasks are gone: so go their credentials (a job still
		// running gets new ones on the nodes that run it).
		for _, j := range nm.tokens.jobs() {
			if err := nm.tokens.cancel(j); err != nil {
				nm.log.Warn("cannot cancel a job's delegation token", "job", j, "err", err)
			}
		}
	}
	if nm.grpcSrv != nil {
		nm.grpcSrv.Stop()
	}
	for _, s := range []*http.Server{nm.shuffleSrv, nm.httpSrv} {
		if s != nil {
			s.Close()
		}
	}
	nm.closeListeners()
	nm.wg.Wait()
	if nm.conn != nil {
		nm.conn.Close()
	}
	if nm.dfs != nil {
		nm.dfs.Close()
	}
	if nm.users != nil {
		nm.users.Close()
	}
	return nil
}

// Running is the number of task attempts running on this node.
func (nm *NodeManager) Running() int {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return len(nm.running)
}

// HeldOutputs is how many map outputs of a job this node still holds.
func (nm *NodeManager) HeldOutputs(jobID string) int {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return len(nm.outputs[jobID])
}

func (nm *NodeManager) lookupOutput(jobID, attempt string) (*mapreduce.MapOutput, bool) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	o, ok := nm.outputs[jobID][attempt]
	return o, ok
}

// jobSecret is the shuffle secret of a job this node runs or ran tasks of.
func (nm *NodeManager) jobSecret(jobID string) ([]byte, bool) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	s, ok := nm.secrets[jobID]
	return s, ok && len(s) > 0
}

func (nm *NodeManager) heartbeatLoop() {
	for {
		nm.heartbeat()
		nm.mu.Lock()
		d := nm.interval
		nm.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-nm.stop:
			t.Stop()
			return
		case <-nm.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// rackRecheck is how often the namenode is asked again for this node's
// rack (a datanode may register after the node manager starts, or move).
const rackRecheck = 30 * time.Second

// checkRack takes this node's rack from the namenode's datanode report:
// the namenode's topology is what block locations (and so split racks)
// use, so the scheduler must see the node the same way. The configured
// rack is the fallback when no datanode has this hostname.
func (nm *NodeManager) checkRack() {
	if nm.dfs == nil || time.Since(nm.rackChecked) < rackRecheck {
		return
	}
	nm.rackChecked = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dns, err := nm.dfs.Datanodes(ctx, dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED)
	if err != nil {
		nm.log.Warn("cannot ask the namenode for this node's rack", "err", err)
		nm.rackChecked = time.Time{} // ask again next heartbeat
		return
	}
	rack := nm.cfg.Rack
	found := false
	for _, d := range dns {
		if d.GetHostname() == nm.cfg.Hostname && d.GetRack() != "" {
			rack, found = d.GetRack(), true
			break
		}
	}
	nm.mu.Lock()
	old := nm.rack
	nm.rack = rack
	nm.mu.Unlock()
	if old != rack {
		nm.log.Info("rack from the namenode", "host", nm.cfg.Hostname, "rack", rack, "configured", nm.cfg.Rack)
	} else if !found && nm.cfg.Rack != "" {
		nm.log.Debug("no datanode named like this host; using the configured rack", "host", nm.cfg.Hostname)
	}
}

// Rack is the rack this node reports to the resource manager.
func (nm *NodeManager) Rack() string {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.rack
}

// arenaIdle is how long an unused map sort buffer is kept for the next
// map before its memory is let go.
const arenaIdle = 30 * time.Second

func (nm *NodeManager) heartbeat() {
	nm.checkRack()
	nm.buffers.Trim(arenaIdle)
	req := &mrpb.HeartbeatRequest{NodeId: nm.nodeID, Hostname: nm.cfg.Hostname,
		ShuffleAddr: nm.ShuffleAddr(), HttpAddr: nm.HTTPAddr(), MapSlots: int32(nm.cfg.MapSlots), ReduceSlots: int32(nm.cfg.ReduceSlots)}
	nm.mu.Lock()
	req.Rack = nm.rack
	maps, reduces := 0, 0
	for id, rt := range nm.running {
		if rt.launch.IsMap {
			maps++
		} else {
			reduces++
		}
		req.Tasks = append(req.Tasks, &mrpb.TaskReport{JobId: rt.launch.JobId, AttemptId: id, IsMap: rt.launch.IsMap,
			Index: rt.launch.Index, State: mrpb.TaskState_TASK_RUNNING, BytesRead: rt.progress.Load()})
	}
	sent := len(nm.reports)
	req.Tasks = append(req.Tasks, nm.reports...)
	nm.mu.Unlock()
	req.FreeMapSlots, req.FreeReduceSlots = int32(max(0, nm.cfg.MapSlots-maps)), int32(max(0, nm.cfg.ReduceSlots-reduces))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	ctx = nm.rmCaller().Outgoing(ctx)
	resp, err := nm.rm.Heartbeat(ctx, req)
	cancel()
	if err != nil {
		if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
			// Retrying will not help until the operator fixes token_file
			// or nodemanager_users: say so once, not every heartbeat.
			if msg := status.Convert(err).Message(); msg != nm.refusal {
				nm.refusal = msg
				nm.log.Error("the resource manager refuses this node manager; check token_file here and nodemanager_users there", "err", msg)
			}
			return
		}
		nm.log.Warn("heartbeat failed", "err", err)
		return
	}
	nm.refusal = ""
	nm.mu.Lock()
	nm.lastHeartbeat = time.Now()
	nm.reports = nm.reports[sent:]
	if ms := resp.GetHeartbeatIntervalMs(); ms > 0 {
		nm.interval = time.Duration(ms) * time.Millisecond
	}
	for _, id := range resp.GetKillAttempts() {
		if rt := nm.running[id]; rt != nil {
			rt.killed.Store(true)
			rt.cancel()
		}
	}
	var gone []string
	for _, j := range resp.GetFinishedJobs() {
		for _, o := range nm.outputs[j] {
			o.Release()
		}
		delete(nm.outputs, j)
		delete(nm.secrets, j)
		gone = append(gone, j)
	}
	nm.mu.Unlock()
	for _, j := range gone {
		nm.shipped.forget(j)
		os.RemoveAll(filepath.Join(nm.cfg.WorkDir, j))
		if nm.tokens != nil {
			nm.serve(func() {
				if err := nm.tokens.cancel(j); err != nil {
					nm.log.Warn("cannot cancel a finished job's delegation token", "job", j, "err", err)
				}
			})
		}
	}
	if agg := resp.GetAggregateLogs(); len(agg) > 0 {
		nm.serve(func() { nm.aggregate(agg) })
	}
	for _, l := range resp.GetLaunches() {
		nm.start(l)
	}
}

func (nm *NodeManager) start(l *mrpb.TaskLaunch) {
	ctx, cancel := context.WithCancel(context.Background())
	rt := &runningTask{launch: l, cancel: cancel, started: time.Now()}
	nm.mu.Lock()
	select {
	case <-nm.stop:
		nm.mu.Unlock()
		cancel()
		return
	default:
	}
	nm.running[l.AttemptId] = rt
	nm.secrets[l.JobId] = l.ShuffleSecret
	nm.tasks.Add(1)
	nm.mu.Unlock()
	nm.launched.Inc()
	go func() {
		defer nm.tasks.Done()
		defer cancel()
		start := time.Now()
		rep := nm.run(ctx, rt)
		nm.log.Info("task attempt ended", "attempt", l.AttemptId, "state", rep.State.String(),
			"elapsed_ms", time.Since(start).Milliseconds())
		nm.mu.Lock()
		delete(nm.running, l.AttemptId)
		nm.reports = append(nm.reports, rep)
		nm.mu.Unlock()
		select {
		case nm.wake <- struct{}{}:
		default:
		}
	}()
}

// run executes one attempt and returns its final report.
func (nm *NodeManager) run(ctx context.Context, rt *runningTask) *mrpb.TaskReport {
	l := rt.launch
	rep := &mrpb.TaskReport{JobId: l.JobId, AttemptId: l.AttemptId, IsMap: l.IsMap, Index: l.Index}
	workDir := filepath.Join(nm.cfg.WorkDir, l.JobId, l.AttemptId)
	// The job's directory holds its spills and map outputs: the node
	// manager's alone (work_dir itself is a passage for containers).
	if err := diskperm.MkdirAll(filepath.Join(nm.cfg.WorkDir, l.JobId), diskperm.Dir); err != nil {
		nm.log.Warn("job work directory", "job", l.JobId, "err", err)
	}
	logs, lerr := openAttemptLog(nm.logDir(), l.JobId, l.AttemptId, nm.cfg.LogLimitBytes)
	if lerr != nil {
		nm.log.Warn("task attempt runs without its log files", "attempt", l.AttemptId, "err", lerr)
	} else {
		defer logs.Close()
	}
	logger := nm.log
	if logs != nil {
		logger = logs.logger(nm.log)
	}
	logger.Info("task attempt starting", "attempt", l.AttemptId, "job", l.JobId, "app", l.App, "user", l.User,
		"node", nm.nodeID, "split", l.GetSplit().GetPath(), "offset", l.GetSplit().GetOffset(), "length", l.GetSplit().GetLength())
	res, err := nm.runTask(ctx, rt, workDir, logger, logs)
	defer func() {
		logger.Info("task attempt ended", "attempt", l.AttemptId, "state", rep.State.String(), "error", rep.Error,
			"elapsed", time.Since(rt.started).Round(time.Millisecond))
	}()
	switch {
	case err == nil:
		rep.State = mrpb.TaskState_TASK_SUCCEEDED
		for g, names := range res.Counters {
			for n, v := range names {
				rep.Counters = append(rep.Counters, &mrpb.Counter{Group: g, Name: n, Value: v})
			}
		}
		if res.Output != nil {
			nm.mu.Lock()
			if nm.outputs[l.JobId] == nil {
				nm.outputs[l.JobId] = map[string]*mapreduce.MapOutput{}
			}
			nm.outputs[l.JobId][l.AttemptId] = res.Output
			nm.mu.Unlock()
			return rep
		}
	case rt.killed.Load():
		rep.State = mrpb.TaskState_TASK_KILLED
	default:
		nm.failed.Inc()
		rep.State, rep.Error = mrpb.TaskState_TASK_FAILED, err.Error()
		var fe *mapreduce.FetchError
		if errors.As(err, &fe) {
			rep.FetchFailedMap, rep.FetchFailedAttempt = int32(fe.MapIndex), fe.Attempt
		}
		nm.log.Warn("task attempt failed", "attempt", l.AttemptId, "err", err)
	}
	os.RemoveAll(workDir)
	return rep
}

func (nm *NodeManager) runTask(ctx context.Context, rt *runningTask, workDir string, logger *slog.Logger, logs *attemptLog) (res *mapreduce.TaskResult, err error) {
	defer func() {
		if p := recover(); p != nil { // an app's bug fails its task, not the node
			err = fmt.Errorf("task panicked: %v", p)
		}
	}()
	l := rt.launch
	job, err := mapreduce.TaskJob(nm.cfg.Registry, l.App, l.Params, l.Output, int(l.NumReduces))
	if err != nil {
		return nil, err
	}
	spec := mapreduce.TaskSpec{JobID: l.JobId, AttemptID: l.AttemptId, Job: job, IsMap: l.IsMap,
		Index: int(l.Index), NumMaps: int(l.NumMaps)}
	if s := l.GetSplit(); s != nil {
		spec.Split = mapreduce.Split{Index: int(s.Index), Path: s.Path, Offset: s.Offset, Length: s.Length,
			Hosts: s.Hosts, Racks: s.Racks, Meta: s.Meta, BlockID: s.BlockId, CachedHosts: s.CachedHosts}
	}
	for _, m := range l.GetMapOutputs() {
		spec.Inputs = append(spec.Inputs, mapreduce.MapOutputRef{MapIndex: int(m.MapIndex), Attempt: m.AttemptId, Addr: m.ShuffleAddr})
	}
	if l.User == "" {
		return nil, fmt.Errorf("task %s has no user to run as", l.AttemptId)
	}
	fsys, err := nm.users.For(l.User)
	if err != nil {
		return nil, err
	}
	items, err := mapreduce.ShippedOf(l.Params)
	if err != nil {
		return nil, err
	}
	var localize func(dir string, uid, gid int) error
	if len(items) > 0 {
		src, err := nm.shipped.fetch(ctx, l.JobId, filepath.Join(nm.cfg.WorkDir, l.JobId), fsys, items)
		if err != nil {
			return nil, fmt.Errorf("localize the job's shipped files: %w", err)
		}
		localize = func(dir string, uid, gid int) error { return linkShipped(src, dir, items, uid, gid) }
	}
	ctr, err := nm.container(l, logger, localize)
	if err != nil {
		return nil, err
	}
	defer func() {
		// The container's reason (over its memory limit) goes into the
		// task's error, then everything it left running is killed.
		err = ctr.Explain(err)
		if derr := ctr.Destroy(); derr != nil {
			logger.Warn("container not fully cleaned up", "attempt", l.AttemptId, "err", derr)
		}
	}()
	env := mapreduce.TaskEnv{FS: fsys, WorkDir: workDir, SortBufferBytes: nm.cfg.SortBufferBytes,
		ReduceMemoryBytes: nm.cfg.ReduceMemoryBytes, ParallelFetches: nm.cfg.ParallelFetches, SortBuffers: nm.buffers,
		MapOutputMemory: nm.memory, Progress: &rt.progress, Logger: logger,
		Fetcher: &fetcher{nm: nm, remote: &shuffle.Fetcher{JobID: l.JobId, Secret: l.ShuffleSecret, Client: nm.http, HTTPS: nm.cliTLS != nil}, jobID: l.JobId},
		// The DFS client's ClientHost: a cache access names the reader as
		// block locations and the resource manager name hosts.
		Host: nm.cfg.Hostname}
	if logs != nil {
		env.Stderr = logs.stderr
	}
	env.Commands = ctr
	if !l.IsMap {
		env.Locator = &locator{nm: nm, jobID: l.JobId, attempt: l.AttemptId, known: -1}
	}
	return mapreduce.RunTask(ctx, env, spec)
}

// errStopAttempt: the resource manager no longer wants the attempt.
var errStopAttempt = errors.New("the resource manager no longer wants this attempt")

// locator asks the resource manager where the finished maps' outputs are,
// for a reduce launched before the map phase ended. Each call after the
// first is a long poll: the answer comes when another map finishes.
type locator struct {
	nm             *NodeManager
	jobID, attempt string
	known          int32 // finished maps in the last answer; -1 before the first
}

// mapOutputsWait is how long one GetMapOutputs call may wait for news.
const mapOutputsWait = time.Second

func (l *locator) MapOutputs(ctx context.Context) ([]mapreduce.MapOutputRef, error) {
	rctx, cancel := context.WithTimeout(ctx, mapOutputsWait+10*time.Second)
	defer cancel()
	rctx = l.nm.rmCaller().Outgoing(rctx)
	resp, err := l.nm.rm.GetMapOutputs(rctx, &mrpb.GetMapOutputsRequest{JobId: l.jobID, AttemptId: l.attempt,
		Known: l.known, WaitMs: int32(mapOutputsWait.Milliseconds())})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The resource manager may be briefly unreachable; its heartbeat
		// replies decide whether this attempt lives, so keep asking, at
		// the heartbeat pace.
		l.nm.log.Warn("asking for map outputs failed", "attempt", l.attempt, "err", err)
		l.nm.mu.Lock()
		d := l.nm.interval
		l.nm.mu.Unlock()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		return nil, nil
	}
	if resp.GetStop() {
		return nil, errStopAttempt
	}
	l.known = int32(len(resp.GetOutputs()))
	refs := make([]mapreduce.MapOutputRef, 0, len(resp.GetOutputs()))
	for _, m := range resp.GetOutputs() {
		refs = append(refs, mapreduce.MapOutputRef{MapIndex: int(m.GetMapIndex()), Attempt: m.GetAttemptId(), Addr: m.GetShuffleAddr()})
	}
	return refs, nil
}

// fetcher reads map output this node holds from its own disk and the
// rest over HTTP.
type fetcher struct {
	nm     *NodeManager
	remote *shuffle.Fetcher
	jobID  string
}

func (f *fetcher) Fetch(ctx context.Context, ref mapreduce.MapOutputRef, reduce int) (io.ReadCloser, int64, error) {
	if ref.Addr == f.nm.ShuffleAddr() {
		if out, ok := f.nm.lookupOutput(f.jobID, ref.Attempt); ok {
			return mapreduce.OpenSegment(out, reduce)
		}
	}
	return f.remote.Fetch(ctx, ref, reduce)
}

// rmCredential is the metadata that identifies the node manager to the
// resource manager, the keys a job client uses: in secure mode its
// credential (token_file, else the client library's default token file;
// its user must be one of the resource manager's nodemanager_users), in
// simple mode the OS user's name.
func rmCredential(cfg Config) (auth.Caller, error) {
	if cfg.Auth == auth.Simple {
		if u, err := user.Current(); err == nil {
			return auth.Caller{User: u.Username}, nil
		}
		return auth.Caller{}, nil
	}
	cred, err := auth.LoadCredential(cfg.TokenFile)
	if err != nil {
		return auth.Caller{}, fmt.Errorf("token_file: %w", err)
	}
	if cred == "" {
		// Only with FS or UserFS (tests): Validate requires a credential
		// otherwise. A secure resource manager refuses the heartbeats.
		return auth.Caller{}, nil
	}
	return auth.Caller{User: auth.CredentialUser(cred), Credential: cred}, nil
}

// rmCaller is the node manager on its calls to the resource manager,
// named by its node id.
func (nm *NodeManager) rmCaller() auth.Caller {
	c := nm.rmAuth
	c.Client = nm.nodeID
	return c
}
