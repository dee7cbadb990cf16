package tune

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func rec(profile string, bytes, pkt int64, secs, cpu float64) Record {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return Record{Block: "blk_1_1", Bytes: bytes, PacketSize: pkt, Start: t0, End: t0.Add(time.Duration(secs * float64(time.Second))),
		CPUSeconds: cpu, CPUScope: "process", Xceivers: 1, Profile: profile}
}

func TestLogRoundTripAndPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transfer.jsonl")
	w, err := OpenLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := rec("default", 1<<20, 65536, 0.5, 0.01)
	want.Settings = []State{{Setting: "so_busy_poll", Want: "50", Got: "50", InForce: false, Note: "no NAPI"}}
	for range 3 {
		if err := w.Write(want); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// A line being written (no newline yet) is left for the next poll.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"block":"blk_2`)
	f.Close()
	recs, off, err := ReadLogFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Bytes != 1<<20 || recs[0].Settings[0].Note != "no NAPI" || !recs[0].End.Equal(want.End) {
		t.Fatalf("read back %d records: %+v", len(recs), recs)
	}
	if more, off2, _ := ReadLogFile(path, off); len(more) != 0 || off2 != off {
		t.Fatalf("partial line parsed: %v at %d", more, off2)
	}
	got, bad, err := ReadLog(strings.NewReader("not json\n" + `{"block":"b","bytes":1}` + "\n"))
	if err != nil || bad != 1 || len(got) != 1 {
		t.Fatalf("damaged log: %d records, %d bad, %v", len(got), bad, err)
	}
}

func TestLogRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transfer.jsonl")
	w, err := OpenLog(path, 600)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range 10 {
		if err := w.Write(rec("default", 1, 1, 1, 0)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() > 600 {
		t.Fatalf("log %v bytes past a 600-byte cap (%v)", st.Size(), err)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("no rotated file: %v", err)
	}
}

func TestReportGroupsByProfileSizeAndPacket(t *testing.T) {
	var recs []Record
	// default, 64 MiB blocks in 64 KiB packets: 1..10 s => 536.9 .. 53.7 Mbps.
	for i := 1; i <= 10; i++ {
		recs = append(recs, rec("default", 64<<20, 64<<10, float64(i), 0.064*float64(i)))
	}
	recs = append(recs, rec("tuned", 64<<20, 64<<10, 1, 0.032))
	recs = append(recs, rec("default", 64<<20, 128<<10, 2, 0.1))
	groups := Report(recs)
	if len(groups) != 3 {
		t.Fatalf("%d groups: %+v", len(groups), groups)
	}
	g := groups[0]
	if g.Key != (GroupKey{"default", 64 << 20, 64 << 10}) || g.Count != 10 {
		t.Fatalf("first group %+v", g)
	}
	mbps := func(s float64) float64 { return float64(64<<20) * 8 / s / 1e6 }
	// Median of 10: the mean of the 5th and 6th fastest (5 s and 6 s).
	wantMed := (mbps(5) + mbps(6)) / 2
	if math.Abs(g.MedianMbps-wantMed) > 1e-9 {
		t.Errorf("median %v, want %v", g.MedianMbps, wantMed)
	}
	if !(g.P10Mbps < g.MedianMbps && g.MedianMbps < g.P90Mbps) {
		t.Errorf("p10 %v median %v p90 %v not ordered", g.P10Mbps, g.MedianMbps, g.P90Mbps)
	}
	// CPU: 0.064 s per s over 64 MiB at i s => 0.001*i s/MiB; median 5.5 ms.
	if math.Abs(g.CPUPerMiB-0.0055) > 1e-12 {
		t.Errorf("cpu per MiB %v, want 0.0055", g.CPUPerMiB)
	}
	if groups[1].Key.Profile != "tuned" || groups[2].Key.PacketSize != 128<<10 {
		t.Errorf("group order: %+v", groups)
	}
	var out strings.Builder
	if err := WriteReport(&out, groups); err != nil || !strings.Contains(out.String(), "64 MiB") {
		t.Fatalf("report table: %v\n%s", err, out.String())
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	for q, want := range map[float64]float64{0: 1, 0.5: 2.5, 1: 4, 0.1: 1.3} {
		if got := Quantile(xs, q); math.Abs(got-want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}
