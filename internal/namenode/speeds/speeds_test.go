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
	recs := tb.Records("h1")
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	r := recs[0]
	wantRecent := (0.3*16 + 0.7*64) * float64(mb)
	if math.Abs(r.Recent-wantRecent) > 1 || math.Abs(r.Historical-128*float64(mb)/5) > 1 || r.Samples != 2 || r.LastUnixMs != 2 || r.Host != "h1" || r.Client != "c1" {
		t.Errorf("record %+v; want recent %.0f", r, wantRecent)
	}
	if got := tb.Recent("h1"); len(got) != 1 || got["dn1"] != r.Recent {
		t.Errorf("Recent %v", got)
	}
	if tb.Recent("nobody") != nil {
		t.Error("Recent of an unknown host is not nil")
	}
}

// Two processes on one host (two `smarth fs put` runs) share one record;
// another host has its own.
func TestRecordsBelongToTheHost(t *testing.T) {
	tb := New()
	now := time.Unix(0, 0)
	tb.Record("put-1", "10.0.0.5", []Sample{{Datanode: "dn1", Bytes: 100, Nanos: 1e9}}, now)
	tb.Record("put-2", "10.0.0.5", []Sample{{Datanode: "dn1", Bytes: 200, Nanos: 1e9}}, now)
	tb.Record("other", "10.0.0.6", []Sample{{Datanode: "dn1", Bytes: 5, Nanos: 1e9}}, now)
	recs := tb.Records("")
	if len(recs) != 2 || recs[0].Host != "10.0.0.5" || recs[0].Samples != 2 || recs[0].Client != "put-2" {
		t.Fatalf("records %+v: want one row per host", recs)
	}
	if got := tb.Records("put-1"); len(got) != 1 || got[0].Host != "10.0.0.5" {
		t.Errorf("records by client name %+v: want its host's", got)
	}
	if tb.HostOf("put-1") != "10.0.0.5" || tb.Hosts() != 2 {
		t.Errorf("HostOf %q, %d hosts", tb.HostOf("put-1"), tb.Hosts())
	}
}

func TestOrderingAndExpiry(t *testing.T) {
	tb := New()
	t0 := time.Unix(0, 0)
	tb.Record("b", "hb", []Sample{{Datanode: "dn1", Bytes: 10, Nanos: 1e9}, {Datanode: "dn2", Bytes: 30, Nanos: 1e9}}, t0)
	tb.Record("a", "ha", []Sample{{Datanode: "dn9", Bytes: 1, Nanos: 1e9}}, t0.Add(time.Minute))
	tb.Record("b", "hb", []Sample{{Datanode: "dn2", Bytes: 30, Nanos: 1e9}}, t0.Add(time.Minute))
	var order []string
	for _, r := range tb.Records("") {
		order = append(order, r.Host+"/"+r.Datanode)
	}
	if got := order; len(got) != 3 || got[0] != "ha/dn9" || got[1] != "hb/dn2" || got[2] != "hb/dn1" {
		t.Errorf("order %v", got)
	}
	// dn1's record from t0 ages out; hb's dn2 stays, so the host stays.
	if n := tb.Expire(t0.Add(90*time.Second), time.Minute); n != 1 || tb.Hosts() != 2 || len(tb.Recent("hb")) != 1 {
		t.Errorf("expired %d records, %d hosts, hb has %v", n, tb.Hosts(), tb.Recent("hb"))
	}
	if n := tb.Expire(t0.Add(5*time.Minute), time.Minute); n != 2 || tb.Hosts() != 0 || tb.HostOf("a") != "" {
		t.Errorf("expired %d, %d hosts left", n, tb.Hosts())
	}
}
