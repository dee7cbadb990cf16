package datatransfer

import (
	"bytes"
	"errors"
	"testing"
)

// TestPacketReaderClaim: Claim is asked for the packet's buffer before it
// is allocated, a refusal ends Next with that error (and nothing is read
// or allocated), and Release gives the claim back exactly once.
func TestPacketReaderClaim(t *testing.T) {
	p := NewPacket(4096, 512)
	p.Append(make([]byte, 4096))
	p.Seal(0, 0, 0)
	wire := bytes.Clone(p.Wire())
	p.Release()

	var claimed, given int
	pr := NewPacketReader(bytes.NewReader(append(bytes.Clone(wire), wire...)))
	pr.Claim = func(n int) (func(), error) {
		claimed += n
		return func() { given += n }, nil
	}
	q, err := pr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if want := BufferSize(len(wire)); claimed != want || given != 0 {
		t.Fatalf("claimed %d (given back %d) for a %d-byte packet, want %d", claimed, given, len(wire), want)
	}
	q.Release()
	// A second Release is a bug (the buffer may have a new owner by then):
	// it panics, and gives nothing back twice.
	mustPanic(t, "second Release", "released twice", q.Release)
	if given != claimed {
		t.Fatalf("gave back %d of %d", given, claimed)
	}

	refused := errors.New("no room")
	pr.Claim = func(int) (func(), error) { return nil, refused }
	if _, err := pr.Next(); !errors.Is(err, refused) {
		t.Fatalf("Next with a refusing Claim = %v, want the refusal", err)
	}
}

// TestPacketReaderRejectsBeforeClaim: an oversized or tiny-chunk header is
// refused on its 25 bytes alone, before any memory is claimed.
func TestPacketReaderRejectsBeforeClaim(t *testing.T) {
	for name, h := range map[string]PacketHeader{
		"16 MiB + 1":    {DataLen: MaxPacketDataLen + 1, BytesPerChecksum: 512},
		"1-byte chunks": {DataLen: MaxPacketDataLen, BytesPerChecksum: 1},
	} {
		var b [PacketHeaderLen]byte
		h.Put(b[:])
		pr := NewPacketReader(bytes.NewReader(b[:]))
		pr.Claim = func(n int) (func(), error) {
			t.Errorf("%s: claimed %d bytes for a header that must be refused", name, n)
			return func() {}, nil
		}
		if _, err := pr.Next(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: Next = %v, want ErrProtocol", name, err)
		}
	}
}
