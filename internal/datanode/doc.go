// Package datanode is the smarth datanode daemon: it stores block replicas
// (package store), serves the streaming data-transfer protocol
// (internal/datatransfer) to clients and other datanodes, and follows the
// namenode's orders. It is HDFS's DataNode in shape, with SMARTH's
// multi-pipeline write support (seed 000, section III).
//
// What it decides:
//   - how a write pipeline runs through this node (receiver.go): classic
//     HDFS behaviour — forward each packet downstream as it arrives, then
//     verify and store it; a responder acks a packet upstream only when it is
//     stored here and acked downstream, prepending this node's status; the
//     first failure is sent upstream as an error status at the failing node's
//     position and the connection closes. In multi-pipeline mode the first
//     datanode stores first and forwards from a queue bounded by
//     per_client_buffer bytes per client (when full it stops reading the
//     client's socket), and sends FIRST_NODE_FINISH_ACK once the whole block
//     is stored; a second open pipeline of the same client through this node
//     is refused with OP_STATUS_ERROR_BUSY.
//   - how replicas are read (sender.go: sendfile for finalized replicas
//     unless verify_reads; a reader's optional ERROR_CHECKSUM read status
//     makes the scanner verify the replica at once),
//     copied (transfer.go: TRANSFER_BLOCK and re-replication), scanned
//     (scanner.go) and recovered (recovery.go: primary of lease recovery and
//     InterDatanodeProtocol).
//
// What it leaves to others: where replicas go and when to re-replicate or
// delete (the namenode, via heartbeat commands), when to recover a pipeline
// (the client), replica file layout (store).
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
//
// plus "datanode" (this node's id) from the logger. A failed receive logs
// "block receive failed" at Warn instead.
//
// Metrics are on http_addr/metrics (own registry, names smarth_datanode_*),
// and Go profiles on http_addr/debug/pprof/.
package datanode
