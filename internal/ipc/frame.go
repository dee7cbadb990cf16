package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Preface opens every connection, client to server: the mux routes on its
// first four bytes (an HTTP/2 client starts with "PRI "), the server checks
// all of it, so a wrong or older protocol is refused before any call.
const Preface = "SMIPC/1\n"

// ALPN is the TLS application protocol of this transport, offered next to
// gRPC's "h2" on the namenode's one RPC port.
const ALPN = "smarth-ipc/1"

// Frame kinds.
const (
	kindCall  = 1
	kindReply = 2
	// kindGoAway (server to client, no body beyond the kind): the server
	// is stopping; it answers the calls it has read and every call sent
	// until the client closes its side, then closes. The client sends
	// nothing more on the connection, so no call is left unanswered
	// and unapplied: new calls go to a new connection (gRPC's GOAWAY).
	kindGoAway = 3
	// kindReplyState is a reply that also carries the server's state id
	// (after the call id): what the server's replicated state had
	// reached when it answered (HDFS's RpcResponseHeaderProto.stateId).
	// A server sends it only for a call whose metadata has StateKey, so
	// a client from before it never sees one.
	kindReplyState = 4
)

// StateKey is the call metadata key of a client's state id: the highest
// state id it has seen in replies of the namenodes of its group
// (decimal). A call that carries it is answered with kindReplyState when
// the server has ServerOptions.ReplyState; a namenode standby serving
// observer reads first waits until its own state has reached it, so that
// a client reads its own writes (HDFS's AlignmentContext).
const StateKey = "smarth-state-id"

// Limits on what a peer may make us allocate. The frame length is checked
// against them before anything is allocated for the frame.
const (
	// DefaultMaxMessage is the largest request or reply payload:
	// the namenode's gRPC limit, sized for full block reports.
	DefaultMaxMessage = 256 << 20
	// MaxHeader bounds a frame's fields other than the payload: the
	// method name, the metadata, a status message.
	MaxHeader = 64 << 10
	// MaxMethod bounds a method name.
	MaxMethod = 512
	// MaxMetadata bounds the number of metadata entries of a call.
	MaxMetadata = 64
	// maxTimeout bounds a call's timeout (about 3 years): larger values
	// would overflow time.Duration.
	maxTimeout = uint64(1<<63-1) / uint64(time.Microsecond)
)

var errShort = errors.New("truncated frame")

// A frame on the wire is a 4-byte big-endian body length, then the body.
//
// Call body: kind (1 byte) | call id | timeout in µs (0: none) |
// method | metadata count | (key, value)... | payload
// Reply body: kind (1 byte) | call id | status code | status message | payload
// Reply with state: kind (1 byte) | call id | state id | status code | ...
//
// Numbers are unsigned varints, strings and keys a varint length then the
// bytes, and the payload (a protobuf message) runs to the end of the body.

// callHeader is a decoded call frame. method and mdRaw alias the frame.
type callHeader struct {
	id      uint64
	timeout time.Duration
	method  []byte
	mdRaw   []byte // the metadata section, count included (a cache key)
	payload []byte
}

// replyHeader is a decoded reply frame; msg and payload alias the frame.
type replyHeader struct {
	id       uint64
	state    uint64 // the server's state id (hasState)
	hasState bool   // a kindReplyState reply
	code     codes.Code
	msg      []byte
	payload  []byte
}

// readFrame reads one frame body of at most max bytes. Small bodies come
// from the buffer pool; a large one grows as its bytes actually arrive, so
// a length prefix alone never makes us allocate it.
func readFrame(r io.Reader, max int) (*[]byte, error) {
	var lenb [4]byte
	if _, err := io.ReadFull(r, lenb[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(lenb[:]))
	if n > max {
		return nil, &oversizeError{n: n, max: max}
	}
	if n == 0 {
		return nil, errors.New("empty frame")
	}
	if n <= bigFrame {
		b := getBuf(n)
		*b = (*b)[:n]
		if _, err := io.ReadFull(r, *b); err != nil {
			putBuf(b)
			return nil, noEOF(err)
		}
		return b, nil
	}
	buf := make([]byte, 0, bigFrame)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow geometrically
		}
		end := min(cap(buf), n)
		m, err := io.ReadFull(r, buf[len(buf):end])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, noEOF(err)
		}
	}
	return &buf, nil
}

// oversizeError is a frame longer than the reader's limit; its body has
// not been read.
type oversizeError struct{ n, max int }

func (e *oversizeError) Error() string {
	return fmt.Sprintf("frame of %d bytes exceeds the limit of %d", e.n, e.max)
}

