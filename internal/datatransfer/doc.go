// Package datatransfer is the wire format of smarth's streaming data plane,
// the equivalent of HDFS's DataTransferProtocol: how block bytes move between
// a client and datanodes and along a write pipeline. The namenode never sees
// these bytes; the control plane is gRPC (internal/rpc/dfspb).
//
// It decides only encodings: op request framing, op responses, packets with
// CRC32C chunk checksums, and acks (including SMARTH's FIRST_NODE_FINISH_ACK,
// seed 000 section III). It does no dialing and holds no connection state;
// what a datanode or client does with a packet is left to internal/datanode
// and internal/client. Every decoder rejects malformed input with an error
// wrapping ErrProtocol and never allocates more than the limits below allow.
//
// All integers are big-endian.
//
// Op request (requester → datanode), see WriteOp / ReadOp:
//
//	uint16 version (=1) | uint8 opcode | uint32 header length L (≤ 1 MiB) | L bytes protobuf
//	opcodes: 80 WRITE_BLOCK (dfspb.WriteBlockOp), 81 READ_BLOCK (dfspb.ReadBlockOp),
//	         86 TRANSFER_BLOCK (dfspb.TransferBlockOp)
//
// Op response (datanode → requester), see WriteResponse / ReadResponse:
//
//	uint32 length (≤ 1 MiB) | dfspb.OpResponse
//
// Packet, see PacketHeader, Packet and PacketReader:
//
//	uint32 data length D (≤ 16 MiB) | int64 offset in block | int64 seqno (-1: heartbeat)
//	uint8 flags (bit0 last, bit1 sync, bit2 heartbeat) | uint32 bytes per checksum B (1..64 KiB)
//	ceil(D/B) × uint32 CRC32C (Castagnoli), one per B-byte chunk | D data bytes
//
// A write sends data packets with seqnos 0, 1, 2, ... and ends the block with
// a packet carrying FlagLast (normally empty). A read (READ_BLOCK) answers
// with an OpResponse whose chunk_offset is the offset of the first packet,
// then data packets (seqnos from 0) covering the requested range rounded out
// to whole chunks, and ends with an empty packet carrying FlagLast.
//
// Read status (optional, client → datanode on a read connection, at any
// time): one byte, a dfspb.OpStatus. OP_STATUS_ERROR_CHECKSUM tells the
// datanode that data it sent failed verification, so it re-verifies that
// replica at once (HDFS's ClientReadStatus); see WriteReadStatus. Datanodes
// never wait for it.
//
// Ack (downstream → upstream on a write connection), see Ack / ReadAck:
//
//	uint8 kind (0 pipeline ack, 1 FIRST_NODE_FINISH_ACK) | int64 seqno | uint8 n | n × uint8 status
//
// For a pipeline ack, status[0] is the acking node's own dfspb.OpStatus and
// status[1:] are its downstream nodes' in pipeline order. A FNFA has n = 1 and
// the seqno of the block's last packet.
//
// Buffers: packets live in pooled buffers laid out exactly as on the wire
// (header, checksums, data contiguous), so a datanode forwards a received
// packet downstream with one Write and a client fills the data region in
// place; call (*Packet).Release when done with one.
package datatransfer
