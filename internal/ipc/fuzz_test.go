package ipc

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// FuzzDecode feeds arbitrary bytes to the frame reader and both frame
// decoders, as a server and a client read them off a connection. None may
// panic or allocate past the limits; whatever decodes must re-encode to
// the same call.
func FuzzDecode(f *testing.F) {
	call := appendCallHeader(nil, 3, 1500*time.Millisecond, "/smarth.dfs.ClientProtocol/Mkdirs",
		NewHeader(metadata.Pairs("smarth-user", "alice", "smarth-auth", "alice:bWFj")))
	call = append(call, 0x0a, 0x02, '/', 'a')
	finishFrame(call)
	reply := appendReplyHeader(nil, 3, nil, codes.NotFound, "no such file /a")
	finishFrame(reply)
	state := uint64(1 << 33)
	stateReply := appendReplyHeader(nil, 5, &state, codes.OK, "")
	stateReply = append(stateReply, 0x08, 0x01)
	finishFrame(stateReply)
	f.Add(call)
	f.Add(reply)
	f.Add(stateReply)
	// Metadata within the bounds but refused by gRPC's rules.
	bad := appendCallHeader(nil, 4, 0, "/m", Header{raw: []byte{1, 3, 'B', 'a', 'd', 1, '\n'}})
	finishFrame(bad)
	f.Add(bad)
	f.Add([]byte{0, 0, 0, 1, kindCall})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, kindCall, 1})
	f.Add(append([]byte{0, 0, 0, 12, kindCall, 1, 0, 0}, binary.AppendUvarint(nil, 1<<40)...))

	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			buf, err := readFrame(r, limit)
			if err != nil {
				if e, ok := err.(*oversizeError); ok {
					if e.n <= limit {
						t.Fatalf("oversize error for %d bytes under the limit", e.n)
					}
					skipOversize(r, e)
					continue
				}
				return
			}
			if len(*buf) > limit {
				t.Fatalf("frame of %d bytes read past the limit", len(*buf))
			}
			if h, err := decodeCall(*buf); err == nil {
				md, err := decodeMD(h.mdRaw)
				if err != nil {
					// Only gRPC's metadata rules may refuse what
					// decodeCall's bounds accepted, and as gRPC does.
					if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "key") {
						t.Fatalf("metadata accepted by decodeCall refused by decodeMD: %v", err)
					}
					putBuf(buf)
					continue
				}
				if len(md) > MaxMetadata {
					t.Fatalf("%d metadata keys", len(md))
				}
				// Re-encode: same id, method, metadata and payload.
				b := appendCallHeader(nil, h.id, h.timeout, string(h.method), NewHeader(md))
				b = append(b, h.payload...)
				finishFrame(b)
				h2, err := decodeCall(b[4:])
				if err != nil {
					t.Fatalf("re-encoded call does not decode: %v", err)
				}
				md2, _ := decodeMD(h2.mdRaw)
				if h2.id != h.id || h2.timeout != h.timeout || !bytes.Equal(h2.method, h.method) ||
					!bytes.Equal(h2.payload, h.payload) || !mdEqual(md, md2) {
					t.Fatalf("round trip changed the call: %+v -> %+v", h, h2)
				}
			}
			if h, err := decodeReply(*buf); err == nil {
				if len(h.msg) > MaxHeader {
					t.Fatalf("status message of %d bytes", len(h.msg))
				}
				// Re-encode: same id, state, status and payload (a
				// message near the limit is cut on encoding).
				var st *uint64
				if h.hasState {
					st = &h.state
				}
				b := appendReplyHeader(nil, h.id, st, h.code, string(h.msg))
				b = append(b, h.payload...)
				finishFrame(b)
				h2, err := decodeReply(b[4:])
				if err != nil {
					t.Fatalf("re-encoded reply does not decode: %v", err)
				}
				if h2.id != h.id || h2.hasState != h.hasState || h2.state != h.state || h2.code != h.code ||
					len(h.msg) <= MaxHeader-64 && !bytes.Equal(h2.msg, h.msg) || !bytes.Equal(h2.payload, h.payload) {
					t.Fatalf("round trip changed the reply: %+v -> %+v", h, h2)
				}
			}
			putBuf(buf)
		}
	})
}

func mdEqual(a, b metadata.MD) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}