// skipOversize reads the call id at the start of an oversize frame's body
// and discards the rest without keeping it, so that the one call can be
// failed with a clear error and the connection kept.
func skipOversize(r io.Reader, e *oversizeError) (uint64, error) {
	var head [1 + binary.MaxVarintLen64]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, noEOF(err)
	}
	id, k := binary.Uvarint(head[1:])
	if k <= 0 {
		return 0, errors.New("oversize frame with a malformed call id")
	}
	if _, err := io.CopyN(io.Discard, r, int64(e.n-len(head))); err != nil {
		return 0, noEOF(err)
	}
	return id, nil
}

// noEOF: an EOF inside a frame is a truncated frame, not a clean close.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decodeCall parses a call frame's body.
func decodeCall(b []byte) (callHeader, error) {
	var h callHeader
	d := decoder{b: b}
	if k := d.byte(); k != kindCall {
		if d.err != nil {
			return h, d.err
		}
		return h, fmt.Errorf("frame kind %d, want a call", k)
	}
	h.id = d.uvarint()
	t := d.uvarint()
	if t > maxTimeout {
		return h, fmt.Errorf("timeout %d µs out of range", t)
	}
	h.timeout = time.Duration(t) * time.Microsecond
	h.method = d.bytes(MaxMethod, "method name")
	mdStart := d.off
	n := d.uvarint()
	if n > MaxMetadata {
		return h, fmt.Errorf("%d metadata entries, more than %d", n, MaxMetadata)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		d.bytes(MaxHeader, "metadata key")
		d.bytes(MaxHeader, "metadata value")
	}
	if d.err != nil {
		return h, d.err
	}
	if d.off > MaxHeader {
		return h, fmt.Errorf("call header of %d bytes exceeds the limit of %d", d.off, MaxHeader)
	}
	h.mdRaw = b[mdStart:d.off]
	h.payload = b[d.off:]
	return h, nil
}

// decodeMD turns a metadata section (bounded by decodeCall) into
// metadata.MD. Keys and values must pass gRPC's own checks (validPair), so
// a handler sees over this transport only metadata it could have got over
// gRPC; the error is a status error with the code a gRPC caller gets.
func decodeMD(raw []byte) (metadata.MD, error) {
	md, _, _, err := decodeMDReusing(raw, nil, nil)
	return md, err
}

// pair is one metadata key and value.
type pair struct{ k, v string }

// decodeMDReusing is decodeMD taking the strings of a pair equal to one
// in known (pairs decoded before) instead of copying the bytes again, and
// returning the pairs as decoded (appended to pairs[:0]) and how many were
// not in known.
func decodeMDReusing(raw []byte, known func(k, v []byte) (pair, bool), pairs []pair) (metadata.MD, []pair, int, error) {
	d := decoder{b: raw}
	n := d.uvarint()
	md := make(metadata.MD, n)
	pairs = pairs[:0]
	fresh := 0
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.bytes(MaxHeader, "metadata key")
		v := d.bytes(MaxHeader, "metadata value")
		if d.err == nil {
			if err := validPair(k, v); err != nil {
				return nil, nil, 0, err
			}
			p, ok := pair{}, false
			if known != nil {
				p, ok = known(k, v)
			}
			if !ok {
				p = pair{string(k), string(v)}
				fresh++
			}
			md[p.k] = append(md[p.k], p.v)
			if known != nil {
				pairs = append(pairs, p)
			}
		}
	}
	return md, pairs, fresh, d.err
}

// validPair applies grpc-go's metadata rules (internal/metadata's
// ValidatePair, which a gRPC client applies before sending and HTTP/2
// enforces on the server): a key is one or more of [0-9a-z-_.], and
// unless it ends in "-bin" its values are printable ASCII (0x20-0x7E).
// gRPC fails such a call with Internal and these messages. Without the
// check a key such as "\u017fmarth-user" reached handlers, and
// metadata.ValueFromIncomingContext (which folds Unicode case) found it
// as "smarth-user".
func validPair(k, v []byte) error {
	if len(k) == 0 {
		return status.Error(codes.Internal, "there is an empty key in the header")
	}
	for _, c := range k {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return status.Errorf(codes.Internal, "header key %q contains illegal characters not in [0-9a-z-_.]", k)
		}
	}
	if len(k) >= 4 && string(k[len(k)-4:]) == "-bin" {
		return nil
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e {
			return status.Errorf(codes.Internal, "header key %q contains value with non-printable ASCII characters", k)
		}
	}
	return nil
}

func lower(k []byte) string {
	for _, c := range k {
		if 'A' <= c && c <= 'Z' {
			b := make([]byte, len(k))
			for i, c := range k {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b[i] = c
			}
			return string(b)
		}
	}
	return string(k)
}

