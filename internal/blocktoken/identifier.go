package blocktoken

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Mode is a set of access modes, HDFS's BlockTokenIdentifier.AccessMode.
type Mode uint8

const (
	// Read: READ_BLOCK.
	Read Mode = 1 << iota
	// Write: WRITE_BLOCK creating a replica or recovering the writer's own
	// pipeline under the generation stamp the token names.
	Write
	// Copy: copying a replica to another datanode (TRANSFER_BLOCK,
	// WRITE_BLOCK in TRANSFER_RBW/TRANSFER_FINALIZED), which may replace a
	// stale finalized replica on the receiver.
	Copy
	// Replace: moving a replica between datanodes (a balancer's
	// REPLACE_BLOCK); no op uses it yet.
	Replace
)

func (m Mode) String() string {
	var parts []string
	for _, x := range []struct {
		m    Mode
		name string
	}{{Read, "READ"}, {Write, "WRITE"}, {Copy, "COPY"}, {Replace, "REPLACE"}} {
		if m&x.m != 0 {
			parts = append(parts, x.name)
		}
	}
	if len(parts) == 0 {
		return "NONE"
	}
	return strings.Join(parts, "|")
}

// Identifier is what a token asserts; its encoding is what the password
// signs.
type Identifier struct {
	KeyID        uint32
	ExpiryUnixMs int64
	User         string
	BlockID      uint64
	GS           uint64
	Modes        Mode
	// Targets are the data addresses ("ip:port") a datanode may dial on
	// behalf of this token's holder: the rest of a write pipeline, or the
	// target of a copy. A client cannot make a datanode connect anywhere
	// the namenode did not name.
	Targets []string
}

// Limits of a decoded identifier, so that a hostile token cannot make a
// datanode allocate much: a pipeline is at most a few dozen nodes.
const (
	identVersion  = 1
	maxTargets    = 64
	maxStringLen  = 1024
	maxIdentifier = 8 << 10
)

// ErrMalformed is returned for identifier bytes that do not decode.
var ErrMalformed = errors.New("malformed block token identifier")

// Marshal encodes the identifier: a version byte, fixed-width fields,
// then length-prefixed strings. Fixed and canonical, so that the bytes
// signed are the bytes checked.
func (id Identifier) Marshal() []byte {
	b := make([]byte, 0, 64+len(id.User)+16*len(id.Targets))
	b = append(b, identVersion)
	b = binary.BigEndian.AppendUint32(b, id.KeyID)
	b = binary.BigEndian.AppendUint64(b, uint64(id.ExpiryUnixMs))
	b = binary.BigEndian.AppendUint64(b, id.BlockID)
	b = binary.BigEndian.AppendUint64(b, id.GS)
	b = append(b, byte(id.Modes))
	b = appendString(b, id.User)
	b = binary.BigEndian.AppendUint16(b, uint16(len(id.Targets)))
	for _, t := range id.Targets {
		b = appendString(b, t)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// Unmarshal decodes an identifier, refusing anything beyond the limits
// before allocating for it.
func Unmarshal(b []byte) (Identifier, error) {
	var id Identifier
	if len(b) > maxIdentifier {
		return id, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, len(b), maxIdentifier)
	}
	const fixed = 1 + 4 + 8 + 8 + 8 + 1
	if len(b) < fixed {
		return id, fmt.Errorf("%w: %d bytes, need at least %d", ErrMalformed, len(b), fixed)
	}
	if b[0] != identVersion {
		return id, fmt.Errorf("%w: version %d, this node reads %d", ErrMalformed, b[0], identVersion)
	}
	id.KeyID = binary.BigEndian.Uint32(b[1:])
	id.ExpiryUnixMs = int64(binary.BigEndian.Uint64(b[5:]))
	id.BlockID = binary.BigEndian.Uint64(b[13:])
	id.GS = binary.BigEndian.Uint64(b[21:])
	id.Modes = Mode(b[29])
	rest := b[fixed:]
	var err error
	if id.User, rest, err = readString(rest); err != nil {
		return id, err
	}
	if len(rest) < 2 {
		return id, fmt.Errorf("%w: truncated target count", ErrMalformed)
	}
	n := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if n > maxTargets {
		return id, fmt.Errorf("%w: %d targets, limit %d", ErrMalformed, n, maxTargets)
	}
	for range n {
		var t string
		if t, rest, err = readString(rest); err != nil {
			return id, err
		}
		id.Targets = append(id.Targets, t)
	}
	if len(rest) != 0 {
		return id, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(rest))
	}
	return id, nil
}

func readString(b []byte) (string, []byte, error) {
	if len(b) < 2 {
		return "", nil, fmt.Errorf("%w: truncated string length", ErrMalformed)
	}
	n := int(binary.BigEndian.Uint16(b))
	if n > maxStringLen || len(b) < 2+n {
		return "", nil, fmt.Errorf("%w: string of %d bytes (have %d, limit %d)", ErrMalformed, n, len(b)-2, maxStringLen)
	}
	return string(b[2 : 2+n]), b[2+n:], nil
}
