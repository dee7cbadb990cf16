package datatransfer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"smarth/internal/rpc/dfspb"
)

// Version is the data-transfer protocol version carried by every op request.
const Version uint16 = 1

// MaxHeaderLen bounds an op request's protobuf header and an OpResponse.
const MaxHeaderLen = 1 << 20

// ErrProtocol is wrapped by every decoding error: the peer sent bytes that do
// not follow this protocol. The connection cannot be trusted afterwards.
var ErrProtocol = errors.New("malformed data-transfer message")

// Op is an op request's opcode.
type Op uint8

// The opcodes, numbered as in HDFS.
const (
	OpWriteBlock    Op = 80
	OpReadBlock     Op = 81
	OpBlockChecksum Op = 85
	OpTransferBlock Op = 86
)

func (o Op) String() string {
	switch o {
	case OpWriteBlock:
		return "WRITE_BLOCK"
	case OpReadBlock:
		return "READ_BLOCK"
	case OpTransferBlock:
		return "TRANSFER_BLOCK"
	case OpBlockChecksum:
		return "BLOCK_CHECKSUM"
	case OpRequestShortCircuitFds:
		return "REQUEST_SHORT_CIRCUIT_FDS"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

const opPrefixLen = 2 + 1 + 4

// AppendOp appends the encoding of an op request to b. The opcode follows from
// msg's type: *dfspb.WriteBlockOp, *dfspb.ReadBlockOp, *dfspb.TransferBlockOp
// or *dfspb.BlockChecksumOp.
func AppendOp(b []byte, msg proto.Message) ([]byte, error) {
	var op Op
	switch msg.(type) {
	case *dfspb.WriteBlockOp:
		op = OpWriteBlock
	case *dfspb.ReadBlockOp:
		op = OpReadBlock
	case *dfspb.TransferBlockOp:
		op = OpTransferBlock
	case *dfspb.BlockChecksumOp:
		op = OpBlockChecksum
	default:
		return b, fmt.Errorf("datatransfer: no opcode for message %T", msg)
	}
	return appendFramed(b, op, msg, MaxHeaderLen)
}

// appendFramed appends an op request: version, opcode, the header's
// length (at most limit) and the header.
func appendFramed(b []byte, op Op, msg proto.Message, limit int) ([]byte, error) {
	size := proto.Size(msg)
	if size > limit {
		return b, fmt.Errorf("datatransfer: %s header is %d bytes, limit %d", op, size, limit)
	}
	b = binary.BigEndian.AppendUint16(b, Version)
	b = append(b, byte(op))
	b = binary.BigEndian.AppendUint32(b, uint32(size))
	return proto.MarshalOptions{}.MarshalAppend(b, msg)
}

// readPrefix reads an op request's prefix: the version, which must be
// this one, the opcode and the header's length.
func readPrefix(r io.Reader) (Op, uint32, error) {
	var pre [opPrefixLen]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return 0, 0, err
	}
	if v := binary.BigEndian.Uint16(pre[0:2]); v != Version {
		return 0, 0, fmt.Errorf("%w: protocol version %d, this node speaks %d", ErrProtocol, v, Version)
	}
	return Op(pre[2]), binary.BigEndian.Uint32(pre[3:7]), nil
}

// WriteOp writes an op request with one Write call.
func WriteOp(w io.Writer, msg proto.Message) error {
	b, err := AppendOp(make([]byte, 0, 256), msg)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ReadOp reads one op request and returns its opcode and decoded header: a
// *dfspb.WriteBlockOp, *dfspb.ReadBlockOp, *dfspb.TransferBlockOp or
// *dfspb.BlockChecksumOp.
func ReadOp(r io.Reader) (Op, proto.Message, error) {
	op, n, err := readPrefix(r)
	if err != nil {
		return 0, nil, err
	}
	var msg proto.Message
	switch op {
	case OpWriteBlock:
		msg = &dfspb.WriteBlockOp{}
	case OpReadBlock:
		msg = &dfspb.ReadBlockOp{}
	case OpTransferBlock:
		msg = &dfspb.TransferBlockOp{}
	case OpBlockChecksum:
		msg = &dfspb.BlockChecksumOp{}
	default:
		return op, nil, fmt.Errorf("%w: unknown opcode %d", ErrProtocol, uint8(op))
	}
	if n > MaxHeaderLen {
		return op, nil, fmt.Errorf("%w: %s header length %d exceeds %d", ErrProtocol, op, n, MaxHeaderLen)
	}
	buf, err := readBody(r, n)
	if err != nil {
		return op, nil, err
	}
	if err := proto.Unmarshal(buf, msg); err != nil {
		return op, nil, fmt.Errorf("%w: %s header: %v", ErrProtocol, op, err)
	}
	return op, msg, nil
}

// WriteResponse writes an OpResponse with one Write call.
func WriteResponse(w io.Writer, resp *dfspb.OpResponse) error {
	size := proto.Size(resp)
	if size > MaxHeaderLen {
		return fmt.Errorf("datatransfer: response is %d bytes, limit %d", size, MaxHeaderLen)
	}
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+size), uint32(size))
	b, err := proto.MarshalOptions{}.MarshalAppend(b, resp)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ReadResponse reads one OpResponse. A non-success status is not an error
// here; see ResponseError.
func ReadResponse(r io.Reader) (*dfspb.OpResponse, error) {
	var pre [4]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(pre[:])
	if n > MaxHeaderLen {
		return nil, fmt.Errorf("%w: response length %d exceeds %d", ErrProtocol, n, MaxHeaderLen)
	}
	buf, err := readBody(r, n)
	if err != nil {
		return nil, err
	}
	resp := &dfspb.OpResponse{}
	if err := proto.Unmarshal(buf, resp); err != nil {
		return nil, fmt.Errorf("%w: response: %v", ErrProtocol, err)
	}
	return resp, nil
}

// StatusError is a datanode's refusal or failure as reported in an
// OpResponse (or an ack status).
type StatusError struct {
	Status       dfspb.OpStatus
	Message      string
	FirstBadLink string // "ip:port" of the pipeline node that failed, if known
}

func (e *StatusError) Error() string {
	s := StatusText(e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.FirstBadLink != "" {
		s += " (first bad link " + e.FirstBadLink + ")"
	}
	return s
}

// ResponseError returns nil for a successful response, else a *StatusError.
func ResponseError(resp *dfspb.OpResponse) error {
	if resp.GetStatus() == dfspb.OpStatus_OP_STATUS_SUCCESS {
		return nil
	}
	return &StatusError{Status: resp.GetStatus(), Message: resp.GetMessage(), FirstBadLink: resp.GetFirstBadLink()}
}

// StatusText is a short human description of an OpStatus.
func StatusText(s dfspb.OpStatus) string {
	switch s {
	case dfspb.OpStatus_OP_STATUS_SUCCESS:
		return "success"
	case dfspb.OpStatus_OP_STATUS_ERROR:
		return "datanode error"
	case dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM:
		return "checksum mismatch"
	case dfspb.OpStatus_OP_STATUS_ERROR_INVALID:
		return "invalid request"
	case dfspb.OpStatus_OP_STATUS_ERROR_EXISTS:
		return "replica already exists"
	case dfspb.OpStatus_OP_STATUS_ERROR_ACCESS_TOKEN:
		return "access token rejected"
	case dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND:
		return "block not found"
	case dfspb.OpStatus_OP_STATUS_ERROR_BUSY:
		return "datanode busy"
	}
	return fmt.Sprintf("status %d", int32(s))
}

// smallBody is what readBody allocates before any byte of a body has
// arrived: real op headers and responses are a few hundred bytes.
const smallBody = 1 << 10

// readBody reads a message body of n bytes (n <= MaxHeaderLen). A body
// beyond smallBody gets a buffer that grows as its bytes arrive, never
// the announced length up front: a peer that announces 1 MiB and sends 8
// bytes costs 512 bytes, not a megabyte per connection (issue 23, hole
// 7: 3,000 such connections held 1.5 GB of a datanode).
func readBody(r io.Reader, n uint32) ([]byte, error) {
	if n <= smallBody {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, unexpectedEOF(err)
		}
		return buf, nil
	}
	var b bytes.Buffer // ReadFrom grows it 512 bytes (bytes.MinRead) at a time, doubling
	if _, err := b.ReadFrom(io.LimitReader(r, int64(n))); err != nil {
		return nil, err
	}
	if b.Len() < int(n) {
		return nil, io.ErrUnexpectedEOF
	}
	return b.Bytes(), nil
}

// unexpectedEOF turns a clean EOF in the middle of a message into
// io.ErrUnexpectedEOF: the peer hung up mid-message.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// WriteReadStatus sends the optional read status on a READ_BLOCK
// connection: OP_STATUS_ERROR_CHECKSUM after a checksum mismatch makes the
// datanode re-verify its replica at once.
func WriteReadStatus(w io.Writer, st dfspb.OpStatus) error {
	_, err := w.Write([]byte{byte(st)})
	return err
}
