package datatransfer

import (
	"encoding/binary"
	"fmt"
	"io"

	"smarth/internal/rpc/dfspb"
)

// AckKind tells a pipeline ack from a FIRST_NODE_FINISH_ACK.
type AckKind uint8

const (
	// AckPipeline acknowledges one packet on behalf of the acking node and
	// everything downstream of it.
	AckPipeline AckKind = 0
	// AckFirstNodeFinish (FNFA, SMARTH) tells a multi-pipeline client that
	// the first datanode has stored every packet of the block.
	AckFirstNodeFinish AckKind = 1
)

func (k AckKind) String() string {
	switch k {
	case AckPipeline:
		return "PIPELINE_ACK"
	case AckFirstNodeFinish:
		return "FIRST_NODE_FINISH_ACK"
	}
	return fmt.Sprintf("ack(%d)", uint8(k))
}

// maxAckStatuses is the most statuses an ack can carry (n is one byte).
const maxAckStatuses = 255

// Ack is one ack on a write connection.
type Ack struct {
	Kind  AckKind
	Seqno int64
	// Statuses: [0] is the acking node's own, [1:] its downstream nodes' in
	// pipeline order.
	Statuses []dfspb.OpStatus
}

// FirstFailed returns the pipeline index of the first non-success status
// relative to the acking node, or -1 if every node succeeded.
func (a Ack) FirstFailed() int {
	for i, s := range a.Statuses {
		if s != dfspb.OpStatus_OP_STATUS_SUCCESS {
			return i
		}
	}
	return -1
}

// Append appends the encoding of a to b.
func (a Ack) Append(b []byte) []byte {
	b = append(b, byte(a.Kind))
	b = binary.BigEndian.AppendUint64(b, uint64(a.Seqno))
	b = append(b, byte(len(a.Statuses)))
	for _, s := range a.Statuses {
		b = append(b, byte(s))
	}
	return b
}

// WriteAck writes a with one Write call.
func WriteAck(w io.Writer, a Ack) error {
	if len(a.Statuses) == 0 || len(a.Statuses) > maxAckStatuses {
		return fmt.Errorf("datatransfer: ack with %d statuses", len(a.Statuses))
	}
	var buf [10 + maxAckStatuses]byte
	_, err := w.Write(a.Append(buf[:0]))
	return err
}

// ReadAck reads and validates one ack.
func ReadAck(r io.Reader) (Ack, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return Ack{}, err
	}
	a := Ack{Kind: AckKind(pre[0]), Seqno: int64(binary.BigEndian.Uint64(pre[1:9]))}
	n := int(pre[9])
	switch {
	case a.Kind != AckPipeline && a.Kind != AckFirstNodeFinish:
		return Ack{}, fmt.Errorf("%w: unknown ack kind %d", ErrProtocol, pre[0])
	case n == 0:
		return Ack{}, fmt.Errorf("%w: ack without statuses", ErrProtocol)
	case a.Kind == AckFirstNodeFinish && (n != 1 || a.Seqno < 0):
		return Ack{}, fmt.Errorf("%w: FNFA with %d statuses, seqno %d", ErrProtocol, n, a.Seqno)
	case a.Seqno < HeartbeatSeqno:
		return Ack{}, fmt.Errorf("%w: ack seqno %d", ErrProtocol, a.Seqno)
	}
	var st [maxAckStatuses]byte
	if _, err := io.ReadFull(r, st[:n]); err != nil {
		return Ack{}, unexpectedEOF(err)
	}
	a.Statuses = make([]dfspb.OpStatus, n)
	for i, s := range st[:n] {
		a.Statuses[i] = dfspb.OpStatus(s)
	}
	return a, nil
}
