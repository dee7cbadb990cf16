package daemonconf

import (
	"time"

	"smarth/internal/container"
	"smarth/internal/httpserver"
	"smarth/internal/logfile"
	"smarth/internal/pki"
)

// NodeManagerConfig is a node manager's configuration file. The node
// manager's Config embeds it, with the test hooks, the defaults and
// Validate (internal/nodemanager).
type NodeManagerConfig struct {
	ResourceManager string `yaml:"resourcemanager"` // host:port of the resource manager's gRPC
	NameNode        string `yaml:"namenode"`        // host:port of the namenode's RPC, for job files and tasks' input and output
	Hostname        string `yaml:"hostname"`        // the co-located datanode's hostname; default os.Hostname()
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
	// Log rotates the daemon's --log-file (log_max_* keys, internal/logfile).
	Log logfile.Rotation `yaml:",inline"`
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
	MapSlots     int           `yaml:"map_slots"`    // map tasks run at once
	ReduceSlots  int           `yaml:"reduce_slots"` // reduce tasks run at once
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
	// NameNodeHTTP is the namenode's HTTP (WebHDFS) address, or an HA
	// group's members' comma-separated (the node manager asks the one
	// that answered last, and the next when it is a standby, down or
	// does not answer in time). Set, in
	// secure mode, each job's containers get a delegation token of the
	// job's submitter (HADOOP_TOKEN_FILE_LOCATION, also the container
	// home's .smarth/token, where smarth's client looks), cancelled when
	// the job ends. Unset, containers get no credential.
	NameNodeHTTP string `yaml:"namenode_http"`
}
