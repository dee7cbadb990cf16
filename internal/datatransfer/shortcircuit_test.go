package datatransfer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"smarth/internal/rpc/dfspb"
)

func TestShortCircuitOpRoundTrip(t *testing.T) {
	op := &dfspb.ShortCircuitFdsOp{Block: &dfspb.ExtendedBlock{BlockId: 7, GenerationStamp: 3, NumBytes: 1 << 26},
		Token: &dfspb.BlockToken{Identifier: bytes.Repeat([]byte{1}, 1200), Password: bytes.Repeat([]byte{2}, 32)}, ClientName: "c"}
	var buf bytes.Buffer
	if err := WriteShortCircuitOp(&buf, op); err != nil {
		t.Fatal(err)
	}
	got, err := ReadShortCircuitOp(&buf)
	if err != nil || !proto.Equal(got, op) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
}

// countingReader counts what the decoder took from the peer.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Every local user may write to a datanode's domain socket: a header
// longer than the bound, or another op, is refused from the 7-byte prefix,
// before a buffer for the header exists or a byte of it is read.
func TestReadShortCircuitOpBoundsTheHeader(t *testing.T) {
	prefix := func(op Op, n uint32) []byte {
		b := binary.BigEndian.AppendUint16(nil, Version)
		b = append(b, byte(op))
		return binary.BigEndian.AppendUint32(b, n)
	}
	for name, b := range map[string][]byte{
		"one byte over the bound": append(prefix(OpRequestShortCircuitFds, MaxShortCircuitOpLen+1), make([]byte, MaxShortCircuitOpLen+1)...),
		"a 4 GiB header":          append(prefix(OpRequestShortCircuitFds, 1<<32-1), make([]byte, 64)...),
		"READ_BLOCK":              append(prefix(OpReadBlock, 10), make([]byte, 10)...),
	} {
		r := &countingReader{r: bytes.NewReader(b)}
		_, err := ReadShortCircuitOp(r)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
		if r.n != opPrefixLen {
			t.Errorf("%s: read %d bytes, want only the %d-byte prefix", name, r.n, opPrefixLen)
		}
	}
}

// unixPair is a connected pair of unix stream sockets.
func unixPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// Two files pass as two descriptors of the same files. A peer that sends
// more than the receiver expects gets an error, and the receiver is left
// holding none of them.
func TestPassingDescriptors(t *testing.T) {
	dir := t.TempDir()
	var files []*os.File
	for i, s := range []string{"block bytes", "meta bytes", "third"} {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	c, s := unixPair(t)
	if err := SendFDs(s, files[0], files[1]); err != nil {
		t.Fatal(err)
	}
	got, err := ReceiveFDs(c, "data", "meta")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"block bytes", "meta bytes"} {
		b, err := io.ReadAll(io.NewSectionReader(got[i], 0, 100))
		if err != nil || string(b) != want {
			t.Errorf("descriptor %d reads %q (%v), want %q", i, b, err, want)
		}
		got[i].Close()
	}

	before := openFDs(t)
	if err := SendFDs(s, files...); err != nil {
		t.Fatal(err)
	}
	if got, err := ReceiveFDs(c, "data", "meta"); !errors.Is(err, ErrProtocol) {
		t.Errorf("three descriptors for two expected: %d files, %v; want a protocol error", len(got), err)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open after refusing them, %d before", after, before)
	}
	s.Close()
	if _, err := ReceiveFDs(c, "data", "meta"); err != io.ErrUnexpectedEOF {
		t.Errorf("after a hang-up: %v, want unexpected EOF", err)
	}
}

func TestParseMetaHeader(t *testing.T) {
	ok := []byte{0, 1, 1, 0, 0, 2, 0}
	if bpc, err := ParseMetaHeader(ok); err != nil || bpc != 512 {
		t.Fatalf("%d, %v; want 512", bpc, err)
	}
	for name, b := range map[string][]byte{
		"short":        ok[:6],
		"version 2":    {0, 2, 1, 0, 0, 2, 0},
		"CRC32":        {0, 1, 2, 0, 0, 2, 0},
		"0 per chunk":  {0, 1, 1, 0, 0, 0, 0},
		"1 MiB chunks": {0, 1, 1, 0, 0x10, 0, 0},
	} {
		if _, err := ParseMetaHeader(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzReadShortCircuitOp(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteShortCircuitOp(&buf, &dfspb.ShortCircuitFdsOp{Block: &dfspb.ExtendedBlock{BlockId: 1, GenerationStamp: 1, NumBytes: 5},
		Token: &dfspb.BlockToken{Identifier: []byte("id"), Password: []byte("pw")}, ClientName: "c"})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 1, 87, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := &countingReader{r: bytes.NewReader(b)}
		op, err := ReadShortCircuitOp(r)
		if r.n > opPrefixLen+MaxShortCircuitOpLen {
			t.Fatalf("read %d bytes, more than a prefix and the largest header", r.n)
		}
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrProtocol) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		var again bytes.Buffer
		if err := WriteShortCircuitOp(&again, op); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		back, err := ReadShortCircuitOp(&again)
		if err != nil || !proto.Equal(op, back) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
