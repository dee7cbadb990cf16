package daemonconf

import (
	"time"

	"smarth/internal/httpserver"
	"smarth/internal/logfile"
	"smarth/internal/pki"
)

// NameNodeConfig is the namenode's configuration file: the YAML keys are
// the contract with the cluster launcher and the testbed. The namenode's
// Config embeds it, with the defaults and Validate (internal/namenode).
type NameNodeConfig struct {
	RPCAddr  string `yaml:"rpc_addr"`  // gRPC ClientProtocol + DatanodeProtocol
	HTTPAddr string `yaml:"http_addr"` // status page, /metrics
	MetaDir  string `yaml:"meta_dir"`  // edit log and checkpoint images
	// EditLogIO is how edit log segments are written: "direct" (the
	// default), each group commit one O_DIRECT|O_DSYNC write that returns
	// when the bytes are on stable storage; or "buffered", HDFS's way,
	// through the page cache and then an fdatasync. Direct falls back to
	// buffered, with a warning, where the file system refuses it.
	EditLogIO string `yaml:"edit_log_io"`
	// ResourceDuReserved is the free space, bytes, the file system of
	// meta_dir must keep (HDFS's dfs.namenode.resource.du.reserved, and
	// its default, 100 MiB): below it the namenode refuses mutations with
	// an error saying so, before the edit log itself runs out of room,
	// and accepts them again once space is freed. 0 turns the check off.
	ResourceDuReserved int64 `yaml:"resource_du_reserved"`
	// ResourceManagerWeb is the resource manager's web address
	// (host:port), for the console's links to job pages; empty: no links.
	ResourceManagerWeb string `yaml:"resourcemanager_web"`

	BlockSize int64 `yaml:"block_size"` // block size of files whose create names none (HDFS dfs.blocksize)
	// MaxBlockSize is the largest block size a create may ask for
	// (HDFS's dfs.namenode.fs-limits.max-block-size, and its default,
	// 32 GiB): bigger blocks are slow to re-replicate and recover, and
	// it keeps a block's quota charge (block size x replication) far
	// from int64's limit. Files created before a lower limit keep theirs.
	MaxBlockSize   int64 `yaml:"max_block_size"`
	Replication    int   `yaml:"replication"`     // replicas of files whose create names none (HDFS dfs.replication)
	MinReplication int   `yaml:"min_replication"` // replicas a block needs before its file may close, and for safe mode (dfs.namenode.replication.min)
	MaxReplication int   `yaml:"max_replication"` // the most replicas a file may ask for (dfs.replication.max)

	HeartbeatInterval   time.Duration `yaml:"heartbeat_interval"`   // the datanodes' interval, for liveness math
	DeadNodeTimeout     time.Duration `yaml:"dead_node_timeout"`    // no heartbeat this long: dead
	ReplicationInterval time.Duration `yaml:"replication_interval"` // replication monitor period
	LeaseSoftLimit      time.Duration `yaml:"lease_soft_limit"`     // after it another writer may take the file over
	LeaseHardLimit      time.Duration `yaml:"lease_hard_limit"`     // after it the namenode recovers the file

	SafeModeThreshold float64       `yaml:"safe_mode_threshold"` // fraction of complete blocks with min_replication reported
	SafeModeExtension time.Duration `yaml:"safe_mode_extension"` // stay this long after reaching it

	Placement string `yaml:"placement"` // a name in placement.Policies
	// The topology mapping, for datanodes and clients alike (HDFS's
	// net.topology.*): Racks inline, a table file of "address rack"
	// lines, and a script run with addresses as arguments printing one
	// rack each (cached; each run bounded by TopologyScriptTimeout). The
	// inline table wins over the file, both over the script.
	Racks                 map[string]string `yaml:"racks"`                   // hostname or IP -> rack
	TopologyTableFile     string            `yaml:"topology_table_file"`     // a file of "address rack" lines (net.topology.table.file.name)
	TopologyScript        string            `yaml:"topology_script"`         // run with addresses, prints their racks (net.topology.script.file.name)
	TopologyScriptTimeout time.Duration     `yaml:"topology_script_timeout"` // bound on one run of topology_script
	DefaultRack           string            `yaml:"default_rack"`            // rack of datanodes nobody placed

	// HostsExcludeFile lists datanodes (hostname or IP, one per line, #
	// comments) to decommission, read at start and on `smarth admin
	// refreshNodes` (HDFS's dfs.hosts.exclude).
	HostsExcludeFile string `yaml:"hosts_exclude_file"`
	// DecommissionBlocksPerInterval bounds the blocks of decommissioning
	// datanodes the monitor checks per replication tick, all nodes
	// together (dfs.namenode.decommission.blocks.per.interval).
	DecommissionBlocksPerInterval int `yaml:"decommission_blocks_per_interval"`
	// HostsMaintenanceFile lists datanodes to put in maintenance, one per
	// line: a hostname or IP, optionally followed by the RFC 3339 time the
	// maintenance ends (none: until the line is removed); read at start
	// and on refreshNodes (HDFS's combined hosts file, adminState
	// IN_MAINTENANCE with maintenanceExpireTimeInMS).
	HostsMaintenanceFile string `yaml:"hosts_maintenance_file"`
	// MaintenanceReplicationMin is how many replicas of each block must be
	// on in-service datanodes before a datanode is IN_MAINTENANCE (HDFS's
	// dfs.namenode.maintenance.replication.min, default 1).
	MaintenanceReplicationMin int `yaml:"maintenance_replication_min"`

	PermissionsEnabled bool   `yaml:"permissions_enabled"` // check permissions on every call (dfs.permissions.enabled)
	Superuser          string `yaml:"superuser"`           // default: the OS user running the namenode
	Supergroup         string `yaml:"supergroup"`          // members are superusers too (membership resolved here, see Groups)

	// Identity (docs/security.md). Auth is "secure" (the default, also
	// when a config names no auth: callers prove their user with a
	// credential signed by the secret in AuthSecretFile) or "simple" (the
	// asserted name is trusted; opt-in, warned about at start). DatanodeKeyFile holds the
	// key datanodes prove cluster membership with (required in secure
	// mode; both files default under meta_dir and are created 0600).
	// Groups maps users to groups; users not in it get their OS groups on
	// this host. ProxyUsers (besides the superuser) may act for others,
	// as the resource manager and node managers do for job submitters.
	Auth            string              `yaml:"auth"`
	AuthSecretFile  string              `yaml:"auth_secret_file"`
	DatanodeKeyFile string              `yaml:"datanode_key_file"`
	Groups          map[string][]string `yaml:"groups"`
	ProxyUsers      []string            `yaml:"proxy_users"`
	Umask           uint32              `yaml:"umask"` // applied to the modes clients ask for

	// AccessTimePrecision (HDFS dfs.namenode.accesstime.precision): a
	// file's access time is recorded on open only when the recorded one is
	// older than this, so that reads rarely write the edit log; 0 turns
	// access times off (setTimes then refuses to set one).
	AccessTimePrecision time.Duration `yaml:"access_time_precision"`
	// TrashInterval (HDFS fs.trash.interval) is how long deleted files
	// stay in a user's trash. Clients move deletes to the trash (the
	// trash lives in the namespace, the policy in the client, as HDFS);
	// this value, given to them with the server defaults, overrides
	// theirs. 0 (the default, as HDFS) leaves it to the clients.
	TrashInterval time.Duration `yaml:"trash_interval"`
	// TrashCheckpointInterval (HDFS fs.trash.checkpoint.interval) is how
	// often the namenode checkpoints every user's trash and deletes the
	// expired checkpoints; 0 (or more than TrashInterval) means
	// TrashInterval.
	TrashCheckpointInterval time.Duration `yaml:"trash_checkpoint_interval"`
	// Extended attribute limits (HDFS dfs.namenode.fs-limits.max-xattrs-
	// per-inode and max-xattr-size: name plus value bytes).
	MaxXAttrsPerInode int `yaml:"max_xattrs_per_inode"` // extended attributes one file or directory may hold
	MaxXAttrSize      int `yaml:"max_xattr_size"`       // bytes of one attribute, name and value

	// Block access tokens (HDFS dfs.block.access.token.*): on by default;
	// off only for compatibility with old clients, with a warning.
	BlockAccessTokenEnable   bool          `yaml:"block_access_token_enable"`
	BlockAccessTokenLifetime time.Duration `yaml:"block_access_token_lifetime"` // how long a token the namenode signs is good for
	BlockKeyUpdateInterval   time.Duration `yaml:"block_key_update_interval"`   // how often the signing key rolls

	// Checkpoint after this many edits or this long since the last one,
	// whichever comes first (HDFS: dfs.namenode.checkpoint.txns/period).
	CheckpointTxns   uint64        `yaml:"checkpoint_txns"`   // edits since the last checkpoint that trigger one
	CheckpointPeriod time.Duration `yaml:"checkpoint_period"` // time since the last checkpoint that triggers one

	// SpeedRecordTTL forgets a client's speed records this long after its
	// last client heartbeat.
	SpeedRecordTTL time.Duration `yaml:"speed_record_ttl"`
	// The RPC port's bounds (docs/security.md). RPCMaxConnections caps
	// the connections open on the port, gRPC's and IPC's together
	// (Hadoop's ipc.server.max.connections, unbounded there); beyond it a
	// connection is reset at accept, counted in
	// smarth_namenode_rpc_connections_refused_total. 0: ipc.DefaultMaxConns,
	// 4096 or half the open-file limit if lower. IPCMaxCalls caps the IPC
	// calls being handled at once across connections (Hadoop's handler
	// count plus call queue); beyond it a connection's calls wait unread.
	// 0: ipc.DefaultMaxCalls, 1024.
	RPCMaxConnections int `yaml:"rpc_max_connections"`
	IPCMaxCalls       int `yaml:"ipc_max_calls"`
	// RPCMaxConnectionsPerHost caps the connections from one peer address,
	// so that one host (a flood, a leak) cannot take the port from the
	// others, datanodes among them. 0: ipc.DefaultMaxConnsPerHost, a
	// quarter of the port's default.
	RPCMaxConnectionsPerHost int `yaml:"rpc_max_connections_per_host"`
	// MaxReplicationStreams bounds the re-replication transfers one
	// datanode sends at a time (HDFS: dfs.namenode.replication.max-streams).
	MaxReplicationStreams int `yaml:"max_replication_streams"`
	// Pprof serves Go's profiler at /debug/pprof/ on the HTTP address,
	// to loopback callers only (a profile shows paths and timings, and
	// a CPU profile costs the namenode while it runs). Off by default.
	Pprof bool `yaml:"pprof"`
	// HeapMin is how far (bytes) the heap may grow before the garbage
	// collector runs, as the JVM's -Xms for HDFS's NameNode: a small
	// namespace under many RPCs is then not collected dozens of times a
	// second (heapfloor.Keep). Above it GOGC paces. 0: Go's default pacing.
	HeapMin int64 `yaml:"heap_min"`
	// The retry cache (HDFS's dfs.namenode.enable.retrycache, on by
	// default): the outcome of each at-most-once call (create, delete,
	// rename, ...) by its client and call ids, so that a call repeated
	// after a lost reply or a failover is answered with the first
	// attempt's outcome, not applied twice. Entries expire after
	// RetryCacheExpiry (dfs.namenode.retrycache.expirytime.millis, 10
	// minutes); at most RetryCacheMaxEntries are held, a quarter of them
	// per user.
	RetryCacheEnable     bool          `yaml:"retry_cache_enable"`
	RetryCacheExpiry     time.Duration `yaml:"retry_cache_expiry"`
	RetryCacheMaxEntries int           `yaml:"retry_cache_max_entries"`

	// In-memory caching (seed 003). CachePolicy is a name in
	// cache.Policies: none, pinned (path directives, no replacement),
	// lru, ca (cache affinity with CacheTTL), bg (block goodness over
	// CacheWindow). CacheAffinity is each application's CA in [0,1], used
	// when an access does not carry its own; unknown apps count 0.
	// CacheAffinitySource is where an access's CA comes from: "learned"
	// (the default) estimates it per user and app from the map tasks'
	// hot and cold read times over CacheWindow and uses the estimate once
	// 3 reads of each kind back it, CacheAffinity until then; "table" is
	// the paper's, the job's cache_affinity or CacheAffinity only.
	CachePolicy         string             `yaml:"cache_policy"`
	CacheWindow         time.Duration      `yaml:"cache_window"`
	CacheTTL            time.Duration      `yaml:"cache_ttl"`
	CacheAffinity       map[string]float64 `yaml:"cache_affinity"`
	CacheAffinitySource string             `yaml:"cache_affinity_source"`

	// Wire is the TLS switch (tls, tls_cert_file, tls_key_file,
	// tls_ca_file): RPC and HTTP both, see internal/pki.
	Wire pki.Config `yaml:",inline"`
	// HTTP bounds the HTTP port(s): timeouts and connection caps (http_* keys, internal/httpserver).
	HTTP httpserver.Limits `yaml:",inline"`
	// Log rotates the daemon's --log-file (log_max_* keys, internal/logfile).
	Log logfile.Rotation `yaml:",inline"`
	// HA makes the namenode a member of a replicated group (ha_* keys);
	// without ha_id it is a single namenode with its own edit log.
	HA NameNodeHA `yaml:",inline"`
}

