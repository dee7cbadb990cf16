package namenode

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os/user"
	"slices"
	"strings"
	"time"

	"smarth/internal/auth"
	"smarth/internal/blocktoken"
	"smarth/internal/cache"
	"smarth/internal/daemonconf"
	"smarth/internal/logfile"
	"smarth/internal/namenode/cachemgr"
	"smarth/internal/namenode/namespace"
	"smarth/internal/namenode/retrycache"
	"smarth/internal/placement"
	"smarth/internal/topology"
)

// Config is the namenode's configuration: its keys, the contract with the
// cluster launcher and the testbed, are daemonconf.NameNodeConfig's (there
// so that the launchers can build it without importing the namenode);
// the defaults and the checks are here.
type Config struct {
	daemonconf.NameNodeConfig `yaml:",inline"`
	// raftConn wraps the HA group's raft connections (replog's
	// WrapConn): tests cut a member off its group with it.
	raftConn func(net.Conn) net.Conn
	// readLease, when positive, replaces the read lease derived from
	// ha_heartbeat_timeout (ha_read_consistency: lease): tests whose
	// members' raft timers differ give it the group's timing.
	readLease time.Duration
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	su := "smarth"
	if u, err := user.Current(); err == nil && u.Username != "" {
		su = u.Username
	}
	return Config{NameNodeConfig: daemonconf.NameNodeConfig{
		RPCAddr:               "127.0.0.1:8020",
		HTTPAddr:              "127.0.0.1:9870",
		MetaDir:               "smarth-namenode",
		EditLogIO:             "direct",
		ResourceDuReserved:    100 << 20,
		BlockSize:             64 << 20,
		MaxBlockSize:          32 << 30,
		HeapMin:               64 << 20,
		Replication:           3,
		MinReplication:        1,
		MaxReplication:        512,
		HeartbeatInterval:     3 * time.Second,
		DeadNodeTimeout:       30 * time.Second,
		ReplicationInterval:   3 * time.Second,
		LeaseSoftLimit:        60 * time.Second,
		LeaseHardLimit:        20 * time.Minute,
		SafeModeThreshold:     0.999,
		SafeModeExtension:     0,
		Placement:             "rackaware",
		DefaultRack:           topology.DefaultRack,
		TopologyScriptTimeout: topology.DefaultScriptTimeout,
		PermissionsEnabled:    true,
		Superuser:             su,
		Supergroup:            "supergroup",
		Auth:                  auth.DefaultMode, // secure: simple only when a config says so
		Umask:                 0o022,
		AccessTimePrecision:   time.Hour,
		MaxXAttrsPerInode:     namespace.DefaultMaxXAttrsPerInode,
		MaxXAttrSize:          namespace.DefaultMaxXAttrSize,

		BlockAccessTokenEnable:        true,
		RetryCacheEnable:              true,
		HA:                            daemonconf.NameNodeHA{ObserverReads: true},
		RetryCacheExpiry:              retrycache.DefaultExpiry,
		RetryCacheMaxEntries:          retrycache.DefaultMaxEntries,
		BlockAccessTokenLifetime:      blocktoken.DefaultLifetime,
		BlockKeyUpdateInterval:        blocktoken.DefaultRoll,
		CheckpointTxns:                1_000_000,
		CheckpointPeriod:              time.Hour,
		SpeedRecordTTL:                10 * time.Minute,
		MaxReplicationStreams:         2,
		DecommissionBlocksPerInterval: defaultDecommissionBlocksPerInterval,
		MaintenanceReplicationMin:     1,
		CachePolicy:                   "none",
		CacheWindow:                   cache.DefaultWindow,
		CacheTTL:                      cache.DefaultTTL,
		CacheAffinitySource:           cachemgr.AffinityLearned,
		Log:                           logfile.Default(),
	}}
}

// mapping is the topology mapping's configuration.
func (c Config) mapping() topology.MappingConfig {
	return topology.MappingConfig{Table: c.Racks, TableFile: c.TopologyTableFile, Script: c.TopologyScript,
		ScriptTimeout: c.TopologyScriptTimeout, DefaultRack: c.DefaultRack}
}

