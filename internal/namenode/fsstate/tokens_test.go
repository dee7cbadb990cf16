package fsstate

import (
	"testing"

	"smarth/internal/namenode/namespace"
)

// TestDelegationTokenTable: renewals and cancellations are state; a
// cancellation wins over any renewal, before or after; an image carries
// the table; dead entries are dropped by the records' own times, so two
// members that apply the same records hold the same table.
func TestDelegationTokenTable(t *testing.T) {
	s := newTestState()
	apply := func(r Record) {
		t.Helper()
		if _, err := s.Apply(r, namespace.Caller{Trusted: true}); err != nil {
			t.Fatalf("%s: %v", r.Kind(), err)
		}
	}
	apply(&RenewToken{Seq: 1, Expiry: 5000, Now: 1000})
	apply(&RenewToken{Seq: 1, Expiry: 6000, Now: 2000})
	apply(&RenewToken{Seq: 2, Expiry: 5000, Now: 2000})
	apply(&CancelToken{Seq: 2, MaxDate: 9000, Now: 2100})
	apply(&RenewToken{Seq: 2, Expiry: 7000, Now: 2200}) // after the cancellation: stays cancelled
	apply(&CancelToken{Seq: 3, MaxDate: 8000, Now: 2300})
	want := map[uint64]int64{1: 6000, 2: -9000, 3: -8000}
	for seq, e := range want {
		if got, ok := s.DelegationToken(seq); !ok || got != e {
			t.Errorf("token %d: %d, %v; want %d", seq, got, ok, e)
		}
	}
	if _, ok := s.DelegationToken(4); ok {
		t.Error("token 4, never renewed nor cancelled, has an entry")
	}
	for _, bad := range []Record{&RenewToken{Seq: 9, Expiry: 0}, &CancelToken{Seq: 9, MaxDate: -1}} {
		if _, err := s.Apply(bad, namespace.Caller{Trusted: true}); err == nil {
			t.Errorf("%s %+v applied", bad.Kind(), bad)
		}
	}

	// The image carries the table, and a state loaded from it writes the
	// same image.
	recs := imageRecords(t, s)
	loaded := newTestState()
	if err := loaded.LoadImage(1, recs); err != nil {
		t.Fatal(err)
	}
	for seq, e := range want {
		if got, ok := loaded.DelegationToken(seq); !ok || got != e {
			t.Errorf("after the image, token %d: %d, %v; want %d", seq, got, ok, e)
		}
	}
	if again := imageRecords(t, loaded); len(again) != len(recs) {
		t.Errorf("the loaded state's image has %d records, the original %d", len(again), len(recs))
	}

	// Growing past the pruning size (64, then twice what is left)
	// drops the entries dead at the time of the record that grows it,
	// and only those.
	p := newTestState()
	for seq := uint64(1); seq <= 100; seq++ {
		if _, err := p.Apply(&RenewToken{Seq: seq, Expiry: int64(seq) * 10, Now: 0}, namespace.Caller{Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1000); seq < 1100; seq++ {
		if _, err := p.Apply(&CancelToken{Seq: seq, MaxDate: 2000, Now: 505}, namespace.Caller{Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 100; seq++ {
		_, ok := p.DelegationToken(seq)
		if alive := seq*10 >= 505; ok != alive {
			t.Errorf("token %d (expiry %d) after records at 505: held %v, want %v", seq, seq*10, ok, alive)
		}
	}
	for seq := uint64(1000); seq < 1100; seq++ {
		if _, ok := p.DelegationToken(seq); !ok {
			t.Fatalf("cancellation %d (alive until 2000) was dropped", seq)
		}
	}
}
