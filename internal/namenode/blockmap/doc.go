// Package blockmap is the namenode's table of blocks: for every block id its
// generation stamp, committed length, state (under construction, committed,
// complete), the file it belongs to and its expected replication, and which
// datanodes hold which replica in which state.
//
// It decides what a replica report means: accepted, a replica of a block
// nobody owns any more (to be deleted), or corrupt (wrong generation stamp or
// length for a committed block, or reported bad). It counts live, corrupt
// and missing replicas so that the namenode's replication monitor can decide
// what to copy and what to delete, and it hands out monotonic block ids and
// generation stamps.
//
// It does no I/O and has no clock and no lock: the namenode owns the lock,
// persists ids, stamps and lengths in its edit log, and sends the commands.
// Replica locations are never persisted; they are rebuilt from block reports
// after a restart, as in HDFS (BlocksMap, BlockInfo, CorruptReplicasMap).
package blockmap
