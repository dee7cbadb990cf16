package datatransfer

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"smarth/internal/rpc/dfspb"
)

// Short-circuit local reads (HDFS's REQUEST_SHORT_CIRCUIT_FDS). A client
// on a datanode's host asks the datanode, over the datanode's unix domain
// socket rather than its data port, for open descriptors of a replica's
// block and meta files, and then reads the replica itself: no bytes cross
// a socket. The request has the data port's framing (version, opcode,
// length, protobuf header); the answer is an OpResponse, and on success
// one byte follows with the two descriptors attached (SendFDs).

// OpRequestShortCircuitFds is opcode 87, as HDFS numbers it. It is served
// on the unix socket only: the data port does not know it.
const OpRequestShortCircuitFds Op = 87

// MaxShortCircuitOpLen bounds a ShortCircuitFdsOp header. A block (three
// varints), a read token (an identifier with the user's name, at most
// about 1.1 KiB, and a 32-byte signature) and a client name fit in a
// quarter of it. Every local user may connect to the socket, so a longer
// announcement is refused before anything is allocated for it.
const MaxShortCircuitOpLen = 4 << 10

// WriteShortCircuitOp writes a REQUEST_SHORT_CIRCUIT_FDS request with one
// Write call.
func WriteShortCircuitOp(w io.Writer, op *dfspb.ShortCircuitFdsOp) error {
	b, err := appendFramed(make([]byte, 0, 256), OpRequestShortCircuitFds, op, MaxShortCircuitOpLen)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ReadShortCircuitOp reads one REQUEST_SHORT_CIRCUIT_FDS request. Any
// other opcode, another version or a header longer than
// MaxShortCircuitOpLen is an ErrProtocol error, found from the 7-byte
// prefix before the header's buffer exists.
func ReadShortCircuitOp(r io.Reader) (*dfspb.ShortCircuitFdsOp, error) {
	op, n, err := readPrefix(r)
	if err != nil {
		return nil, err
	}
	if op != OpRequestShortCircuitFds {
		return nil, fmt.Errorf("%w: %s on the domain socket, which serves only %s", ErrProtocol, op, OpRequestShortCircuitFds)
	}
	if n > MaxShortCircuitOpLen {
		return nil, fmt.Errorf("%w: %s header length %d exceeds %d", ErrProtocol, OpRequestShortCircuitFds, n, MaxShortCircuitOpLen)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpectedEOF(err)
	}
	req := &dfspb.ShortCircuitFdsOp{}
	if err := proto.Unmarshal(buf, req); err != nil {
		return nil, fmt.Errorf("%w: %s header: %v", ErrProtocol, OpRequestShortCircuitFds, err)
	}
	return req, nil
}

// PortToken in a domain socket path (HDFS's dfs.domain.socket.path)
// stands for the datanode's data port, so that datanodes sharing a host
// get a socket each and a client finds the one of the datanode it reads
// from.
const PortToken = "_PORT"

// SocketPath is a domain socket path template with PortToken replaced by
// dataPort.
func SocketPath(template string, dataPort int) string {
	return strings.ReplaceAll(template, PortToken, strconv.Itoa(dataPort))
}

// A short-circuit reader reads the replica's meta file itself, so its
// header is part of this protocol: uint16 version 1, uint8 checksum type
// 1 (CRC32C), uint32 bytes per checksum, then one big-endian CRC32C per
// chunk (the datanode's store writes it).
const (
	MetaHeaderLen = 7
	metaVersion   = 1
	metaCRC32C    = 1
)

// ParseMetaHeader returns the bytes per checksum a meta file's header
// gives, or an error naming what is wrong with it.
func ParseMetaHeader(b []byte) (int, error) {
	if len(b) < MetaHeaderLen {
		return 0, fmt.Errorf("meta header is %d bytes, want %d", len(b), MetaHeaderLen)
	}
	if v := binary.BigEndian.Uint16(b[0:]); v != metaVersion {
		return 0, fmt.Errorf("meta file version %d, expected %d", v, metaVersion)
	}
	if b[2] != metaCRC32C {
		return 0, fmt.Errorf("meta file checksum type %d, expected CRC32C", b[2])
	}
	bpc := int(binary.BigEndian.Uint32(b[3:]))
	if bpc <= 0 || bpc > MaxBytesPerChecksum {
		return 0, fmt.Errorf("meta file bytes per checksum %d", bpc)
	}
	return bpc, nil
}
