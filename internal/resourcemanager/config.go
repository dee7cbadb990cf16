package resourcemanager

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/logfile"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/applogs"
	"smarth/internal/sched"
)

// Config configures a resource manager: the keys of its file, which are
// daemonconf.ResourceManagerConfig's (there so that the launchers can
// build it without importing the resource manager), and the hooks only
// tests and the launcher in this process set.
type Config struct {
	daemonconf.ResourceManagerConfig `yaml:",inline"`

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
	return Config{ResourceManagerConfig: daemonconf.ResourceManagerConfig{
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
		HistoryRetention:  7 * 24 * time.Hour,
		LogAggregation:    true,
		RemoteAppLogDir:   applogs.Default,
		Auth:              auth.DefaultMode,
		Log:               logfile.Default(),
	}}
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
	if c.HistoryRetention < 0 {
		errs = append(errs, fmt.Errorf("history_retention %v must not be negative (0 keeps finished jobs)", c.HistoryRetention))
	}
	if c.LogAggregation && (!path.IsAbs(c.RemoteAppLogDir) || path.Clean(c.RemoteAppLogDir) != c.RemoteAppLogDir || c.RemoteAppLogDir == "/") {
		errs = append(errs, fmt.Errorf("remote_app_log_dir %q: want a clean absolute DFS directory other than / (log_aggregation is on)", c.RemoteAppLogDir))
	}
	errs = append(errs, c.Wire.Validate())
	return errors.Join(errs...)
}
