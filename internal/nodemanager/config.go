package nodemanager

import (
	"errors"
	"fmt"
	"time"

	"smarth/internal/auth"
	"smarth/internal/container"
	"smarth/internal/daemonconf"
	"smarth/internal/logfile"
	"smarth/internal/mapreduce"
)

// Config configures a node manager: the keys of its file, which are
// daemonconf.NodeManagerConfig's (there so that the launchers can build
// it without importing the node manager), and the hooks only tests and
// the launcher in this process set.
type Config struct {
	daemonconf.NodeManagerConfig `yaml:",inline"`

	// Registry holds the apps tasks may run (cmd/smarth passes apps.All()).
	Registry *mapreduce.Registry `yaml:"-"`
	// FS, if set, replaces the DFS client (tests), for every user.
	FS mapreduce.FS `yaml:"-"`
	// UserFS, if set, gives the file system as each task's job submitter
	// sees it (tests); default: FS for everyone when FS is set, else DFS
	// clients of NameNode per user.
	UserFS mapreduce.UserFS `yaml:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{NodeManagerConfig: daemonconf.NodeManagerConfig{
		ResourceManager:   "127.0.0.1:8032",
		NameNode:          "127.0.0.1:8020",
		Auth:              auth.DefaultMode,
		Rack:              "/default-rack",
		RPCAddr:           "127.0.0.1:0",
		ShuffleAddr:       "127.0.0.1:0",
		HTTPAddr:          "127.0.0.1:0",
		MapSlots:          2,
		ReduceSlots:       1,
		HeartbeatInterval: 200 * time.Millisecond,
		SortBufferBytes:   mapreduce.DefaultSortBufferBytes,
		ReduceMemoryBytes: mapreduce.DefaultReduceMemoryBytes,
		ParallelFetches:   mapreduce.DefaultParallelFetches,
		LogLimitBytes:     1 << 20,
		LogRetention:      24 * time.Hour,
		// Enough for a 1 GiB TeraSort's map outputs spread over three nodes.
		MapOutputMemoryBytes: 512 << 20,
		ContainerExecutor:    container.ExecutorLinux,
		Containers:           container.DefaultPolicy(),
		MaxMemoryMB:          8192,
		MaxVCores:            4,
		Log:                  logfile.Default(),
	}}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.ResourceManager == "" {
		errs = append(errs, errors.New("resourcemanager is required"))
	}
	if c.NameNode == "" && c.FS == nil {
		errs = append(errs, errors.New("namenode is required"))
	}
	if c.WorkDir == "" {
		errs = append(errs, errors.New("work_dir is required"))
	}
	if mode, err := auth.ParseMode(c.Auth); err != nil {
		errs = append(errs, err)
	} else if mode == auth.Secure && c.FS == nil && c.UserFS == nil {
		// Here rather than at the first task, where it would show only
		// as a failed attempt.
		if err := auth.RequireCredential("token_file", c.TokenFile, auth.ServiceTokenHint); err != nil {
			errs = append(errs, err)
		}
	}
	if c.LogLimitBytes < 0 || c.LogRetention < 0 {
		errs = append(errs, errors.New("log_limit_bytes and log_retention must not be negative"))
	}
	if c.ShuffleAddr == "" {
		errs = append(errs, errors.New("shuffle_addr is required"))
	}
	if c.MapSlots < 1 || c.ReduceSlots < 0 {
		errs = append(errs, errors.New("map_slots must be at least 1 and reduce_slots at least 0"))
	}
	if c.HeartbeatInterval <= 0 {
		errs = append(errs, errors.New("heartbeat_interval must be positive"))
	}
	if c.Registry == nil {
		errs = append(errs, errors.New("no app registry"))
	}
	switch c.ContainerExecutor {
	case container.ExecutorLinux:
		errs = append(errs, c.Containers.Validate())
	case container.ExecutorDefault:
	default:
		errs = append(errs, fmt.Errorf("container_executor %q: want %s or %s", c.ContainerExecutor, container.ExecutorLinux, container.ExecutorDefault))
	}
	if c.MaxMemoryMB < 1 || c.MaxVCores < 1 {
		errs = append(errs, errors.New("max_memory_mb and max_vcores must be at least 1"))
	}
	errs = append(errs, c.Wire.Validate())
	return errors.Join(errs...)
}
