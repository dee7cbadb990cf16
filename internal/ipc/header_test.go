package ipc

import (
	"reflect"
	"testing"

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
