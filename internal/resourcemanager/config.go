package resourcemanager

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"smarth/internal/auth"
	"smarth/internal/httpserver"
	"smarth/internal/mapreduce"
	"smarth/internal/pki"
	"smarth/internal/sched"
)

// Config configures a resource manager.
type Config struct {
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

	// FS, if set, is used instead of a client of NameNode (tests), for
	// every user.
	FS mapreduce.FS `yaml:"-"`
	// UserFS, if set, gives the file system as each job's submitter sees
	// it (tests); default: FS for everyone when FS is set, else DFS
	// clients of NameNode per user.
	UserFS mapreduce.UserFS `yaml:"-"`
	// CommitFS, if set, wraps the file system job commits run on (tests
	// inject crashes between a commit's renames).
	CommitFS func(mapreduce.FS) mapreduce.FS `yaml:"-"`
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
	// Identify establishes an RPC's caller; default by Auth.
	Identify Identify `yaml:"-"`
	// GroupsOf resolves a user's groups for AdminGroup; default OSGroups.
	GroupsOf GroupsOf `yaml:"-"`
	// CacheStatus, if set, answers JobCacheStatus instead of the namenode
	// client (tests). With FS set and CacheStatus nil there is no cache
	// information.
	CacheStatus CacheStatusSource `yaml:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		RPCAddr:           "127.0.0.1:8032",
		HTTPAddr:          "127.0.0.1:8088",
		NameNode:          "127.0.0.1:8020",
		Scheduler:         "delay",
		NodeSkips:         3,
		RackSkips:         6,
		CacheSkips:        sched.DefaultCacheSkips,
		MaxAllocations:    sched.DefaultMaxAllocations,
		HeartbeatInterval: 200 * time.Millisecond,
		NodeTimeout:       10 * time.Second,
		MaxAttempts:       mapreduce.DefaultMaxAttempts,
		MaxFetchFailures:  10,
		ReduceSlowStart:   0.05,
		RetainJobs:        200,
		AbortGrace:        30 * time.Second,
		Auth:              auth.DefaultMode,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.RPCAddr == "" {
		errs = append(errs, errors.New("rpc_addr is required"))
	}
	if c.NameNode == "" && c.FS == nil {
		errs = append(errs, errors.New("namenode is required"))
	}
	if _, err := sched.New(c.Scheduler, sched.Options{}); err != nil {
		errs = append(errs, err)
	}
	if c.NodeSkips < 0 || c.RackSkips < 0 {
		errs = append(errs, fmt.Errorf("node_skips %d and rack_skips %d must not be negative", c.NodeSkips, c.RackSkips))
	}
	if mode, err := auth.ParseMode(c.Auth); err != nil {
		errs = append(errs, err)
	} else if mode == auth.Secure {
		// Checked here, at start: a missing secret or credential would
		// otherwise show only as refused jobs.
		if c.Identify == nil {
			if err := auth.RequireKeyFile("auth_secret_file", c.AuthSecretFile, auth.IdentitySecretHint); err != nil {
				errs = append(errs, err)
			}
		}
		if c.FS == nil && c.UserFS == nil {
			if err := auth.RequireCredential("token_file", c.TokenFile, auth.ServiceTokenHint); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if slices.Contains(c.NodeManagerUsers, "") {
		errs = append(errs, fmt.Errorf("nodemanager_users %q: an empty user name", c.NodeManagerUsers))
	}
	if c.CacheSkips < 0 {
		errs = append(errs, fmt.Errorf("cache_skips %d must not be negative (0: no wait for cache locality)", c.CacheSkips))
	}
	if c.MaxAllocations < 1 {
		errs = append(errs, fmt.Errorf("max_allocations %d must be at least 1", c.MaxAllocations))
	}
	if c.HeartbeatInterval <= 0 || c.NodeTimeout <= c.HeartbeatInterval {
		errs = append(errs, errors.New("heartbeat_interval must be positive and below node_timeout"))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, errors.New("max_attempts must be at least 1"))
	}
	if c.MaxFetchFailures < 1 {
		errs = append(errs, errors.New("max_fetch_failures must be at least 1"))
	}
	if c.ReduceSlowStart < 0 || c.ReduceSlowStart > 1 {
		errs = append(errs, fmt.Errorf("reduce_slowstart %v must be between 0 and 1", c.ReduceSlowStart))
	}
	errs = append(errs, c.Wire.Validate())
	return errors.Join(errs...)
}