// Validate checks the configuration and says what is wrong in terms of
// the YAML keys.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for key, addr := range map[string]string{"rpc_addr": c.RPCAddr, "http_addr": c.HTTPAddr} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			bad("%s: %q is not host:port: %v", key, addr, err)
		}
	}
	if c.MetaDir == "" {
		bad("meta_dir: required (where the namespace is kept)")
	}
	if c.ResourceDuReserved < 0 {
		bad("resource_du_reserved: %d bytes cannot be negative (0 turns the free-space check off)", c.ResourceDuReserved)
	}
	if c.EditLogIO != "direct" && c.EditLogIO != "buffered" {
		bad("edit_log_io: %q must be direct or buffered", c.EditLogIO)
	}
	if c.BlockSize < 1024 || c.BlockSize%512 != 0 || c.BlockSize > namespace.MaxBlockSize {
		// The upper bound is what an inode's header word holds (48 bits,
		// as HDFS's): a larger default would fail every create that
		// takes it, not the start.
		bad("block_size: %d must be at least 1024, a multiple of 512 and at most %d", c.BlockSize, int64(namespace.MaxBlockSize))
	}
	if c.MaxBlockSize < c.BlockSize || c.MaxBlockSize > namespace.MaxBlockSize {
		// Below block_size every create taking the default would fail.
		bad("max_block_size: %d must be at least block_size (%d) and at most %d (48 bits, what an inode holds)", c.MaxBlockSize, c.BlockSize, int64(namespace.MaxBlockSize))
	}
	if c.RetryCacheExpiry < 0 || c.RetryCacheMaxEntries < 0 {
		bad("retry_cache_expiry, retry_cache_max_entries: %v, %d cannot be negative (0: the default)", c.RetryCacheExpiry, c.RetryCacheMaxEntries)
	}
	if c.HeapMin < 0 {
		bad("heap_min: %d bytes cannot be negative (0: Go's default collector pacing)", c.HeapMin)
	}
	if c.MinReplication < 1 {
		bad("min_replication: %d must be at least 1", c.MinReplication)
	}
	if c.MaxReplication < c.Replication || c.MaxReplication > 32767 {
		bad("max_replication: %d must be between replication (%d) and 32767", c.MaxReplication, c.Replication)
	}
	if c.Replication < c.MinReplication {
		bad("replication: %d must be at least min_replication (%d)", c.Replication, c.MinReplication)
	}
	for key, d := range map[string]time.Duration{
		"heartbeat_interval": c.HeartbeatInterval, "dead_node_timeout": c.DeadNodeTimeout,
		"replication_interval": c.ReplicationInterval, "lease_soft_limit": c.LeaseSoftLimit,
		"lease_hard_limit": c.LeaseHardLimit, "checkpoint_period": c.CheckpointPeriod,
		"speed_record_ttl": c.SpeedRecordTTL, "block_access_token_lifetime": c.BlockAccessTokenLifetime,
		"block_key_update_interval": c.BlockKeyUpdateInterval,
	} {
		if d <= 0 {
			bad("%s: %v must be positive", key, d)
		}
	}
	if c.DeadNodeTimeout <= c.HeartbeatInterval {
		bad("dead_node_timeout: %v must be longer than heartbeat_interval (%v)", c.DeadNodeTimeout, c.HeartbeatInterval)
	}
	if c.LeaseHardLimit < c.LeaseSoftLimit {
		bad("lease_hard_limit: %v must not be shorter than lease_soft_limit (%v)", c.LeaseHardLimit, c.LeaseSoftLimit)
	}
	if c.SafeModeThreshold < 0 || c.SafeModeThreshold > 1 {
		bad("safe_mode_threshold: %v must be between 0 and 1", c.SafeModeThreshold)
	}
	if c.SafeModeExtension < 0 {
		bad("safe_mode_extension: %v must not be negative", c.SafeModeExtension)
	}
	if _, ok := placement.Policies[c.Placement]; !ok {
		bad("placement: unknown policy %q (known: %v)", c.Placement, placement.Names())
	}
	if _, err := topology.NewResolver(c.Racks, c.DefaultRack); err != nil {
		bad("racks: %v", err)
	}
	if c.TopologyTableFile != "" {
		if _, err := topology.LoadTable(c.TopologyTableFile); err != nil {
			bad("topology_table_file: %v", err)
		}
	}
	if c.TopologyScript != "" {
		if err := topology.CheckScript(c.TopologyScript); err != nil {
			bad("topology_script: %v", err)
		}
	}
	if c.TopologyScriptTimeout < 0 {
		bad("topology_script_timeout: %v must not be negative", c.TopologyScriptTimeout)
	}
	if _, err := auth.ParseMode(c.Auth); err != nil {
		bad("%v", err)
	}
	if c.Umask > 0o777 {
		bad("umask: %#o is not a permission mask", c.Umask)
	}
	if c.MaxXAttrsPerInode < 0 || c.MaxXAttrSize < 0 {
		bad("max_xattrs_per_inode %d, max_xattr_size %d: limits cannot be negative", c.MaxXAttrsPerInode, c.MaxXAttrSize)
	}
	if c.TrashInterval < 0 {
		bad("trash_interval: %v is negative (0 leaves the trash to the clients)", c.TrashInterval)
	}
	if c.AccessTimePrecision < 0 {
		bad("access_time_precision: %v is negative (0 turns access times off)", c.AccessTimePrecision)
	}
	if c.CheckpointTxns == 0 {
		bad("checkpoint_txns: must be positive")
	}
	if c.RPCMaxConnections < 0 || c.IPCMaxCalls < 0 {
		bad("rpc_max_connections %d, ipc_max_calls %d: limits cannot be negative (0: the default)", c.RPCMaxConnections, c.IPCMaxCalls)
	}
	if c.RPCMaxConnectionsPerHost < 0 {
		bad("rpc_max_connections_per_host %d: a limit cannot be negative (0: the default)", c.RPCMaxConnectionsPerHost)
	}
	if c.DecommissionBlocksPerInterval < 0 {
		bad("decommission_blocks_per_interval: %d must not be negative (0: the default, %d)", c.DecommissionBlocksPerInterval, defaultDecommissionBlocksPerInterval)
	}
	if c.MaintenanceReplicationMin < 0 {
		bad("maintenance_replication_min: %d must not be negative (0: the default, 1)", c.MaintenanceReplicationMin)
	}
	if c.MaxReplicationStreams < 1 {
		bad("max_replication_streams: %d must be at least 1", c.MaxReplicationStreams)
	}
	errs = append(errs, c.validateCache()...)
	errs = append(errs, c.validateHA()...)
	errs = append(errs, c.Wire.Validate())
	return errors.Join(errs...)
}

// validateCache checks the cache_* keys.
func (c Config) validateCache() []error {
	var errs []error
	if _, ok := cache.Policies[c.CachePolicy]; !ok {
		errs = append(errs, fmt.Errorf("cache_policy: unknown cache policy %q (known: %s)", c.CachePolicy, strings.Join(cache.Names(), ", ")))
	}
	if c.CacheWindow <= 0 {
		errs = append(errs, fmt.Errorf("cache_window: %v must be positive", c.CacheWindow))
	}
	if c.CacheAffinitySource != cachemgr.AffinityLearned && c.CacheAffinitySource != cachemgr.AffinityTable {
		errs = append(errs, fmt.Errorf("cache_affinity_source: %q is neither %s nor %s", c.CacheAffinitySource, cachemgr.AffinityLearned, cachemgr.AffinityTable))
	}
	if c.CacheTTL <= 0 {
		errs = append(errs, fmt.Errorf("cache_ttl: %v must be positive", c.CacheTTL))
	}
	for _, app := range slices.Sorted(maps.Keys(c.CacheAffinity)) {
		if v := c.CacheAffinity[app]; !(v >= 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("cache_affinity: %s: %v must be between 0 and 1", app, v))
		}
	}
	return errs
}
