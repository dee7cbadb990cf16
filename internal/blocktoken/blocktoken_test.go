package blocktoken

import (
	"errors"
	"strings"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// pair is a namenode manager and a datanode verifier holding its keys.
func pair(t *testing.T) (*Manager, *Verifier) {
	t.Helper()
	m, err := NewManager(10*time.Hour, time.Hour, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier()
	v.Update(m.Export())
	return m, v
}

func readWant(id, gs uint64) Want { return Want{BlockID: id, GS: gs, Mode: Read} }

func wantDenied(t *testing.T, err error, why string) {
	t.Helper()
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("got %v, want a refusal (ErrDenied)", err)
	}
	if !strings.Contains(err.Error(), why) {
		t.Fatalf("refusal %q does not say %q", err, why)
	}
}

func TestGoodTokenAllows(t *testing.T) {
	m, v := pair(t)
	tok := m.Issue(Identifier{User: "alice", BlockID: 7, GS: 3, Modes: Read | Write, Targets: []string{"10.0.0.2:9866"}}, t0)
	id, err := v.Check(tok, Want{BlockID: 7, GS: 3, Mode: Write, Dials: []string{"10.0.0.2:9866"}}, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if id.User != "alice" {
		t.Fatalf("user %q", id.User)
	}
}

func TestRefusals(t *testing.T) {
	m, v := pair(t)
	now := t0.Add(time.Minute)
	good := m.Issue(Identifier{BlockID: 7, GS: 3, Modes: Read}, t0)
	forged := &dfspb.BlockToken{Identifier: good.Identifier, Password: append([]byte(nil), good.Password...)}
	forged.Password[0] ^= 1
	// The same identifier with the block id changed keeps the old
	// password: a holder cannot retarget a token.
	other := Identifier{BlockID: 8, GS: 3, Modes: Read}
	id, _ := Unmarshal(good.Identifier)
	other.KeyID, other.ExpiryUnixMs = id.KeyID, id.ExpiryUnixMs
	retargeted := &dfspb.BlockToken{Identifier: other.Marshal(), Password: good.Password}
	for _, c := range []struct {
		name string
		tok  *dfspb.BlockToken
		want Want
		at   time.Time
		why  string
	}{
		{"missing", nil, readWant(7, 3), now, "no token"},
		{"forged", forged, readWant(7, 3), now, "bad signature"},
		{"retargeted", retargeted, readWant(8, 3), now, "bad signature"},
		{"garbage", &dfspb.BlockToken{Identifier: []byte{1, 2, 3}}, readWant(7, 3), now, "malformed"},
		{"expired", good, readWant(7, 3), t0.Add(10*time.Hour + time.Second), "expired"},
		{"other block", good, readWant(8, 3), now, "not 8"},
		{"other stamp", good, readWant(7, 4), now, "generation stamp 3, not 4"},
		{"mode", good, Want{BlockID: 7, GS: 3, Mode: Write}, now, "allows READ, not WRITE"},
		{"dial", good, Want{BlockID: 7, GS: 3, Mode: Read, Dials: []string{"1.2.3.4:1"}}, now, "does not name 1.2.3.4:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Check(c.tok, c.want, c.at)
			wantDenied(t, err, c.why)
		})
	}
}

func TestUnknownKeyAndNoKeys(t *testing.T) {
	m, _ := pair(t)
	other, _ := pair(t) // another namenode's keys
	tok := m.Issue(Identifier{BlockID: 1, GS: 1, Modes: Read}, t0)
	v := NewVerifier()
	_, err := v.Check(tok, readWant(1, 1), t0)
	wantDenied(t, err, "no block keys")
	v.Update(other.Export())
	_, err = v.Check(tok, readWant(1, 1), t0)
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("a token of another key set passed: %v", err)
	}
}

func TestDisabledAllowsWithoutToken(t *testing.T) {
	v := NewVerifier()
	v.Update(&dfspb.ExportedBlockKeys{Enabled: false}, 1)
	if _, err := v.Check(nil, readWant(1, 1), t0); err != nil {
		t.Fatal(err)
	}
}

