package fsstate

import (
	"reflect"
	"testing"

	"smarth/internal/rpc/callid"
)

func sampleCall() *Call {
	return &Call{ID: callid.ID{Client: [16]byte{7, 7}, Call: 42}, User: "alice",
		Op: &Mkdirs{Path: "/rc", Perm: 0o755, ParentPerm: 0o755, User: "alice", Now: 9}}
}

// TestCallRecord: a Call round-trips, replays as its operation and gives
// its ids back; a nested call, an unknown op or a client id of the wrong
// length is refused.
func TestCallRecord(t *testing.T) {
	c := sampleCall()
	got, err := Decode(Encode(c))
	if err != nil || !reflect.DeepEqual(got, Record(c)) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	s := newTestState()
	res, err := s.ReplayEdit(1, Encode(c))
	if err != nil {
		t.Fatal(err)
	}
	if res.Call == nil || res.Call.ID != c.ID || res.Call.User != "alice" {
		t.Fatalf("replay gave call %+v, want the ids %v of alice", res.Call, c.ID)
	}
	n, err := s.Tree().Lookup("/rc")
	if err != nil || n.Owner() != "alice" {
		t.Fatalf("the wrapped mkdirs was not applied as alice: %v", err)
	}
	plain, _ := s.ReplayEdit(2, Encode(&Mkdirs{Path: "/plain", Perm: 0o755, User: "bob", Now: 9}))
	if plain.Call != nil {
		t.Fatalf("a record without ids replayed with ids %+v", plain.Call)
	}

	nested := Encode(&Call{ID: c.ID, User: "alice", Op: c})
	badID := Encode(c)
	badID[1] = 15 // the client id's length
	unknown := Encode(&Call{ID: c.ID, User: "u", Op: &AllocGS{GS: 1}})
	unknown[len(unknown)-2] = 250 // the wrapped op's kind byte
	for name, b := range map[string][]byte{"nested": nested, "client id of 15 bytes": badID, "unknown op": unknown,
		"cut": Encode(c)[:20]} {
		if r, err := Decode(b); err == nil {
			t.Errorf("%s: decoded to %+v", name, r)
		}
	}
}
