package datatransfer

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"
)

// Each fuzz target feeds arbitrary bytes to one decoder: it must return a
// value or an error, never panic, and what it accepts must re-encode to an
// equivalent value. Seeds live in testdata/fuzz/<FuzzName>.

func FuzzReadOp(f *testing.F) {
	f.Add([]byte{0, 1, 80, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 85, 0, 0, 0, 2, 0x1a, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, msg, err := ReadOp(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteOp(&buf, msg); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		_, again, err := ReadOp(&buf)
		if err != nil || !proto.Equal(msg, again) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzReadResponse(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		resp, err := ReadResponse(bytes.NewReader(b))
		if err != nil {
			return
		}
		_ = ResponseError(resp)
		var buf bytes.Buffer
		if err := WriteResponse(&buf, resp); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

func FuzzPacketReader(f *testing.F) {
	p := NewPacket(1000, 512)
	p.Append(bytes.Repeat([]byte{7}, 1000))
	p.Seal(0, 0, FlagLast)
	f.Add(bytes.Clone(p.Wire()))
	p.Release()
	f.Fuzz(func(t *testing.T, b []byte) {
		pr := NewPacketReader(bytes.NewReader(b))
		pr.MaxDataLen = 1 << 20 // keep the fuzzer's allocations small
		// Every claimed buffer must be given back by Release or by Next
		// failing after the claim (a truncated body).
		held := 0
		pr.Claim = func(n int) (func(), error) {
			held += n
			return func() { held -= n }, nil
		}
		for {
			p, err := pr.Next()
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrProtocol) {
					t.Fatalf("unexpected error type: %v", err)
				}
				if held != 0 {
					t.Fatalf("%d claimed bytes not given back after %v", held, err)
				}
				return
			}
			if p.Header.BytesPerChecksum < MinBytesPerChecksum {
				t.Fatalf("accepted %d-byte checksum chunks", p.Header.BytesPerChecksum)
			}
			_ = p.Verify()
			if len(p.Wire()) != PacketHeaderLen+p.Header.ChecksumLen()+int(p.Header.DataLen) {
				t.Fatalf("wire length %d for header %+v", len(p.Wire()), p.Header)
			}
			p.Release()
			if held != 0 {
				t.Fatalf("%d claimed bytes not given back by Release", held)
			}
		}
	})
}

func FuzzReadAck(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadAck(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteAck(&buf, a); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(buf.Bytes(), b[:buf.Len()]) {
			t.Fatalf("re-encoding differs")
		}
	})
}
