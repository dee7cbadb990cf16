package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataFillCheckReader(t *testing.T) {
	d := NewData(1)
	// Reading in odd chunks gives the same bytes as Fill at each offset.
	size := int64(3*patternLen + 12345)
	got, err := io.ReadAll(struct{ io.Reader }{d.Reader(size)})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != size {
		t.Fatalf("reader gave %d bytes, want %d", len(got), size)
	}
	if err := d.Check(got, 0); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 5000)
	d.Fill(part, patternLen-100)
	if !bytes.Equal(part, got[patternLen-100:patternLen+4900]) {
		t.Error("Fill at an offset across the pattern's end differs from the stream")
	}
	got[2*patternLen+7] ^= 1
	if err := d.Check(got, 0); err == nil || !strings.Contains(err.Error(), "byte 2097173") {
		t.Errorf("Check of corrupted data: %v", err)
	}
	if bytes.Equal(NewData(2).pattern[:64], d.pattern[:64]) {
		t.Error("different seeds give the same content")
	}
	if !bytes.Equal(NewData(1).pattern, d.pattern) {
		t.Error("the same seed gives different content")
	}
}

func TestSummarizeImprovementAndBound(t *testing.T) {
	r := &Result{Op: "put", Size: 1 << 30, Replication: 3, LinkRateBits: 8 * MiB * 100}
	for i, run := range []Run{
		{Mode: "classic", Seconds: 4}, {Mode: "multipipeline", Seconds: 2},
		{Mode: "classic", Seconds: 6}, {Mode: "multipipeline", Seconds: 3},
	} {
		run.Index = i
		run.MiBps = mibps(r.Size, run.Seconds)
		r.Runs = append(r.Runs, run)
	}
	r.Summarize()
	if len(r.Summaries) != 2 || r.Summaries[0].Mode != "classic" {
		t.Fatalf("summaries %+v", r.Summaries)
	}
	c, m := r.Summaries[0], r.Summaries[1]
	if c.Mean != 5 || c.Min != 4 || c.Max != 6 || c.Runs != 2 {
		t.Errorf("classic summary %+v", c)
	}
	if c.MiBps != 1024.0/5 {
		t.Errorf("classic MiB/s %v, want %v", c.MiBps, 1024.0/5)
	}
	if c.ImprovementPct != nil {
		t.Error("classic has an improvement over itself")
	}
	if m.ImprovementPct == nil || math.Abs(*m.ImprovementPct-100) > 1e-9 {
		t.Errorf("multipipeline improvement %v, want +100%%", m.ImprovementPct)
	}
	if r.BoundMiBps != 100 || m.PctOfBound == nil || math.Abs(*m.PctOfBound-1024.0/2.5) > 1e-9 {
		t.Errorf("bound %v, pct %v", r.BoundMiBps, m.PctOfBound)
	}

	var out strings.Builder
	r.PrintTable(&out)
	for _, want := range []string{"put of 1 GiB, replication 3", "multipipeline", "+100.0%", "bound MiB/s", "100.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	dir := t.TempDir()
	if err := r.WriteJSON(filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || len(back.Runs) != 4 || back.Summaries[1].ImprovementPct == nil {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	for _, name := range []string{"p.svg", "p.png"} {
		if err := r.Plot(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", name, err)
		}
	}
	if err := r.Plot(filepath.Join(dir, "p.gif")); err == nil {
		t.Error("plot to .gif accepted")
	}
}
