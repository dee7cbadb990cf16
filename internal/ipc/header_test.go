package ipc

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"google.golang.org/grpc/metadata"
)

// TestHeaderWith: a pair added per call decodes beside the pairs encoded
// once, binary values included; a pair gRPC would refuse fails the header.
func TestHeaderWith(t *testing.T) {
	base := NewHeader(metadata.Pairs("smarth-user", "alice"))
	h := base.With("smarth-call-id-bin", "\x00\xffid")
	md, err := decodeMD(h.raw)
	if err != nil {
		t.Fatal(err)
	}
	want := metadata.MD{"smarth-user": {"alice"}, "smarth-call-id-bin": {"\x00\xffid"}}
	if !reflect.DeepEqual(md, want) {
		t.Fatalf("decoded %v, want %v", md, want)
	}
	if md, err := decodeMD(Header{}.With("k", "v").raw); err != nil || !reflect.DeepEqual(md, metadata.MD{"k": {"v"}}) {
		t.Fatalf("an empty header with one pair: %v, %v", md, err)
	}
	if h := base.With("Bad Key", "v"); h.err == nil {
		t.Fatalf("a key gRPC refuses was accepted")
	}
	if md, _ := decodeMD(base.raw); len(md) != 1 {
		t.Fatalf("With changed the header it was called on: %v", md)
	}
}

// TestMetadataCacheKeepsTheIdentity: a client's calls alternate between
// its identity alone and its identity with a call's own ids (at-most-once
// calls). Every call decodes to what it sent; the ids' calls take the
// identity's strings from the cache instead of copying them, and do not
// push the identity out of it (each is new, never seen again).
func TestMetadataCacheKeepsTheIdentity(t *testing.T) {
	c := &serverConn{}
	idMD := metadata.Pairs("smarth-user", "alice", "smarth-client", "DFSClient_1", "smarth-auth", "tok-0123456789abcdef")
	id := NewHeader(idMD)
	first, err := c.metadata(id.raw)
	if err != nil || !reflect.DeepEqual(first, idMD) {
		t.Fatalf("identity decoded as %v, %v", first, err)
	}
	for i := range 3 * mdCacheEntries {
		callID := fmt.Sprintf("\x00call-%d", i)
		md, err := c.metadata(id.With("smarth-call-id-bin", callID).raw)
		want := idMD.Copy()
		want.Append("smarth-call-id-bin", callID)
		if err != nil || !reflect.DeepEqual(md, want) {
			t.Fatalf("call %d decoded as %v, %v; want %v", i, md, err, want)
		}
		if unsafe.StringData(md["smarth-auth"][0]) != unsafe.StringData(first["smarth-auth"][0]) {
			t.Fatalf("call %d copied the credential instead of taking the cached string", i)
		}
		again, _ := c.metadata(id.raw)
		if reflect.ValueOf(again).Pointer() != reflect.ValueOf(first).Pointer() {
			t.Fatalf("after call %d the identity is no longer cached", i)
		}
	}
}

// BenchmarkMetadataOfAtMostOnceCall is the server's decoding of an
// at-most-once call's metadata: a client's identity and the call's ids,
// new on every call, after calls without ids have cached the identity.
func BenchmarkMetadataOfAtMostOnceCall(b *testing.B) {
	c := &serverConn{}
	id := NewHeader(metadata.Pairs("smarth-user", "alice", "smarth-client", "DFSClient_NONMAPREDUCE_1234567890_1", "smarth-auth", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	if _, err := c.metadata(id.raw); err != nil {
		b.Fatal(err)
	}
	raws := make([][]byte, 1024)
	for i := range raws {
		raws[i] = id.With("smarth-call-id-bin", fmt.Sprintf("\x00call-%d", i)).raw
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := c.metadata(raws[i%len(raws)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
