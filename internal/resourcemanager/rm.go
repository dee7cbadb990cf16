package resourcemanager

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/hostsfile"
	"smarth/internal/httpserver"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/shuffle"
	"smarth/internal/pki"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/sched"
	"smarth/internal/webui"
)

// ResourceManager is the daemon.
type ResourceManager struct {
	mrpb.UnimplementedResourceManagerServer
	cfg    Config
	log    *slog.Logger
	policy sched.Policy
	fs     mapreduce.FS       // as the resource manager itself (cache status)
	dfs    *client.FileSystem // closed with the daemon, when we made it
	users  mapreduce.UserFS   // as each job's submitter (output checks, commit, abort)
	// srvTLS and cliTLS are the wire's TLS (nil: off).
	srvTLS, cliTLS *tls.Config
	epoch          string

	grpcSrv *grpc.Server
	httpSrv *http.Server
	rpcLn   net.Listener
	httpLn  net.Listener
	stop    chan struct{}
	wg      sync.WaitGroup

	reg         *prometheus.Registry
	heartbeats  prometheus.Counter
	mapLaunches *prometheus.CounterVec // by locality: cache, node, rack, any

	cacheKick chan struct{} // a submission asks the cache loop for a round now

	mu    sync.Mutex // guards jobs, order, nodes, lost, seq, reserved, excluded, cacheFailing
	jobs  map[string]*job
	order []*job // submission order, finished ones trimmed to RetainJobs
	nodes map[string]*node
	// lost remembers node managers lost to silence, for `job nodes --all`
	// (YARN's LOST state), until they heartbeat again (nodes.go).
	lost map[string]*mrpb.NodeReport
	seq  int64
	// reserved: outputs of jobs being set up (not yet in jobs).
	reserved map[string]string
	// excluded: hosts_exclude_file's names (decommission.go).
	excluded hostsfile.Set
	// cacheFailing: the last JobCacheStatus call failed (logged once).
	cacheFailing bool
	// nodeOwners binds each node id to the user that registered it
	// (secure mode; kept after the node is lost).
	nodeOwners map[string]string

	// history is the durable job history (nil without history_dir);
	// lostJobs are the jobs it recorded running when this resource
	// manager started, which the nodes are told to clean up as they
	// register (jobhistory.go).
	history  *jobStore
	lostJobs []*mrpb.AggregateLogs

	refusedMu   sync.Mutex // guards refused, refusedFull
	refused     map[string]struct{}
	refusedFull bool
}

type node struct {
	id, host, rack, shuffleAddr, httpAddr string
	lastSeen                              time.Time
	mapSlots, reduceSlots                 int
	kills                                 []string              // attempts to kill, sent in the next reply
	cleanup                               []string              // finished jobs whose map output the node may delete
	aggregate                             []*mrpb.AggregateLogs // finished jobs whose logs the node uploads
	// admin is "" in service, else NodeDecommissioning or
	// NodeDecommissioned (decommission.go).
	admin string
}

