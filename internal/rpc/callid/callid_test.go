package callid

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestRoundTrip(t *testing.T) {
	s := NewSource()
	a, b := s.Next(), s.Next()
	if a.Client != b.Client || a.Call+1 != b.Call {
		t.Fatalf("two calls of one source: %v, %v; want one client id and consecutive call ids", a, b)
	}
	if NewSource().Next().Client == a.Client {
		t.Fatalf("two sources made the same client id %v", a)
	}
	for _, id := range []ID{a, {Call: 1<<64 - 1}} {
		got, err := Parse(id.Encode())
		if err != nil || got != id {
			t.Fatalf("Parse(Encode(%v)) = %v, %v", id, got, err)
		}
	}
}

func TestParseRefusesBadValues(t *testing.T) {
	good := ID{Client: [16]byte{1, 2, 3}, Call: 300}.Encode()
	for name, v := range map[string]string{
		"empty":          "",
		"client id only": good[:16],
		"short":          good[:10],
		"cut varint":     good[:17],
		"trailing":       good + "x",
		"overlong":       good[:16] + strings.Repeat("\xff", 10) + "\x01",
	} {
		if id, err := Parse(v); err == nil {
			t.Errorf("%s: Parse(%q) = %v, want an error", name, v, id)
		} else if !strings.Contains(err.Error(), Key) {
			t.Errorf("%s: error %q does not name %s", name, err, Key)
		}
	}
}

func TestFromIncoming(t *testing.T) {
	id := ID{Client: [16]byte{9}, Call: 7}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(Key, id.Encode()))
	if got, ok, err := FromIncoming(ctx); !ok || err != nil || got != id {
		t.Fatalf("FromIncoming = %v, %v, %v; want %v", got, ok, err, id)
	}
	if _, ok, err := FromIncoming(context.Background()); ok || err != nil {
		t.Fatalf("no metadata: ok %v, err %v", ok, err)
	}
	two := metadata.NewIncomingContext(context.Background(), metadata.Pairs(Key, id.Encode(), Key, id.Encode()))
	if _, ok, err := FromIncoming(two); ok || err == nil {
		t.Fatalf("two values: ok %v, err %v; want an error", ok, err)
	}
}

// FuzzParse: any bytes either parse to ids that encode back to exactly
// those bytes, or are refused; never a panic.
func FuzzParse(f *testing.F) {
	f.Add(ID{Client: [16]byte{1}, Call: 1}.Encode())
	f.Add(ID{Call: 1<<64 - 1}.Encode())
	f.Add("")
	f.Add(strings.Repeat("\xff", 27))
	f.Fuzz(func(t *testing.T, v string) {
		id, err := Parse(v)
		if err != nil {
			return
		}
		if id.Encode() != v {
			t.Fatalf("Parse(%q) = %v, which encodes as %q", v, id, id.Encode())
		}
	})
}
