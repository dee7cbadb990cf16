package speeds

import (
	"math"
	"testing"
	"time"
)

func TestRecentAndHistorical(t *testing.T) {
	tb := New()
	now := time.Unix(1000, 0)
	mb := int64(1 << 20)
	// 64 MiB in 1 s to dn1, then 64 MiB in 4 s: historical 128 MiB / 5 s;
	// recent moves 30% of the way from 64 MiB/s to 16 MiB/s.
	tb.Record("c1", "h1", []Sample{{Datanode: "dn1", Bytes: 64 * mb, Nanos: 1e9, EndUnixMs: 1}}, now)
	tb.Record("c1", "h1", []Sample{{Datanode: "dn1", Bytes: 64 * mb, Nanos: 4e9, EndUnixMs: 2}, {Datanode: "dn2", Bytes: 0, Nanos: 5}}, now)
	recs := tb.Records("c1")
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	wantRecent := (0.3*16 + 0.7*64) * float64(mb)
	if math.Abs(r.Recent-wantRecent) > 1 || math.Abs(r.Historical-128*float64(mb)/5) > 1 || r.Samples != 2 || r.LastUnixMs != 2 {
		t.Errorf("record %+v; want recent %.0f", r, wantRecent)
	}
	if got := tb.Recent("c1"); len(got) != 1 || got["dn1"] != r.Recent {
		t.Errorf("Recent %v", got)
	}
	if tb.Recent("nobody") != nil {
		t.Error("Recent of an unknown client is not nil")
	}
}

func TestOrderingAndExpiry(t *testing.T) {
	tb := New()
	t0 := time.Unix(0, 0)
	tb.Record("b", "", []Sample{{Datanode: "dn1", Bytes: 10, Nanos: 1e9}, {Datanode: "dn2", Bytes: 30, Nanos: 1e9}}, t0)
	tb.Record("a", "", []Sample{{Datanode: "dn9", Bytes: 1, Nanos: 1e9}}, t0.Add(time.Minute))
	var order []string
	for _, r := range tb.Records("") {
		order = append(order, r.Client+"/"+r.Datanode)
	}
	if got := order; len(got) != 3 || got[0] != "a/dn9" || got[1] != "b/dn2" || got[2] != "b/dn1" {
		t.Errorf("order %v", got)
	}
	if n := tb.Expire(t0.Add(90*time.Second), time.Minute); n != 1 || tb.Clients() != 1 || tb.Recent("b") != nil {
		t.Errorf("expired %d, %d clients left", n, tb.Clients())
	}
}