// New returns a resource manager; Start binds its addresses.
func New(cfg Config, logger *slog.Logger) (*ResourceManager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Auth == auth.Simple {
		logger.Warn(auth.SimpleWarning, "component", "resourcemanager")
	}
	if cfg.Identify == nil {
		cfg.Identify = AssertedUser
		if cfg.Auth != auth.Simple { // "" is secure, the default
			secret, err := auth.LoadKey(cfg.AuthSecretFile)
			if err != nil {
				return nil, fmt.Errorf("resource manager: auth_secret_file: %w", err)
			}
			cfg.Identify = VerifiedUser(secret)
		}
	}
	if cfg.GroupsOf == nil {
		cfg.GroupsOf = OSGroups
	}
	if len(cfg.NodeManagerUsers) == 0 && cfg.Auth != auth.Simple {
		cfg.NodeManagerUsers = defaultNodeManagerUsers(cfg.TokenFile)
		logger.Info("node managers must prove one of the default nodemanager_users", "users", cfg.NodeManagerUsers)
	}
	cacheSkips := cfg.CacheSkips
	if cacheSkips == 0 {
		cacheSkips = -1 // sched.Options: 0 is "default", negative is "no wait"
	}
	srvTLS, err := cfg.Wire.Server()
	if err != nil {
		return nil, err
	}
	cliTLS, err := cfg.Wire.Client()
	if err != nil {
		return nil, err
	}
	pol, err := sched.New(cfg.Scheduler, sched.Options{NodeSkips: cfg.NodeSkips, RackSkips: cfg.RackSkips,
		CacheSkips: cacheSkips, MaxAllocations: cfg.MaxAllocations})
	if err != nil {
		return nil, err
	}
	excluded, err := hostsfile.Read("hosts_exclude_file", cfg.HostsExcludeFile)
	if err != nil {
		return nil, err
	}
	rm := &ResourceManager{excluded: excluded, srvTLS: srvTLS, cliTLS: cliTLS, cfg: cfg, log: logger, policy: pol, fs: cfg.FS, jobs: map[string]*job{}, reserved: map[string]string{},
		nodes: map[string]*node{}, lost: map[string]*mrpb.NodeReport{}, nodeOwners: map[string]string{}, refused: map[string]struct{}{}, stop: make(chan struct{}), reg: prometheus.NewRegistry(),
		epoch: time.Now().Format("20060102150405"), cacheKick: make(chan struct{}, 1)}
	switch {
	case cfg.UserFS != nil:
		rm.users = cfg.UserFS
	case cfg.FS != nil:
		rm.users = mapreduce.SharedFS{FS: cfg.FS}
	default:
		rm.users = mapreduce.NewDFSPool(client.Config{NameNode: cfg.NameNode,
			ClientName: "smarth-resourcemanager-" + rm.epoch, TokenFile: cfg.TokenFile, TLS: cliTLS, Logger: logger})
	}
	rm.heartbeats = prometheus.NewCounter(prometheus.CounterOpts{Name: "smarth_rm_heartbeats_total", Help: "Node manager heartbeats received."})
	rm.mapLaunches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "smarth_rm_map_launches_total",
		Help: "Map attempts launched, by locality (cache = the block in the node's datanode memory)."}, []string{"locality"})
	rm.reg.MustRegister(rm.heartbeats, rm.mapLaunches, newMetricsCollector(rm),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "smarth_rm_live_nodes", Help: "Live node managers."},
			func() float64 { rm.mu.Lock(); defer rm.mu.Unlock(); return float64(len(rm.nodes)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "smarth_rm_running_jobs", Help: "Jobs not yet finished."},
			func() float64 {
				rm.mu.Lock()
				defer rm.mu.Unlock()
				n := 0
				for _, j := range rm.order {
					if !j.terminal() {
						n++
					}
				}
				return float64(n)
			}))
	return rm, nil
}

// Start binds the RPC and HTTP addresses and starts serving.
func (rm *ResourceManager) Start() error {
	if rm.fs == nil {
		c, err := client.New(client.Config{NameNode: rm.cfg.NameNode, ClientName: "smarth-resourcemanager-" + rm.epoch, TokenFile: rm.cfg.TokenFile, TLS: rm.cliTLS, Logger: rm.log})
		if err != nil {
			return fmt.Errorf("namenode client: %w", err)
		}
		rm.dfs, rm.fs = c, mapreduce.DFS(c)
	}
	if rm.cfg.HistoryDir != "" {
		if err := rm.recoverHistory(); err != nil {
			return err
		}
	}
	var err error
	if rm.rpcLn, err = net.Listen("tcp", rm.cfg.RPCAddr); err != nil {
		rm.closeHistory()
		return fmt.Errorf("rpc_addr: %w", err)
	}
	if rm.cfg.HTTPAddr != "" {
		if rm.httpLn, err = pki.Listen(rm.cfg.HTTPAddr, rm.srvTLS); err != nil {
			rm.rpcLn.Close()
			rm.closeHistory()
			return fmt.Errorf("http_addr: %w", err)
		}
	}
	rm.grpcSrv = grpc.NewServer(append(pki.ServerOption(rm.srvTLS), grpc.UnaryInterceptor(rm.authorize))...)
	mrpb.RegisterResourceManagerServer(rm.grpcSrv, rm)
	rm.wg.Add(2)
	go func() { defer rm.wg.Done(); rm.grpcSrv.Serve(rm.rpcLn) }()
	go func() { defer rm.wg.Done(); rm.monitor() }()
	if rm.history != nil && rm.cfg.HistoryRetention > 0 {
		rm.wg.Add(1)
		go func() { defer rm.wg.Done(); rm.pruneLoop() }()
	}
	if src := rm.cacheSource(); src != nil {
		rm.wg.Add(1)
		go rm.cacheLoop(src)
	}
	if rm.httpLn != nil {
		srv := httpserver.New("resource manager http", webui.SecureHeaders(rm.httpHandler()), rm.cfg.HTTP, rm.log)
		rm.httpSrv = srv.Server
		rm.wg.Add(1)
		go func() { defer rm.wg.Done(); srv.Serve(rm.httpLn) }()
	}
	rm.log.Info("resource manager started", "rpc", rm.RPCAddr(), "http", rm.HTTPAddr(), "scheduler", rm.cfg.Scheduler)
	return nil
}

