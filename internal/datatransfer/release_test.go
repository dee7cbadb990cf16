package datatransfer

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// mustPanic runs f and fails unless it panics with a message containing want.
func mustPanic(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("%s did not panic", what)
		}
		if s, _ := r.(string); !strings.Contains(s, want) {
			t.Fatalf("%s panicked with %v, want %q", what, r, want)
		}
	}()
	f()
}

func TestPacketMisuseAfterReleasePanics(t *testing.T) {
	p := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
	p.Append([]byte("hello"))
	p.Seal(0, 1, 0)
	p.Release()
	mustPanic(t, "second Release", "released twice", p.Release)
	mustPanic(t, "Seal after Release", "used after Release", func() { p.Seal(0, 2, 0) })
	mustPanic(t, "Wire after Release", "used after Release", func() { _ = p.Wire() })

	// The buffer went back to the pool, and a new packet made from it is
	// a different Packet: the stale one stays released.
	q := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
	mustPanic(t, "Release of the stale packet", "released twice", p.Release)
	q.Append([]byte("world"))
	q.Seal(0, 3, 0)
	if got := q.Wire(); len(got) != PacketHeaderLen+ChecksumSize+5 {
		t.Fatalf("new packet from the pool: wire of %d bytes", len(got))
	}
	q.Release()

	// A received packet: Release gives its claim back exactly once.
	src := NewPacket(100, DefaultBytesPerChecksum)
	src.Append(bytes.Repeat([]byte{7}, 100))
	src.Seal(0, 0, 0)
	var stream bytes.Buffer
	stream.Write(src.Wire())
	src.Release()
	claims := 0
	pr := NewPacketReader(bufio.NewReaderSize(&stream, 4096))
	pr.Claim = func(int) (func(), error) { claims++; return func() { claims-- }, nil }
	r, err := pr.Next()
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	mustPanic(t, "second Release of a received packet", "released twice", r.Release)
	if claims != 0 {
		t.Fatalf("claims outstanding after release: %d", claims)
	}
}

// TestPacketBuffersArePooled checks that Release hands the buffer back
// for reuse (the point of pooling): some NewPacket after a Release gets
// the same backing array. sync.Pool may drop items (it does at random
// under -race), hence several tries.
func TestPacketBuffersArePooled(t *testing.T) {
	for range 50 {
		p := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
		b := &p.buf[0]
		p.Release()
		q := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
		same := &q.buf[0] == b
		q.Release()
		if same {
			return
		}
	}
	t.Fatal("no released buffer was reused in 50 tries")
}