// decodeReply parses a reply frame's body.
func decodeReply(b []byte) (replyHeader, error) {
	var h replyHeader
	d := decoder{b: b}
	switch k := d.byte(); {
	case d.err != nil:
		return h, d.err
	case k == kindReplyState:
		h.hasState = true
	case k != kindReply:
		return h, fmt.Errorf("frame kind %d, want a reply", k)
	}
	h.id = d.uvarint()
	if h.hasState {
		h.state = d.uvarint()
	}
	c := d.uvarint()
	if c > 0xffff {
		return h, fmt.Errorf("status code %d out of range", c)
	}
	h.code = codes.Code(c)
	h.msg = d.bytes(MaxHeader, "status message")
	if d.err != nil {
		return h, d.err
	}
	h.payload = b[d.off:]
	return h, nil
}

type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.err = errShort
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		if n == 0 {
			d.err = errShort
		} else {
			d.err = errors.New("varint overflows 64 bits")
		}
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) bytes(max int, what string) []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(max) {
		d.err = fmt.Errorf("%s of %d bytes exceeds the limit of %d", what, n, max)
		return nil
	}
	if uint64(len(d.b)-d.off) < n {
		d.err = errShort
		return nil
	}
	v := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return v
}

// Header is a call's metadata encoded once: a caller sending the same
// metadata on every call (a client's identity) encodes it once rather
// than per call, and the server recognises the identical bytes.
type Header struct {
	raw []byte
	err error // metadata gRPC would refuse: calls with it fail at once
}

// NewHeader encodes md, keys lower-cased (as metadata.Pairs does) and
// sorted so that equal metadata always encodes to equal bytes. Metadata
// that gRPC would refuse (see validPair) makes every call with the
// header fail at the caller with gRPC's Internal status, before sending.
func NewHeader(md metadata.MD) Header {
	keys := make([]string, 0, len(md))
	n := 0
	for k, vs := range md {
		keys = append(keys, k)
		n += len(vs)
	}
	sort.Strings(keys)
	b := binary.AppendUvarint(nil, uint64(n))
	for _, k := range keys {
		lk := lower([]byte(k))
		for _, v := range md[k] {
			if err := validPair([]byte(lk), []byte(v)); err != nil {
				return Header{err: err}
			}
			b = appendString(b, lk)
			b = appendString(b, v)
		}
	}
	return Header{raw: b}
}

// With is h and one more pair: a value that changes per call (a call's
// ids) beside metadata encoded once. Keys must be lower case; a pair gRPC
// would refuse makes calls with the header fail, as NewHeader's do.
func (h Header) With(k, v string) Header {
	if h.err != nil {
		return h
	}
	if err := validPair([]byte(k), []byte(v)); err != nil {
		return Header{err: err}
	}
	n, m := binary.Uvarint(h.raw) // 0, 0 for an empty header
	b := make([]byte, 0, len(h.raw)+len(k)+len(v)+8)
	b = binary.AppendUvarint(b, n+1)
	b = append(b, h.raw[m:]...)
	b = appendString(b, k)
	return Header{raw: appendString(b, v)}
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendCallHeader starts a call frame (length left to fill) in b.
func appendCallHeader(b []byte, id uint64, timeout time.Duration, method string, h Header) []byte {
	b = append(b, 0, 0, 0, 0, kindCall)
	b = binary.AppendUvarint(b, id)
	// Round up: a timeout under 1 µs must not encode as 0, "no deadline".
	b = binary.AppendUvarint(b, uint64((max(timeout, 0)+time.Microsecond-1)/time.Microsecond))
	b = appendString(b, method)
	if len(h.raw) == 0 {
		return append(b, 0)
	}
	return append(b, h.raw...)
}

// appendReplyHeader starts a reply frame (length left to fill) in b,
// with the server's state id when st is non-nil.
func appendReplyHeader(b []byte, id uint64, st *uint64, code codes.Code, msg string) []byte {
	if st == nil {
		b = append(b, 0, 0, 0, 0, kindReply)
		b = binary.AppendUvarint(b, id)
	} else {
		b = append(b, 0, 0, 0, 0, kindReplyState)
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, *st)
	}
	b = binary.AppendUvarint(b, uint64(code))
	if len(msg) > MaxHeader-64 {
		msg = msg[:MaxHeader-64] // a peer would refuse the whole reply
	}
	return appendString(b, msg)
}

// finishFrame fills in the length of the frame in b.
func finishFrame(b []byte) {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
}

// bigFrame: frames up to this size use pooled buffers; larger ones (block
// reports, big listings) are allocated as they arrive and dropped after.
const bigFrame = 64 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getBuf(n int) *[]byte {
	b := bufPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, 0, n)
	}
	*b = (*b)[:0]
	return b
}

func putBuf(b *[]byte) {
	if b == nil || cap(*b) > bigFrame {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
