// Package store keeps a datanode's replicas on its local disk, the way
// HDFS's FsDataset does: each replica is a block file with the raw bytes and
// a meta file with one CRC32C per chunk beside it.
//
// Layout under the data directory:
//
//	VERSION                      {"layout_version":1,"datanode_id":"<uuid>"}: the stable id
//	current/finalized/blk_<id>   finalized replicas (complete, immutable)
//	current/finalized/blk_<id>_<gs>.meta
//	rbw/blk_<id>, rbw/blk_<id>_<gs>.meta     replicas being written (or waiting for recovery)
//	tmp/...                      re-replication in progress; discarded on restart
//
// Meta file: uint16 version (1) | uint8 checksum type (1 = CRC32C) |
// uint32 bytes per checksum B, then one big-endian uint32 CRC32C per B-byte
// chunk of the block file — the same encoding as the checksums in a packet,
// so a receiver stores a packet's checksums as they arrived and a sender
// serves them without recomputing.
//
// The store decides replica states (finalized, RBW, RUR under recovery,
// temporary) and their transitions: create, append, finalize (an atomic
// rename), truncate on recovery, delete, and, for a transfer from another
// datanode, replacing a finalized replica left at an older generation stamp. It does no networking and knows no
// namenode; the datanode package drives it and reports what changed.
// Options.Changed tells the datanode whenever a copy of a replica taken
// earlier (its memory cache) may be stale.
// Writers are single-goroutine objects; everything else is safe for
// concurrent use.
package store
