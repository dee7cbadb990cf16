// Package callid is the identity of one client call that a namenode may
// see more than once: the client's id (16 random bytes, made once per
// client) and the call's id (the client's counter, the same on every
// retry of the call), as Hadoop IPC's RpcRequestHeaderProto clientId and
// callId. The namenode's retry cache keys outcomes by them, so that a
// call repeated after its reply was lost (a failover, a broken
// connection) gets the first attempt's outcome instead of being applied
// twice (HDFS's RetryCache).
//
// Both transports carry the ids as one binary metadata entry (Key): gRPC
// sends it base64 in a "-bin" header, internal/ipc as raw bytes in its
// metadata section. Client and namenode use this one package so that the
// encoding cannot drift apart.
package callid

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc/metadata"
)

// Key is the metadata key of the ids ("-bin": binary-safe over gRPC).
const Key = "smarth-call-id-bin"

// ClientIDLen is the length of a client id (Hadoop's: a 16-byte UUID).
const ClientIDLen = 16

// ID is one call's identity.
type ID struct {
	Client [ClientIDLen]byte
	Call   uint64
}

func (id ID) String() string { return fmt.Sprintf("%s:%d", hex.EncodeToString(id.Client[:]), id.Call) }

// Encode is the metadata value: the client id, then the call id as an
// unsigned varint.
func (id ID) Encode() string {
	b := make([]byte, ClientIDLen, ClientIDLen+binary.MaxVarintLen64)
	copy(b, id.Client[:])
	return string(binary.AppendUvarint(b, id.Call))
}

// Parse decodes a metadata value written by Encode; anything else (a
// short client id, a bad or overlong varint, trailing bytes) is an error
// naming what is wrong. It reads network bytes: it must never panic.
func Parse(v string) (ID, error) {
	var id ID
	if len(v) < ClientIDLen+1 {
		return id, fmt.Errorf("%s: %d bytes; want a %d-byte client id and a call id", Key, len(v), ClientIDLen)
	}
	copy(id.Client[:], v[:ClientIDLen])
	call, n := binary.Uvarint([]byte(v[ClientIDLen:]))
	if n <= 0 {
		return ID{}, fmt.Errorf("%s: the call id after the client id is not a valid varint", Key)
	}
	if ClientIDLen+n != len(v) {
		return ID{}, fmt.Errorf("%s: %d bytes after the call id", Key, len(v)-ClientIDLen-n)
	}
	if n != len(binary.AppendUvarint(nil, call)) {
		// A padded varint: one call must have one encoding.
		return ID{}, fmt.Errorf("%s: the call id is not minimally encoded", Key)
	}
	id.Call = call
	return id, nil
}

// FromIncoming is the call's ids as the namenode received them: ok is
// false when the call carries none (an older client, a read). More than
// one value, or a malformed one, is an error: the caller refuses the call
// rather than running it without the protection it asked for.
func FromIncoming(ctx context.Context) (ID, bool, error) {
	vs := metadata.ValueFromIncomingContext(ctx, Key)
	switch len(vs) {
	case 0:
		return ID{}, false, nil
	case 1:
		id, err := Parse(vs[0])
		return id, err == nil, err
	default:
		return ID{}, false, fmt.Errorf("%s: %d values; a call has one", Key, len(vs))
	}
}

// Source makes the ids of one client: a random client id and a counter.
type Source struct {
	client [ClientIDLen]byte
	next   atomic.Uint64
}

// NewSource makes a client id from the system's random source.
func NewSource() *Source {
	s := &Source{}
	if _, err := rand.Read(s.client[:]); err != nil {
		panic(fmt.Sprintf("callid: no random bytes for a client id: %v", err)) // crypto/rand does not fail on Linux
	}
	return s
}

// Next is a new call's ids.
func (s *Source) Next() ID { return ID{Client: s.client, Call: s.next.Add(1)} }

type ctxKey struct{}

// With attaches a call's ids to ctx: every attempt of the call (another
// namenode, a reconnect) sends the same ids.
func With(ctx context.Context, id ID) context.Context { return context.WithValue(ctx, ctxKey{}, id) }

// From is the ids With attached.
func From(ctx context.Context) (ID, bool) {
	id, ok := ctx.Value(ctxKey{}).(ID)
	return id, ok
}
