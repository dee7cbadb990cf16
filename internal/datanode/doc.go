// Package datanode is the smarth datanode daemon: it stores block replicas
// (package store), serves the streaming data-transfer protocol
// (internal/datatransfer) to clients and other datanodes, and follows the
// namenode's orders. It is HDFS's DataNode in shape, with SMARTH's
// multi-pipeline write support (seed 000, section III).
//
// What it decides:
//
//   - how a write pipeline runs through this node (receiver.go, and
//     writemode.go for what the write mode changes): classic HDFS
//     behaviour — forward each packet downstream as it arrives, then
//     store it, verified only on the last node of a client's pipeline (and
//     on a multi-pipeline first node, on datanode-to-datanode copies and
//     for a packet starting inside a chunk; see receiver.verifies); a
//     responder acks a packet upstream only when it is
//     stored here and acked downstream, prepending this node's status; the
//     first failure is sent upstream as an error status at the failing node's
//     position and the connection closes. In multi-pipeline mode the first
//     datanode stores first and forwards from a queue bounded by
//     per_client_buffer bytes per client (when full it stops reading the
//     client's socket), and sends FIRST_NODE_FINISH_ACK once the whole block
//     is stored; a second open pipeline of the same client through this node
//     is refused with OP_STATUS_ERROR_BUSY.
//
//   - how replicas are read (sender.go: sendfile for finalized replicas
//     unless verify_reads; a reader's optional ERROR_CHECKSUM read status
//     makes the scanner verify the replica at once),
//     copied (transfer.go: TRANSFER_BLOCK and re-replication), scanned
//     (scanner.go) and recovered (recovery.go: primary of lease recovery and
//     InterDatanodeProtocol).
//
//   - what is in its memory cache (cacher.go, memread.go, package
//     memcache; seed 003): cache commands from heartbeat replies are
//     queued and run by cache_concurrency workers, each reading a whole
//     finalized replica into memory and verifying every chunk against the
//     meta file before it counts as cached (a corrupt replica is reported
//     bad and never cached). The store's Changed hook uncaches a replica at
//     once when it is deleted, replaced, recovered, reopened for writing or
//     marked corrupt. Heartbeats report cache_capacity, cache_used and the
//     ids of the fully cached blocks. READ_BLOCK of a cached replica is
//     served from memory (data and stored checksums, writev) without
//     touching the disk; the cache starts empty on every start.
//
//   - whether uncached I/O leaves pages in the page cache
//     (dropbehind.go): drop_cache_behind_reads drops the pages of every
//     uncached read once the reader hangs up (and again 300 ms later,
//     since pages sendfile handed to the socket cannot be dropped until
//     the reader's ACK); drop_cache_behind_writes syncs and drops a
//     replica's files after it is finalized. Both default false, as in
//     HDFS; the seed 003 experiments turn the first on so that uncached
//     reads really reach the disk.
//
// What it leaves to others: which blocks to cache and when to uncache
// them (the namenode's cache manager), where replicas go and when to
// re-replicate or delete (the namenode, via heartbeat commands), when to
// recover a pipeline (the client), replica file layout (store).
//
// A datanode that forwards a write sets WriteBlockOp.source to itself;
// a client leaves it empty. That is how a node knows it is the first of a
// pipeline (the only one that sends FNFA and buffers per client).
//
// # The block-receive log line
//
// Every replica received (a pipeline write or a transfer) is logged once, at
// Info level, with msg "block received" and these keys (the network-tuning
// work parses them; keep them stable):
//
//	block       "blk_<id>_<gs>"
//	gs          generation stamp
//	bytes       bytes received in this write (from the resume offset on recovery)
//	length      replica length after the write
//	start, end  when the write started (request accepted) and its last packet was stored
//	duration    end - start in seconds (float)
//	mib_per_s   bytes / duration in MiB/s
//	mbit_per_s  bytes / duration in Mbit/s (10^6 bits)
//	stage       WriteStage name: PIPELINE_SETUP_CREATE, PIPELINE_SETUP_STREAMING_RECOVERY, TRANSFER_RBW, TRANSFER_FINALIZED
//	mode        CLASSIC or MULTI_PIPELINE
//	upstream    "ip:port" of the sender (client or upstream datanode)
//	client      client name ("" for datanode-to-datanode transfers)
//	downstream  number of datanodes after this one in the pipeline
//	cpu_seconds CPU time (user + system) the whole datanode process used
//	            from start to end; exact only when this was its only
//	            transfer (seed 001 reads CPU time from this log)
//	packets     data packets stored
//	disk_writes writes of the block file that stored them (the disk stage
//	            writes the packets queued behind a slow disk together)
//
// plus "datanode" (this node's id) from the logger. A failed receive logs
// "block receive failed" at Warn instead.
//
// # Network tuning (seed 001)
//
// The same receive is also appended as one JSON line to the transfer log
// (transfer_log; default data_dir/transfer.jsonl, "off" for none; rotated
// to .1 past 64 MiB), with packets, packet size, process CPU time, the
// number of open data connections, the settings profile and its socket
// settings read back at the end (tune.Record). net_profile names a JSON
// settings profile (tune.Profile) applied to every data connection after
// socket_recv_buffer/socket_send_buffer; the file is re-read when it
// changes, and a broken file keeps the last good profile (nettune.go).
//
// Metrics are on http_addr/metrics (own registry, names smarth_datanode_*),
// and, with pprof: true, Go profiles on http_addr/debug/pprof/ (loopback
// callers only). The cache's: cache_capacity_bytes,
// cache_used_bytes, cached_blocks (gauges); cache_hits_total (reads served
// from memory), cache_misses_total (reads of finalized replicas served from
// disk), blocks_cached_total, blocks_uncached_total,
// cache_failures_total{reason=checksum|capacity|io}, bytes_read_memory_total,
// bytes_read_disk_total; and process_disk_read_bytes_total /
// process_disk_write_bytes_total, the process's real storage I/O from
// /proc/self/io (shared by datanodes in one process), which shows whether
// reads reached the disk.
//
// memory_budget (bytes, 0 = unlimited) is checked at start: cache_capacity
// must fit in it beside per_client_buffer, and never exceed the machine's
// physical memory.
package datanode
