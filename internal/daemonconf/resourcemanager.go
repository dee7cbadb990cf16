package daemonconf

import (
	"time"

	"smarth/internal/httpserver"
	"smarth/internal/logfile"
	"smarth/internal/pki"
)

// ResourceManagerConfig is a resource manager's configuration file. The
// resource manager's Config embeds it, with the test hooks, the defaults
// and Validate (internal/resourcemanager).
type ResourceManagerConfig struct {
	RPCAddr   string `yaml:"rpc_addr"`  // gRPC: job clients and node heartbeats
	HTTPAddr  string `yaml:"http_addr"` // job list page, /metrics
	NameNode  string `yaml:"namenode"`  // for output commit and abort
	Scheduler string `yaml:"scheduler"` // a name in sched.Policies: fifo, delay, cachelocal
	// NodeSkips and RackSkips are delay scheduling's D1 and D2 (delay and
	// cachelocal).
	NodeSkips int `yaml:"node_skips"`
	RackSkips int `yaml:"rack_skips"`
	// CacheSkips is cachelocal's C: a job whose input is a fraction R_j
	// cached waits R_j x C skips for a cache-local slot before taking a
	// node-local one (seed 003, Alg. 1). 0: no wait.
	CacheSkips int `yaml:"cache_skips"`
	// MaxAllocations is cachelocal's per-job maps per node heartbeat
	// before slots left free are filled (see sched.CacheDelay).
	MaxAllocations int `yaml:"max_allocations"`
	// HeartbeatInterval is what node managers are told to use.
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	// NodeTimeout: a node manager silent this long is lost.
	NodeTimeout time.Duration `yaml:"node_timeout"`
	// HostsExcludeFile lists node managers (hostname or node id, one per
	// line, # comments) to decommission gracefully, read at start and on
	// `smarth job refreshNodes` (yarn.resourcemanager.nodes.exclude-path).
	HostsExcludeFile string `yaml:"hosts_exclude_file"`
	// MaxAttempts per task before the job fails.
	MaxAttempts int `yaml:"max_attempts"`
	// MaxFetchFailures: a reduce whose attempts have failed this many times
	// fetching map output fails the job. Each fetch failure re-runs the map
	// and is not held against the reduce's MaxAttempts; this cap stops a
	// reduce that can fetch from nowhere from retrying forever.
	MaxFetchFailures int `yaml:"max_fetch_failures"`
	// ReduceSlowStart is the fraction of a job's maps that must be done
	// before its reduces are scheduled (Hadoop's
	// mapreduce.job.reduce.slowstart.completedmaps). Reduces launched
	// early fetch map outputs while the other maps run; 1 waits for every
	// map.
	ReduceSlowStart float64 `yaml:"reduce_slowstart"`
	// RetainJobs is how many finished jobs are remembered for status.
	RetainJobs int `yaml:"retain_jobs"`
	// AbortGrace bounds how long a failed job waits for its attempts to
	// stop before its output is removed anyway.
	AbortGrace time.Duration `yaml:"abort_grace"`

	// HistoryDir keeps the job history (a bbolt file, 0600 in a 0700
	// directory): every job's spec when submitted and, when it ends, its
	// state, counters, tasks and attempts (node, state) and diagnostics, so
	// `job list|status|logs` answer for earlier jobs after a restart (YARN's
	// RM state store and JobHistoryServer). Jobs that were running when the
	// resource manager stopped are reported FAILED after it restarts.
	// Empty: jobs are remembered in memory only, until a restart.
	HistoryDir string `yaml:"history_dir"`
	// HistoryRetention is how long a finished job's history entry and its
	// aggregated logs are kept (yarn.log-aggregation.retain-seconds);
	// older ones are deleted. 0 keeps them.
	HistoryRetention time.Duration `yaml:"history_retention"`
	// LogAggregation has the node managers upload a finished job's task
	// logs to the DFS under RemoteAppLogDir/USER/JOB, as the job's user
	// (yarn.log-aggregation-enable).
	LogAggregation bool `yaml:"log_aggregation"`
	// RemoteAppLogDir is the DFS directory of aggregated logs
	// (yarn.nodemanager.remote-app-log-dir), made mode 1777 by the first
	// node manager that needs it.
	RemoteAppLogDir string `yaml:"remote_app_log_dir"`

	// AdminUsers and members of AdminGroup (resolved on this host, never
	// taken from the caller) may kill any job; others only their own.
	AdminUsers []string `yaml:"admin_users"`
	AdminGroup string   `yaml:"admin_group"`
	// AllowStreaming accepts jobs of apps that run a command of the
	// submitter's choosing on the node managers (Hadoop Streaming). Such a
	// command runs with the node manager's OS rights, so it is off unless
	// the cluster's users trust each other (the local demo cluster turns
	// it on).
	AllowStreaming bool `yaml:"allow_streaming"`

	// Auth is how job RPCs' callers are established: "secure" (the
	// default, also when unset: a credential signed with the namenode's
	// identity secret, read from AuthSecretFile; see docs/security.md) or
	// "simple" (opt-in, warned about at start: the asserted smarth-user,
	// Hadoop's simple auth). Secure also needs the resource manager's own
	// credential (TokenFile) unless FS or UserFS replace the namenode.
	Auth           string `yaml:"auth"`
	AuthSecretFile string `yaml:"auth_secret_file"`
	// NodeManagerUsers are the users node managers may prove themselves
	// as in secure mode: a heartbeat or map-output query whose credential
	// proves anyone else is refused (docs/security.md). Default: the
	// resource manager's own OS user and the user of its token_file, the
	// service user a local cluster runs its daemons as. Ignored in simple
	// mode.
	NodeManagerUsers []string `yaml:"nodemanager_users"`
	// TokenFile is the resource manager's own credential for the
	// namenode (a service user listed in the namenode's proxy_users, or
	// its superuser): job file operations run as the submitter through
	// it. Default: the client library's ($SMARTH_TOKEN_FILE, else
	// ~/.smarth/token when present).
	TokenFile string `yaml:"token_file"`
	// Wire is the TLS switch (tls, tls_cert_file, tls_key_file,
	// tls_ca_file): rpc_addr, http_addr and the namenode client.
	Wire pki.Config `yaml:",inline"`
	// HTTP bounds the HTTP port(s): timeouts and connection caps (http_* keys, internal/httpserver).
	HTTP httpserver.Limits `yaml:",inline"`
	// Log rotates the daemon's --log-file (log_max_* keys, internal/logfile).
	Log logfile.Rotation `yaml:",inline"`
}