// RPCAddr is the bound gRPC address.
func (rm *ResourceManager) RPCAddr() string {
	if rm.rpcLn == nil {
		return ""
	}
	return rm.rpcLn.Addr().String()
}

// HTTPAddr is the bound web address.
func (rm *ResourceManager) HTTPAddr() string {
	if rm.httpLn == nil {
		return ""
	}
	return rm.httpLn.Addr().String()
}

// NodeInfo is a live node manager as the resource manager sees it.
type NodeInfo struct {
	ID, Host, Rack, ShuffleAddr string
	MapSlots, ReduceSlots       int
	LastSeen                    time.Time
	State                       string // NodeRunning, NodeDecommissioning or NodeDecommissioned
}

// Nodes lists the live node managers, by ID.
func (rm *ResourceManager) Nodes() []NodeInfo {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	out := make([]NodeInfo, 0, len(rm.nodes))
	for _, n := range rm.nodes {
		out = append(out, NodeInfo{ID: n.id, Host: n.host, Rack: n.rack, ShuffleAddr: n.shuffleAddr,
			MapSlots: n.mapSlots, ReduceSlots: n.reduceSlots, LastSeen: n.lastSeen, State: cmp.Or(n.admin, NodeRunning)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Close stops serving.
func (rm *ResourceManager) Close() error {
	select {
	case <-rm.stop:
		return nil
	default:
	}
	close(rm.stop)
	if rm.grpcSrv != nil {
		rm.grpcSrv.Stop()
	}
	if rm.httpSrv != nil {
		rm.httpSrv.Close()
	}
	rm.wg.Wait()
	rm.closeHistory()
	if rm.dfs != nil {
		rm.dfs.Close()
	}
	if rm.users != nil {
		rm.users.Close()
	}
	return nil
}

// maxTasksPerJob bounds the bookkeeping one submission makes the resource
// manager allocate before anything runs: without it a request of a few
// bytes asking for 2^30 reduces held the lock every call needs while it
// allocated them, and then exhausted memory (found by FuzzRPC).
const maxTasksPerJob = 100_000

// SubmitJob accepts a job planned by the client (built, checked, split).
// The client's checks are a convenience; what protects other users is
// checked here, as the caller: who submits, whether the app may run,
// and that the output directory does not exist yet.
func (rm *ResourceManager) SubmitJob(ctx context.Context, req *mrpb.SubmitJobRequest) (*mrpb.SubmitJobResponse, error) {
	if req.GetApp() == "" || req.GetOutput() == "" {
		return nil, status.Error(codes.InvalidArgument, "a job needs an app and an output directory")
	}
	if req.GetNumReduces() < 0 {
		return nil, status.Error(codes.InvalidArgument, "negative number of reduces")
	}
	if maps, reduces := len(req.GetSplits()), int(req.GetNumReduces()); maps+reduces > maxTasksPerJob {
		return nil, status.Errorf(codes.InvalidArgument, "job of %d maps and %d reduces: at most %d tasks per job", maps, reduces, maxTasksPerJob)
	}
	maxMaps, err := maxRunningMaps(req.GetParams())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	user, err := rm.caller(ctx)
	if err != nil {
		return nil, err
	}
	if req.GetUser() != "" && req.GetUser() != user {
		return nil, status.Errorf(codes.PermissionDenied, "job for user %s submitted by user %s", req.GetUser(), user)
	}
	req.User = user
	if mapreduce.RunsCommands(req.GetApp()) && !rm.cfg.AllowStreaming {
		return nil, status.Errorf(codes.PermissionDenied,
			"%s jobs run commands of the submitter's choosing on the node managers; this resource manager does not accept them (allow_streaming: false)",
			req.GetApp())
	}
	output, err := cleanOutput(req.GetOutput())
	if err != nil {
		return nil, err
	}
	req.Output = output
	if err := rm.checkOutput(ctx, user, output); err != nil {
		return nil, err
	}
	secret, err := shuffle.NewSecret()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "shuffle secret: %v", err)
	}
	id, seq, err := rm.reserveJob(output)
	if err != nil {
		return nil, err
	}
	j := newJob(id, seq, req, time.Now(), rm.cfg.ReduceSlowStart)
	j.maxRunningMaps, j.secret = maxMaps, secret
	j.spec = proto.Clone(req).(*mrpb.SubmitJobRequest)
	j.spec.Splits = nil
	// Recorded before anything is made: a restart from here on reports
	// the job (as lost) rather than forgetting it.
	if err := rm.record(j); err != nil {
		rm.mu.Lock()
		delete(rm.reserved, output)
		rm.mu.Unlock()
		return nil, status.Errorf(codes.Unavailable, "job %s not accepted: %v", id, err)
	}
	// The staging directory is made as the submitter, before any task
	// runs: a user who may not write there learns it now.
	if err := rm.setupJob(ctx, user, output, id); err != nil {
		rm.mu.Lock()
		delete(rm.reserved, output)
		rm.mu.Unlock()
		rm.forget(id)
		return nil, err
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	delete(rm.reserved, output)
	rm.jobs[id] = j
	rm.order = append(rm.order, j)
	rm.log.Info("job submitted", "job", id, "app", j.app, "maps", len(j.maps), "reduces", len(j.reduces), "user", j.user)
	rm.maybeFinish(j) // a job with no tasks at all
	rm.kickCache()
	return &mrpb.SubmitJobResponse{JobId: id}, nil
}

func (rm *ResourceManager) lookup(id string) (*job, error) {
	j, ok := rm.jobs[id]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no job %s", id)
	}
	return j, nil
}

// GetJob reports a job's state, progress and counters, to its owner or
// an admin (YARN's view ACL): a node manager asks it with the caller's
// proof before it serves the job's task logs.
func (rm *ResourceManager) GetJob(ctx context.Context, req *mrpb.GetJobRequest) (*mrpb.JobStatus, error) {
	caller, err := rm.caller(ctx)
	if err != nil {
		return nil, err
	}
	rm.mu.Lock()
	if j := rm.jobs[req.GetJobId()]; j != nil {
		defer rm.mu.Unlock()
		if err := rm.mayView(j.id, j.user, caller); err != nil {
			return nil, err
		}
		return rm.jobStatus(j, true), nil
	}
	rm.mu.Unlock()
	rec, err := rm.pastJob(caller, req.GetJobId())
	if err != nil {
		return nil, err
	}
	return rec.GetStatus(), nil
}

// ListJobs reports the remembered jobs the caller may view, newest
// first: an admin's are every job, anyone else's their own.
func (rm *ResourceManager) ListJobs(ctx context.Context, req *mrpb.ListJobsRequest) (*mrpb.ListJobsResponse, error) {
	caller, err := rm.caller(ctx)
	if err != nil {
		return nil, err
	}
	all := rm.isAdmin(caller)
	rm.mu.Lock()
	out := &mrpb.ListJobsResponse{}
	inMemory := make(map[string]bool, len(rm.jobs))
	for i := len(rm.order) - 1; i >= 0; i-- {
		j := rm.order[i]
		inMemory[j.id] = true
		if (all || j.user == caller) && stateWanted(req.GetStates(), j.state) {
			out.Jobs = append(out.Jobs, rm.jobStatus(j, false))
		}
	}
	rm.mu.Unlock()
	past, err := rm.pastJobs(caller, all, req.GetStates(), inMemory)
	if err != nil {
		return nil, err
	}
	if len(past) > 0 {
		out.Jobs = append(out.Jobs, past...)
		newestFirst(out.Jobs)
	}
	return out, nil
}

// KillJob stops a job, for its owner or an admin; its output is removed.
func (rm *ResourceManager) KillJob(ctx context.Context, req *mrpb.KillJobRequest) (*mrpb.KillJobResponse, error) {
	caller, err := rm.caller(ctx)
	if err != nil {
		return nil, err
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	j, err := rm.lookup(req.GetJobId())
	if err != nil {
		if rec, perr := rm.pastJob(caller, req.GetJobId()); perr == nil {
			return nil, status.Errorf(codes.FailedPrecondition, "job %s has already finished (%s)", rec.GetStatus().GetJobId(), rec.GetStatus().GetState())
		}
		return nil, err
	}
	if err := rm.mayModify("kill", j, caller); err != nil {
		return nil, err
	}
	if j.terminal() {
		return nil, status.Errorf(codes.FailedPrecondition, "job %s has already finished (%s)", j.id, j.state)
	}
	rm.endJob(j, mapreduce.StateKilled, "killed by user "+caller)
	return &mrpb.KillJobResponse{}, nil
}

// endJob decides a job's failure or kill: no more scheduling, running
// attempts are killed, and cleanup runs once they are gone.
func (rm *ResourceManager) endJob(j *job, state, why string) {
	if j.ending != "" || j.terminal() {
		return
	}
	j.ending, j.err, j.endedAt = state, why, time.Now()
	j.notify()
	rm.log.Info("job ending", "job", j.id, "state", state, "why", why)
	for _, ts := range [][]*task{j.maps, j.reduces} {
		for _, t := range ts {
			for id, a := range t.running {
				if n := rm.nodes[a.node]; n != nil {
					n.kills = append(n.kills, id)
				}
			}
		}
	}
	rm.maybeAbort(j)
}

// maybeAbort removes a failed job's output once no attempt can still
// write to it (or AbortGrace has passed).
func (rm *ResourceManager) maybeAbort(j *job) {
	if j.ending == "" || j.cleaning || j.terminal() {
		return
	}
	if j.runningAttempts() > 0 && time.Since(j.endedAt) < rm.cfg.AbortGrace {
		return
	}
	j.cleaning = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		fsys, err := rm.userFS(j)
		if err == nil {
			err = mapreduce.AbortJob(ctx, fsys, j.output, j.id)
		}
		rm.mu.Lock()
		defer rm.mu.Unlock()
		if err != nil {
			j.err += fmt.Sprintf(" (and removing its output failed: %v)", err)
		}
		rm.finishJob(j, j.ending)
	}()
}

// maybeFinish commits a job whose every task is done.
func (rm *ResourceManager) maybeFinish(j *job) {
	if !j.active() || j.mapsDone < len(j.maps) || j.reducesDone < len(j.reduces) {
		return
	}
	winners := make([]string, 0, len(j.reduces))
	for _, t := range j.tasks(len(j.reduces) == 0) {
		winners = append(winners, t.done.id)
	}
	j.cleaning = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		fsys, err := rm.userFS(j)
		if err == nil {
			if err = rm.commit(ctx, fsys, j.output, j.id, winners); err != nil {
				mapreduce.AbortJob(ctx, fsys, j.output, j.id)
			}
		}
		rm.mu.Lock()
		defer rm.mu.Unlock()
		if err != nil {
			j.err = "commit: " + err.Error()
			rm.finishJob(j, mapreduce.StateFailed)
			return
		}
		rm.finishJob(j, mapreduce.StateSucceeded)
	}()
}

func (rm *ResourceManager) finishJob(j *job, state string) {
	j.state, j.finished, j.cleaning = state, time.Now(), false
	j.closeAttempts("job "+state, j.finished) // those still running were killed with it
	j.notify()
	j.counters.Add(mapreduce.GroupJob, mapreduce.ElapsedMillis, j.finished.Sub(j.submitted).Milliseconds())
	// On disk before anyone can see the job ended: a restart from here on
	// reports it as it ended.
	if err := rm.record(j); err != nil {
		rm.log.Error("finished job not recorded in the job history; a restart will report it lost", "job", j.id, "err", err)
	}
	ran := j.nodesRan()
	for _, n := range rm.nodes {
		n.cleanup = append(n.cleanup, j.id)
		if dir := rm.aggregatedDir(j.user, j.id); dir != "" && ran[n.id] {
			n.aggregate = append(n.aggregate, &mrpb.AggregateLogs{JobId: j.id, User: j.user, Dir: dir})
		}
	}
	rm.log.Info("job finished", "job", j.id, "state", state, "error", j.err, "elapsed", j.finished.Sub(j.submitted))
	rm.trim()
}

// trim forgets the oldest finished jobs beyond RetainJobs.
func (rm *ResourceManager) trim() {
	finished := 0
	for _, j := range rm.order {
		if j.terminal() {
			finished++
		}
	}
	keep := rm.order[:0]
	for _, j := range rm.order {
		if j.terminal() && finished > rm.cfg.RetainJobs {
			finished--
			delete(rm.jobs, j.id)
			continue
		}
		keep = append(keep, j)
	}
	rm.order = keep
}

// monitor expires silent nodes and retries pending aborts.
func (rm *ResourceManager) monitor() {
	t := time.NewTicker(max(rm.cfg.HeartbeatInterval, rm.cfg.NodeTimeout/5))
	defer t.Stop()
	for {
		select {
		case <-rm.stop:
			return
		case <-t.C:
		}
		rm.mu.Lock()
		for id, n := range rm.nodes {
			if time.Since(n.lastSeen) > rm.cfg.NodeTimeout {
				rm.loseNode(id)
			}
		}
		for _, j := range rm.order {
			rm.maybeAbort(j)
		}
		rm.decommissionTick()
		rm.mu.Unlock()
	}
}

// loseNode forgets a node: its running attempts go back to pending and
// the map outputs it held for unfinished jobs are re-run.
func (rm *ResourceManager) loseNode(id string) {
	rm.log.Warn("node manager lost", "node", id)
	rm.rememberLost(id)
	delete(rm.nodes, id)
	for _, j := range rm.order {
		if j.terminal() {
			continue
		}
		for _, ts := range [][]*task{j.maps, j.reduces} {
			for _, t := range ts {
				for aid, a := range t.running {
					if a.node == id {
						a.finish(attemptKilled, "node manager "+id+" lost", time.Now())
						delete(t.running, aid)
						if len(t.running) == 0 && t.state == taskRunning {
							t.state, t.read = taskPending, 0
						}
					}
				}
			}
		}
		j.notify() // attempts on the node are gone
		if !j.active() || j.reducesDone == len(j.reduces) {
			continue
		}
		for _, t := range j.maps {
			if t.state == taskDone && t.done.node == id && len(j.reduces) > 0 {
				rm.rerunMap(j, t)
			}
		}
	}
}

// rerunMap makes a finished map pending again (its output is lost).
func (rm *ResourceManager) rerunMap(j *job, t *task) {
	t.state, t.done, t.doneAddr, t.read = taskPending, nil, "", 0
	j.mapsDone--
	j.counters.Add(mapreduce.GroupJob, mapreduce.MapsRerunForLoss, 1)
	rm.log.Info("re-running map whose output was lost", "job", j.id, "map", t.index)
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var errStopped = errors.New("resource manager stopped")
