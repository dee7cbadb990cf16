// Package pipeline runs the write side of a file: it turns the packets a
// writer produces into block pipelines to datanodes, the way HDFS's
// DataStreamer does, and recovers pipelines when datanodes fail.
//
// What it decides, through the small Strategy interface:
//   - Classic: HDFS's single pipeline with an 80-packet in-flight window;
//     the whole pipeline acks a block's last packet before the next block
//     is requested.
//   - Multi: SMARTH's asynchronous multi-pipeline write (seed 000, section
//     III). The first datanode's FIRST_NODE_FINISH_ACK releases the next
//     block while earlier pipelines keep forwarding and acking; at most
//     live/replication pipelines are open, a datanode is in at most one of
//     them (AddBlockRequest.busy_nodes), and targets are reordered by
//     Algorithm 2 (LocalOrder, pure). Two write modes use it:
//     "multipipeline-paper" sorts by speed and swaps the first target at
//     random as printed; "multipipeline" (hostOrder) keeps the namenode's
//     order, which already used the host's records and the topology,
//     unless a target measured clearly faster than the first, and lets the
//     swap bring forward only a rack-mate of the first whose record is over
//     30 s old, so it spends no block re-measuring a node it has just
//     measured or one behind the client's cross-rack link. Its speed book
//     starts from the records the namenode keeps for the client's host.
//   - Concurrent ("multipipeline-concurrent", beyond SMARTH): Multi's
//     limits and order, but the next block starts as soon as the current
//     one is queued (handoff Queued), each open pipeline with a sender
//     goroutine of its own, so several first hops share the client's NIC.
//     Its Admit keeps a block from starting beside a slow first hop unless
//     a fast datanode is free; before any record, a datanode in the rack
//     the namenode puts the client in (AddBlockResponse.writer_rack) is
//     presumed fast and one across racks slow.
//
// Stream does the I/O for either strategy: the data queue, one streamer
// goroutine, and per open pipeline a connection, an ack queue and a
// responder goroutine. Recovery follows Algorithm 3 (HDFS) per pipeline
// and Algorithm 4 for several: a failed pipeline joins the error set, the
// streamer stops sending the current block, recovers every failed pipeline
// (unacknowledged packets resent, bad node dropped, optional replacement
// filled by TRANSFER_BLOCK from a survivor, new generation stamp,
// PIPELINE_SETUP_STREAMING_RECOVERY), then resumes.
//
// It leaves to others: chopping bytes into packets (internal/client's
// FileWriter), the wire encoding (internal/datatransfer), placement
// (namenode), Complete and leases (internal/client).
//
// Memory is bounded: the data queue holds a few packets, a classic
// pipeline at most Window packets, a multi pipeline at most one block, and
// at most MaxOpen pipelines are open.
package pipeline
