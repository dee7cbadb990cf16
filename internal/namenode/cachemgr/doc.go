// Package cachemgr is the namenode's cache manager (seed 003, HDFS's
// CacheManager and CacheReplicationMonitor): it keeps the replacement
// policy's plan (the pure internal/cache), turns the plan's changes into
// CacheCommand/UncacheCommand in heartbeat replies, reconciles the plan
// with the blocks datanodes report cached, answers CacheAccess (which
// datanode a map task's read should cache on), R_j per running job for the
// resource manager, the cache statistics, and the pool and directive
// calls of hdfs cacheadmin. Only a datanode's report counts as cached:
// cached_on, R_j and the statistics show reported blocks, never merely
// commanded ones.
//
// It reads the namenode through the Namenode interface (block map,
// namespace lookup, datanode table, pools and directives) and makes pool
// and directive changes through it: they are part of the namespace, so
// the namenode logs them in its edit log and applies them to its state
// like a file change. The manager's state is guarded by the namenode's
// lock, which also guards what the interface reads; methods named
// ...Locked are called with it held, the others take it.
//
// It leaves to the namenode: who may call (the namenode's one
// authorization point checks every call, including who may change a pool
// and who may ask to cache a block, before or around the manager's own
// checks), the edit log, and the RPC servers. It leaves to internal/cache
// which blocks to cache and evict.
package cachemgr