// TestRollKeepsOutstandingTokens: tokens signed before any number of
// rolls within their lifetime still pass once the datanode has the new
// set, and the key a roll makes current was already shipped as "next".
func TestRollKeepsOutstandingTokens(t *testing.T) {
	m, v := pair(t)
	old := m.Issue(Identifier{BlockID: 5, GS: 1, Modes: Read}, t0)
	now := t0
	for i := 0; i < 9; i++ {
		now = now.Add(time.Hour)
		changed, err := m.Roll(now)
		if err != nil || !changed {
			t.Fatalf("roll %d: changed=%v err=%v", i, changed, err)
		}
		// A token from the new current key, checked by a datanode that
		// has not yet heard of the roll.
		fresh := m.Issue(Identifier{BlockID: 5, GS: 1, Modes: Read}, now)
		if _, err := v.Check(fresh, readWant(5, 1), now); err != nil {
			t.Fatalf("roll %d: token of the new key refused before the datanode saw the roll: %v", i, err)
		}
		v.Update(m.Export())
		if _, err := v.Check(old, readWant(5, 1), now); err != nil {
			t.Fatalf("roll %d: token from before the rolls refused: %v", i, err)
		}
	}
	if changed, _ := m.Roll(now.Add(time.Minute)); changed {
		t.Fatal("rolled before the interval passed")
	}
	// Keys expire: after lifetime plus two rolls the first key is gone.
	for range 3 {
		now = now.Add(time.Hour)
		m.Roll(now)
	}
	v.Update(m.Export())
	if _, err := v.Check(old, readWant(5, 1), now); !errors.Is(err, ErrDenied) {
		t.Fatalf("a token past its lifetime passed: %v", err)
	}
}

func TestIdentifierRoundTrip(t *testing.T) {
	in := Identifier{KeyID: 9, ExpiryUnixMs: 123, User: "bob", BlockID: 1 << 40, GS: 77, Modes: Copy | Write, Targets: []string{"a:1", "b:2"}}
	out, err := Unmarshal(in.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if out.KeyID != in.KeyID || out.User != in.User || out.BlockID != in.BlockID || out.GS != in.GS || out.Modes != in.Modes || len(out.Targets) != 2 || out.Targets[1] != "b:2" {
		t.Fatalf("round trip: %+v", out)
	}
	if _, err := Unmarshal(append(in.Marshal(), 0)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("trailing byte accepted: %v", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(Identifier{User: "u", BlockID: 1, Targets: []string{"x:1"}}.Marshal())
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := Unmarshal(b)
		if err != nil {
			return
		}
		again, err := Unmarshal(id.Marshal())
		if err != nil || again.BlockID != id.BlockID || len(again.Targets) != len(id.Targets) {
			t.Fatalf("re-encoding a decoded identifier: %+v vs %+v (%v)", again, id, err)
		}
	})
}

// BenchmarkCheck is the datanode's cost per op: decode, HMAC, compare.
func BenchmarkCheck(b *testing.B) {
	m, _ := NewManager(0, 0, nil, time.Now())
	v := NewVerifier()
	v.Update(m.Export())
	tok := m.Issue(Identifier{User: "alice", BlockID: 7, GS: 3, Modes: Write, Targets: []string{"10.0.0.2:9866", "10.0.0.3:9866"}}, time.Now())
	want := Want{BlockID: 7, GS: 3, Mode: Write, Dials: []string{"10.0.0.2:9866", "10.0.0.3:9866"}}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Check(tok, want, now); err != nil {
			b.Fatal(err)
		}
	}
}

// A datanode of an HA group holds every namenode's keys: a token of
// either passes; a namenode's new set replaces only its own; one
// namenode without tokens does not turn them off for the others'.
func TestKeysOfSeveralNamenodes(t *testing.T) {
	a, _ := pair(t)
	b, _ := pair(t)
	tokA := a.Issue(Identifier{BlockID: 1, GS: 1, Modes: Read}, t0)
	tokB := b.Issue(Identifier{BlockID: 1, GS: 1, Modes: Read}, t0)
	v := NewVerifier()
	ka, sa := a.Export()
	kb, sb := b.Export()
	v.UpdateFrom("nn-a", ka, sa)
	v.UpdateFrom("nn-b", kb, sb)
	for name, tok := range map[string]*dfspb.BlockToken{"nn-a": tokA, "nn-b": tokB} {
		if _, err := v.Check(tok, readWant(1, 1), t0); err != nil {
			t.Errorf("token of %s refused with both key sets installed: %v", name, err)
		}
	}
	if v.SerialOf("nn-a") != sa || v.SerialOf("nn-b") != sb {
		t.Errorf("serials %d, %d; want %d, %d", v.SerialOf("nn-a"), v.SerialOf("nn-b"), sa, sb)
	}
	v.UpdateFrom("nn-a", &dfspb.ExportedBlockKeys{Enabled: false}, sa+1)
	if _, err := v.Check(tokB, readWant(1, 1), t0); err != nil {
		t.Errorf("nn-b's token refused after nn-a's set was replaced: %v", err)
	}
	if _, err := v.Check(nil, readWant(1, 1), t0); !errors.Is(err, ErrDenied) {
		t.Errorf("no token passed while nn-b enforces tokens: %v", err)
	}
	v.UpdateFrom("nn-a", ka, sa+2)
	v.UpdateFrom("nn-b", &dfspb.ExportedBlockKeys{Enabled: true}, sb+1) // nn-b's keys gone
	if _, err := v.Check(tokB, readWant(1, 1), t0); !errors.Is(err, ErrDenied) {
		t.Errorf("a token of nn-b's replaced key set passed: %v", err)
	}
}
