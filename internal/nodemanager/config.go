package nodemanager

import (
	"errors"
	"fmt"
	"time"

	"smarth/internal/auth"
	"smarth/internal/container"
	"smarth/internal/httpserver"
	"smarth/internal/mapreduce"
	"smarth/internal/pki"
)

// Config configures a node manager.
type Config struct {
	ResourceManager string `yaml:"resourcemanager"` // host:port of the resource manager's gRPC
	NameNode        string `yaml:"namenode"`
	Hostname        string `yaml:"hostname"` // the co-located datanode's hostname; default os.Hostname()
	// Rack is used only when the namenode knows no datanode with this
	// Hostname: otherwise the node takes its datanode's rack from the
	// namenode's report, the view block locations are given in.
	Rack        string `yaml:"rack"`
	RPCAddr     string `yaml:"rpc_addr"`     // gRPC health service
	ShuffleAddr string `yaml:"shuffle_addr"` // map output over HTTP
	HTTPAddr    string `yaml:"http_addr"`    // /metrics
	// Auth is the cluster's auth mode: "secure" (the default, also when
	// unset) needs the node manager's own credential for the namenode
	// (TokenFile, else the client library's default token file), checked
	// at start, unless FS or UserFS replace the namenode; "simple"
	// (opt-in, warned about at start) runs without one against a simple
	// namenode.
	Auth string `yaml:"auth"`
	// TokenFile is the node manager's own credential for the namenode
	// (a proxy user or the superuser): tasks read and write as their
	// job's submitter through it. In secure mode it also proves the node
	// manager to the resource manager, whose nodemanager_users must list
	// its user. Default: the client library's.
	TokenFile string `yaml:"token_file"`
	// Wire is the TLS switch (tls, tls_cert_file, tls_key_file,
	// tls_ca_file): the shuffle, rpc_addr, http_addr, and every
	// connection the node manager makes (resource manager, namenode,
	// datanodes, other nodes' shuffle).
	Wire pki.Config `yaml:",inline"`
	// HTTP bounds the HTTP port(s): timeouts and connection caps (http_* keys, internal/httpserver).
	HTTP httpserver.Limits `yaml:",inline"`
	// Pprof serves Go profiles under http_addr/debug/pprof/, to loopback
	// callers only; off by default (profiles expose memory and burn CPU).
	Pprof   bool   `yaml:"pprof"`
	WorkDir string `yaml:"work_dir"` // spills and map output
	// LogDir keeps task attempts' stdout and stderr, served under
	// /logs/ (default: work_dir/userlogs).
	LogDir string `yaml:"log_dir"`
	// LogLimitBytes caps each attempt's stdout and stderr file (0: no cap).
	LogLimitBytes int64 `yaml:"log_limit_bytes"`
	// LogRetention: a job's logs are removed this long after they were
	// last written (0: kept).
	LogRetention time.Duration `yaml:"log_retention"`
	MapSlots     int           `yaml:"map_slots"`
	ReduceSlots  int           `yaml:"reduce_slots"`
	// HeartbeatInterval until the resource manager says otherwise.
	HeartbeatInterval time.Duration `yaml:"heartbeat_interval"`
	SortBufferBytes   int           `yaml:"sort_buffer_bytes"`   // map-side arena per map task
	ReduceMemoryBytes int64         `yaml:"reduce_memory_bytes"` // fetched segments kept in memory per reduce
	ParallelFetches   int           `yaml:"parallel_fetches"`    // map outputs a reduce fetches at once
	// MapOutputMemoryBytes is how much finished map output (of maps that
	// did not spill) the node keeps in memory instead of writing it to
	// disk, until the job ends; 0 writes every output to work_dir.
	MapOutputMemoryBytes int64 `yaml:"map_output_memory_bytes"`
	// ContainerExecutor runs tasks' user code (streaming commands), as
	// YARN's container executors: "linux" (the default) as the user
	// Containers chooses, with an allow-listed environment, a private
	// work directory under work_dir/containers and a cgroup holding the
	// job's memory-mb and vcores; it needs root, and in secure mode a
	// node manager that is not root refuses user code rather than run it
	// as itself. "default" runs it as the node manager's user with its
	// environment (auth: simple development clusters).
	ContainerExecutor string `yaml:"container_executor"`
	// Containers is the linux executor's user policy: run_as (submitter
	// or local-user), run_as_user (default nobody), min_user_id (1000)
	// and banned_users (hdfs, yarn, mapred, bin, root), as
	// container-executor.cfg.
	Containers container.Policy `yaml:",inline"`
	// MaxMemoryMB and MaxVCores cap what a task may ask for (memory-mb,
	// vcores), as yarn.scheduler.maximum-allocation-mb and -vcores.
	MaxMemoryMB int `yaml:"max_memory_mb"`
	MaxVCores   int `yaml:"max_vcores"`
	// NameNodeHTTP is the namenode's HTTP (WebHDFS) address. Set, in
	// secure mode, each job's containers get a delegation token of the
	// job's submitter (HADOOP_TOKEN_FILE_LOCATION, also the container
	// home's .smarth/token, where smarth's client looks), cancelled when
	// the job ends. Unset, containers get no credential.
	NameNodeHTTP string `yaml:"namenode_http"`

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
	return Config{
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
	}
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
