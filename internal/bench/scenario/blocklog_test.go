package scenario

import (
	"math"
	"os"
	"testing"
	"time"
)

func TestParseBlockLog(t *testing.T) {
	f, err := os.Open("testdata/datanode.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ParseBlockLog("dn1", f)
	if err != nil {
		t.Fatal(err)
	}
	// The start line, the failed receive, the panic line and the bad block
	// name are skipped.
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Host != "dn1" || r.ID != 1073741943 || r.Bytes != 4194304 || r.Client != "smarth-client-a" ||
		r.Downstream != 2 || r.Mode != "MULTI_PIPELINE" || r.Upstream != "10.77.1.11:37014" {
		t.Errorf("first record: %+v", r)
	}
	if d := r.End.Sub(r.Start); d < 244*time.Millisecond || d > 245*time.Millisecond {
		t.Errorf("duration %v, want 244ms", d)
	}
	if recs[1].Stage != "TRANSFER_RBW" || recs[1].Client != "" {
		t.Errorf("second record: %+v", recs[1])
	}
}

// rec is a block record for client, starting and ending ms after t0.
func rec(host string, id uint64, client string, startMs, endMs, downstream int) BlockRecord {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	return BlockRecord{Host: host, ID: id, Client: client, Bytes: 1_000_000, Downstream: downstream,
		Start: t0.Add(time.Duration(startMs) * time.Millisecond), End: t0.Add(time.Duration(endMs) * time.Millisecond)}
}

func transfer(r BlockRecord) BlockRecord {
	r.Stage = "TRANSFER_FINALIZED"
	return r
}

func TestDiagnose(t *testing.T) {
	recs := []BlockRecord{
		// Block 1: dn1 -> dn2 -> dn3, pipeline open 0-1300 ms.
		rec("dn2", 1, "a", 0, 1200, 1), rec("dn1", 1, "a", 0, 1000, 2), rec("dn3", 1, "a", 0, 1300, 0),
		// Block 2 starts on the slow dn9 while block 1 drains: 2 open.
		rec("dn9", 2, "a", 1000, 3000, 2), rec("dn4", 2, "a", 1000, 3100, 1), rec("dn5", 2, "a", 1000, 3200, 0),
		// Block 3 after a gap, alone.
		rec("dn6", 3, "a", 3500, 4000, 2), rec("dn7", 3, "a", 3500, 4050, 1), rec("dn8", 3, "a", 3500, 4100, 0),
		// Another client's block and a later run of the same client.
		rec("dn1", 4, "b", 500, 900, 2), rec("dn1", 5, "a", 6000, 6500, 2),
		// A re-replication of block 2 (no client) and a pipeline repair's
		// copy (the client's) are copies, not pipelines.
		transfer(rec("dn6", 2, "", 3300, 3400, 0)), transfer(rec("dn7", 2, "a", 2000, 4900, 0)),
		// A copy after the run.
		transfer(rec("dn8", 1, "", 5500, 5600, 0)),
	}
	t0 := recs[0].Start
	slow := func(h string) bool { return h == "dn9" }
	d := Diagnose(recs, "a", t0, t0.Add(5*time.Second), slow)
	if d.Blocks != 3 || d.SlowFirst != 1 || d.MaxOpen != 2 || d.Copies != 2 {
		t.Errorf("blocks %d slow %d max open %d copies %d, want 3 1 2 2", d.Blocks, d.SlowFirst, d.MaxOpen, d.Copies)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	if !near(d.MeanOpen, 4.0/3) || !near(d.BusyPct, 70) || !near(d.TailSec, 1) {
		t.Errorf("mean open %v busy %v%% tail %v s, want 1.333 70%% 1 s", d.MeanOpen, d.BusyPct, d.TailSec)
	}
	// 3 MB into the first nodes in 1 + 2 + 0.5 s.
	if !near(d.FirstHopMbit, 3e6*8/3.5/1e6) {
		t.Errorf("first hop %v Mbit/s, want %v", d.FirstHopMbit, 3e6*8/3.5/1e6)
	}
	if d.FirstNodes["dn1"] != 1 || d.FirstNodes["dn9"] != 1 || d.FirstNodes["dn6"] != 1 || len(d.FirstNodes) != 3 {
		t.Errorf("first nodes %v", d.FirstNodes)
	}
	if none := Diagnose(recs, "nobody", t0, t0.Add(time.Hour), nil); none.Blocks != 0 || none.BusyPct != 0 {
		t.Errorf("diagnosis of a client without blocks: %+v", none)
	}
}
