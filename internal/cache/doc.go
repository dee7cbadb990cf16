// Package cache decides which blocks each datanode holds in memory and
// which it evicts: the namenode side of seed 003 ("Cache affinity aware
// in-memory caching management for Hadoop", sections III and IV.2).
//
// It is pure: no I/O, no clocks (every call takes now), no goroutines. A
// Plan holds the shared state every policy works on — per datanode the
// cache capacity and the resident set with block sizes, per block its
// access events (application, cache affinity, time) within a moving
// window — and one Policy that turns an access or a periodic tick into
// Changes (cache block b on node n, or uncache it). The namenode calls the
// Plan under its lock, sends the Changes as CacheCommand/UncacheCommand
// in heartbeat replies, and tells the Plan what the datanodes really
// report (Drop, Adopt, RemoveNode, Forget).
//
// "Resident" here means planned: commanded and not yet known to have
// failed. Whether a datanode really holds a block is the namenode's
// business (it trusts only the datanode's cache report).
//
// Policies, chosen by name from Policies:
//
//   - none: never caches (the paper's no-cache baseline).
//   - pinned: HDFS-style path directives without replacement (the paper's
//     DL-NR). The namenode resolves directives to Pins; each pinned block
//     is cached on up to Replication of its replica holders while they
//     have room. Nothing is evicted to make room, accesses never cache,
//     and a block whose directive is gone is uncached.
//   - lru: an access caches the block on the access's node; the least
//     recently accessed blocks there are evicted to make room (ties: lower
//     block id first).
//   - ca: cache affinity with a TTL (the paper's CL-CA, section 5.5). A
//     block's affinity is that of the application that accessed it last
//     (CA ignores sharing). An access admits the block if there is room,
//     else by evicting blocks of lower affinity, lowest first and oldest
//     access first among equals; blocks not accessed for TTL (default
//     10 min) expire.
//   - bg: block goodness, Algorithm 2. BG(b) = sum over applications of
//     CA_app x accesses of b by that app within the moving window (default
//     30 min). If the block is cached on some node, nothing happens
//     (line 5); if the node has room it is cached; else the lowest-BG
//     block on that node is evicted only if its BG is below the new
//     block's, oldest access first among equal BG; else the access is
//     skipped. Algorithm 2 assumes equal block sizes and evicts one
//     block; with unequal sizes victims are taken in that order until the
//     block fits, and if it cannot fit nothing is evicted.
//
// Access-driven policies (lru, ca, bg) cache a block at most once in the
// whole cluster, as the paper's CL-* design does (Alg. 2 line 5; map
// tasks then find it through cache locality). pinned caches up to a
// directive's replication copies. No policy ever exceeds a node's
// capacity, evicts a block that is not resident, or holds a block twice
// on one node; a block that cannot fit is skipped without evicting
// anything.
//
// It leaves to others: choosing the node an access asks for (the
// namenode: the reader's node for a local read, the serving datanode for
// a remote one), resolving directive paths to blocks, the cache
// affinity of applications (configured or measured by `smarth job
// affinity`), and moving bytes (datanodes).
package cache
