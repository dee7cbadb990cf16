package daemonconf

import (
	"time"

	"smarth/internal/diskperm"
	"smarth/internal/httpserver"
	"smarth/internal/logfile"
	"smarth/internal/pki"
)

// DataNodeConfig is a datanode's configuration file (YAML keys in
// snake_case). The keys up to cache_capacity are the ones fixed for the
// cluster launcher and the testbed; the rest are tuning knobs with
// defaults. The datanode's Config embeds it, with the test hooks, the
// defaults and Validate (internal/datanode).
type DataNodeConfig struct {
	NameNode string `yaml:"namenode"` // host:port of the namenode's gRPC; an HA group's namenodes as a comma list
	// Auth is the cluster's auth mode, as on the namenode: "secure" (the
	// default, also when unset) needs DatanodeKeyFile, checked at start;
	// "simple" (opt-in, warned about at start) runs without one against a
	// simple namenode.
	Auth string `yaml:"auth"`
	// DatanodeKeyFile holds the cluster's datanode key (a copy of the
	// namenode's datanode_key_file, 0600): the namenode's datanode
	// protocol refuses calls without proof of it in secure mode.
	DatanodeKeyFile string `yaml:"datanode_key_file"`
	// Wire is the TLS switch (tls, tls_cert_file, tls_key_file,
	// tls_ca_file): the data-transfer port, ipc_addr, http_addr and
	// every connection this datanode makes (namenode, other datanodes).
	Wire pki.Config `yaml:",inline"`
	// HTTP bounds the HTTP port(s): timeouts and connection caps (http_* keys, internal/httpserver).
	HTTP httpserver.Limits `yaml:",inline"`
	// Log rotates the daemon's --log-file (log_max_* keys, internal/logfile).
	Log         logfile.Rotation `yaml:",inline"`
	Hostname    string           `yaml:"hostname"`     // name reported to the namenode; default os.Hostname()
	AdvertiseIP string           `yaml:"advertise_ip"` // IP others use; default from data_addr, else first non-loopback
	DataAddr    string           `yaml:"data_addr"`    // streaming data-transfer protocol
	IPCAddr     string           `yaml:"ipc_addr"`     // InterDatanodeProtocol gRPC
	HTTPAddr    string           `yaml:"http_addr"`    // console, /metrics
	// DomainSocketPath is the unix socket of short-circuit local reads,
	// as HDFS's dfs.domain.socket.path: a client on this host sends a
	// block's read token here and gets read-only descriptors of the
	// replica's files, then reads them itself. "_PORT" in the path is
	// replaced by the data port, so datanodes sharing a host get a
	// socket each. Every directory above it must be writable by no one
	// but root and this daemon's user (checked at start; a root-owned
	// sticky directory such as /tmp passes); the last is made 0755 if
	// missing, the socket 0666. Empty (the default): no short-circuit
	// reads. `smarth cluster up` sets it under the cluster's home.
	DomainSocketPath string `yaml:"domain_socket_path"`
	// Pprof serves Go profiles under http_addr/debug/pprof/, to loopback
	// callers only; off by default (profiles expose memory and burn CPU).
	Pprof   bool   `yaml:"pprof"`
	DataDir string `yaml:"data_dir"` // replicas and VERSION
	// DataDirs are several data directories (volumes), as HDFS's
	// dfs.datanode.data.dir; instead of data_dir, not beside it. Each
	// keeps du_reserved free; new replicas go to one chosen by
	// volume_choosing_policy.
	DataDirs []string `yaml:"data_dirs"`
	// VolumeChoosingPolicy picks the data directory of a new replica:
	// "round_robin" (the default, as HDFS's) or "available_space"
	// (HDFS's AvailableSpaceVolumeChoosingPolicy: volumes with over
	// 10 GiB more free space than the emptiest are preferred 3 to 1).
	VolumeChoosingPolicy string `yaml:"volume_choosing_policy"`
	// FailedVolumesTolerated is how many data directories may fail (at
	// start or later) before the datanode shuts down, as HDFS's
	// dfs.datanode.failed.volumes.tolerated (default 0). A failed
	// directory is taken out of service and its replicas are reported
	// lost, so the namenode copies them elsewhere.
	FailedVolumesTolerated int `yaml:"failed_volumes_tolerated"`
	// DiskCheckInterval is how often every data directory is checked
	// (its directories exist; a file can be written, synced and
	// removed), as HDFS's volume checker; default 1m. A failed write or
	// read also triggers a check.
	DiskCheckInterval   time.Duration `yaml:"disk_check_interval"`
	Rack                string        `yaml:"rack"`                  // reported at registration; the namenode's map wins
	HeartbeatInterval   time.Duration `yaml:"heartbeat_interval"`    // heartbeats to the namenode
	BlockReportInterval time.Duration `yaml:"block_report_interval"` // full block reports
	ScanInterval        time.Duration `yaml:"scan_interval"`         // block scanner: one full verification pass
	PerClientBuffer     int64         `yaml:"per_client_buffer"`     // multi-pipeline: unforwarded bytes per client
	CacheCapacity       int64         `yaml:"cache_capacity"`        // in-memory block cache, bytes (0 = no caching)
	SyncOnClose         bool          `yaml:"sync_on_close"`         // fsync replicas on finalize

	// DataDirPerm is data_dir's permission, as HDFS's
	// dfs.datanode.data.dir.perm (default 700): set at start, and
	// whatever lies under it loses the bits it does not allow (files also
	// execute), so no other OS user reads replicas off the disk.
	DataDirPerm diskperm.Mode `yaml:"data_dir_perm"`
	// DuReserved is the space kept free on the data directory's file
	// system, as HDFS's dfs.datanode.du.reserved (a size: "10GiB") or
	// dfs.datanode.du.reserved.pct (a percentage of the volume: "5%").
	// It is left out of the capacity and remaining space reported to the
	// namenode, and a volume whose free space is at or below it takes no
	// new replica. Default 5% (defaultDuReserved); "0" turns it off.
	DuReserved string `yaml:"du_reserved"`

	// ScanBandwidth limits the block scanner's reads, bytes per second.
	ScanBandwidth int64 `yaml:"scan_bandwidth"`
	// BalanceBandwidth bounds what the balancer's moves from this
	// datanode send, bytes per second, all moves together (HDFS's
	// dfs.datanode.balance.bandwidthPerSec); 0: no bound.
	BalanceBandwidth int64 `yaml:"balance_bandwidth"`
	// VerifyReads makes READ_BLOCK verify checksums before sending (the
	// client verifies anyway); off, data goes out with sendfile.
	VerifyReads bool `yaml:"verify_reads"`
	// IOTimeout bounds every wait on a data-transfer peer (setup, a
	// packet, an ack); 0 = default.
	IOTimeout time.Duration `yaml:"io_timeout"`
	// SocketRecvBuffer / SocketSendBuffer set SO_RCVBUF / SO_SNDBUF on data
	// connections; 0 leaves the kernel's autotuning alone (usually best).
	// The network-tuning work sets these.
	SocketRecvBuffer int `yaml:"socket_recv_buffer"`
	SocketSendBuffer int `yaml:"socket_send_buffer"`
	// NetProfile is a JSON settings profile file (seed 001, package
	// tune) applied to every data connection; the file is re-read when it
	// changes. Empty: sockets as the kernel makes them.
	NetProfile string `yaml:"net_profile"`
	// TransferLog is the per-block receive log (JSON lines, package
	// tune); default transfer.jsonl in data_dir, "off" for none.
	TransferLog string `yaml:"transfer_log"`
	// MaxXceivers bounds concurrent data-transfer connections: accepted
	// ones beyond it are reset at accept, and an op finding the node's
	// connections (accepted and dialled) beyond it is refused busy.
	MaxXceivers int `yaml:"max_xceivers"`
	// MaxXceiversPerHost bounds the data connections accepted from one
	// peer address (default a quarter of max_xceivers), so that one host
	// holding idle connections cannot shut every other reader out.
	MaxXceiversPerHost int `yaml:"max_xceivers_per_host"`
	// ReceiveBufferBudget bounds the packet buffers all write connections
	// hold at once, bytes; past it a write waits up to io_timeout for
	// room and is then refused (OP_STATUS_ERROR_BUSY) rather than growing
	// the heap. 0: memory_budget less cache_capacity and
	// page_cache_budget when memory_budget is set, else 1 GiB. At least
	// per_client_buffer.
	ReceiveBufferBudget int64 `yaml:"receive_buffer_budget"`

	// MemoryBudget is the memory this datanode may use, bytes (0 =
	// unlimited). cache_capacity must fit in it beside the write buffers
	// the datanode needs (per_client_buffer); the testbed and the cluster
	// launcher set it to the node's memory cgroup limit.
	MemoryBudget int64 `yaml:"memory_budget"`
	// CacheConcurrency bounds how many blocks are read into the cache at
	// once (cache commands are queued and run off the heartbeat path).
	CacheConcurrency int `yaml:"cache_concurrency"`
	// DropCacheBehindReads: after an uncached read, drop the pages read
	// from the page cache (posix_fadvise DONTNEED), as HDFS's
	// dfs.datanode.drop.cache.behind.reads. Uncached reads then really
	// reach the disk, so memory caching can be measured on a machine
	// whose page cache would otherwise hold every block.
	DropCacheBehindReads bool `yaml:"drop_cache_behind_reads"`
	// PageCacheBudget, with drop_cache_behind_reads, is how many bytes of
	// recently read blocks stay in the page cache before the least
	// recently read are dropped (0: every read is dropped at once). It
	// stands for the page cache a node with a memory budget keeps, so a
	// block cached right after a map read it comes from memory, as seed
	// 003 (section IV) counts on, instead of from the disk a second time.
	PageCacheBudget int64 `yaml:"page_cache_budget"`
	// DropCacheBehindWrites: once a replica is finalized, write its files
	// back and drop them from the page cache, as HDFS's
	// dfs.datanode.drop.cache.behind.writes.
	DropCacheBehindWrites bool `yaml:"drop_cache_behind_writes"`
}