// NameNodeHA is a namenode's place in an HA group (issue 28): its id, the
// group's members, and the replicated log's timeouts (zero: replog's
// defaults, a failover in about a second). The group's log, its term and
// its snapshots live under meta_dir/ha; TLS (tls_* keys) must be on, since
// the group's port is mutual TLS with the cluster CA.
type NameNodeHA struct {
	// ID is this namenode's id in the group (HDFS's dfs.ha.namenode.id);
	// empty: no HA.
	ID string `yaml:"ha_id"`
	// Peers is every member, this one included, by id (HDFS's
	// dfs.ha.namenodes.<ns> with each one's rpc-address and
	// http-address): rpc and http are what clients are sent to, raft the
	// address of the group's log (bound by this member, dialled by the
	// others; its host must be in the member's certificate).
	Peers map[string]NameNodeHAPeer `yaml:"ha_peers"`
	// PeerNames are further certificate names (common name or DNS name)
	// the group's raft port accepts. By default it takes a certificate
	// of the cluster CA only if it is named like this member's own (the
	// members share one) or like a member's id (cluster up names each
	// member's certificate after its ha_id), and refuses every other
	// daemon's: a datanode's key must not speak for the namespace log.
	// List here the names of members whose certificates are named
	// otherwise (a host name, say).
	PeerNames []string `yaml:"ha_peer_names"`
	// Bootstrap creates the group from this namenode's existing metadata
	// (or a new namespace) when meta_dir/ha holds no group yet: exactly
	// one member of a new group sets it; the others receive its image.
	Bootstrap bool `yaml:"ha_bootstrap"`
	// HeartbeatTimeout: a follower that has not heard from the leader
	// for between this and twice this starts an election (zero:
	// replog's default, 400ms; 500ms in earlier builds). Every member
	// must have the same value, which ha_read_consistency: lease relies
	// on: a group in lease mode upgraded one member at a time from a
	// build with the 500ms default sets ha_heartbeat_timeout: 500ms on
	// the upgraded members until every member runs the new build.
	HeartbeatTimeout time.Duration `yaml:"ha_heartbeat_timeout"`
	// ElectionTimeout: a candidate that won no election in between this
	// and twice this starts another (zero: replog's default).
	ElectionTimeout time.Duration `yaml:"ha_election_timeout"`
	// LeaderLeaseTimeout: a leader that heard from no majority for this
	// long steps down, so a cut-off active stops acknowledging (zero:
	// replog's default).
	LeaderLeaseTimeout time.Duration `yaml:"ha_leader_lease_timeout"`
	// SnapshotThreshold is how many edits since the last snapshot (the
	// HA checkpoint) make the next one.
	SnapshotThreshold uint64 `yaml:"ha_snapshot_threshold"`
	// ReadConsistency is what a read on the active promises:
	// "linearizable" (empty: the default) makes every namespace read
	// (getFileInfo, listing, getBlockLocations, content summary, xattrs,
	// ACLs, fsck, WebHDFS GETs, ...) wait for a read index, one raft round
	// shared by the reads that arrived meanwhile, so an active that was
	// deposed without noticing (frozen, cut off) refuses it as a standby
	// instead of answering from a stale namespace; "leader" answers from
	// the active's memory at once, which is not linearizable (HDFS's
	// active does the same); "lease" answers at once while the active
	// holds a read lease (ha_heartbeat_timeout × 0.8 from the start of
	// its last successful read index, renewed in the background), which
	// is linearizable if the members' clocks run at rates within 25% of
	// each other and every member has the same ha_heartbeat_timeout, and
	// waits for a read index like "linearizable" otherwise.
	ReadConsistency string `yaml:"ha_read_consistency"`
	// GroupCommit is how the active forms the group's log entries:
	// "gather" (empty: the default) lets a free commit slot wait, at
	// most 1 ms and half a commit, for the writers the last commit
	// released to append again, so a closed loop of clients shares
	// fuller entries; "plain" proposes whoever is waiting at once, as
	// HDFS's logSync does.
	GroupCommit string `yaml:"ha_group_commit"`
	// LeaderStore is when the active writes a log entry to its own disk:
	// "parallel" (empty: the default) while it sends the entry to the
	// standbys, counting itself towards the majority once its write is
	// done (the raft thesis, section 10.2.1), so an acknowledgement waits
	// for the slower of its write and a standby's round trip with the
	// standby's write; "serial" before it sends the entry, so it waits
	// for their sum (upstream hashicorp/raft). Either way an operation is
	// acknowledged only once a majority has it on disk.
	LeaderStore string `yaml:"ha_leader_store"`
	// BatchOverlap is when the active proposes a log entry while another
	// waits for commit: "small" (empty: the default) only while the
	// entries waiting hold fewer than 16 operations, so that a busy
	// group makes fewer, fuller entries (each costs every member an
	// fsync and a message) and a lightly loaded one overlaps them for
	// latency; "always" up to two at once, whatever their size.
	BatchOverlap string `yaml:"ha_batch_overlap"`
	// ObserverReads lets this member, while a standby, serve the
	// namespace reads (getFileInfo, listing, getBlockLocations, content
	// summary, xattrs, ACLs, ...) of a client that asks for them with
	// its state id (smarth's client with observer_reads; HDFS's
	// ObserverReadProxyProvider): the standby first waits, at most
	// half a second, until it has applied every edit the client has
	// seen acknowledged, so the client reads its own writes; a standby
	// further behind, or a read that would change the namespace (an
	// access time) or finds a block with no replica it knows of, is sent
	// to the active. On by default; calls without a state id are
	// refused as before.
	ObserverReads bool `yaml:"ha_observer_reads"`
}

// NameNodeHAPeer is one member's addresses.
type NameNodeHAPeer struct {
	RPC  string `yaml:"rpc"`
	Raft string `yaml:"raft"`
	HTTP string `yaml:"http"`
}
