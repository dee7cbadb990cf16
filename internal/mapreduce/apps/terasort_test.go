package apps

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
)

func TestTeraRowFormat(t *testing.T) {
	var row [teraRowLen]byte
	makeTeraRow(row[:], 1234567)
	for i, c := range row[:10] {
		if c < ' ' || c > '~' {
			t.Fatalf("key byte %d = %q, not printable", i, c)
		}
	}
	if string(row[10:20]) != "0001234567" {
		t.Fatalf("rowid %q", row[10:20])
	}
	if string(row[98:]) != "\r\n" {
		t.Fatalf("row ends %q", row[98:])
	}
	for i := 20; i < 98; i++ {
		if row[i] < 'A' || row[i] > 'Z' || row[i] != row[20+(i-20)/10*10] {
			t.Fatalf("filler byte %d = %q", i, row[i])
		}
	}
	var again [teraRowLen]byte
	makeTeraRow(again[:], 1234567)
	if row != again {
		t.Fatal("a row is not a function of its number")
	}
}

// genRows is the direct computation TeraGen must match.
func genRows(n int) [][]byte {
	rows := make([][]byte, n)
	for i := range rows {
		rows[i] = make([]byte, teraRowLen)
		makeTeraRow(rows[i], uint64(i))
	}
	return rows
}

func TestTeraGenSortValidate(t *testing.T) {
	e := newEnv(t)
	const n = 7919
	res := e.run("teragen", "rows", strconv.Itoa(n), "maps", "3", "output", "/gen")
	rows := genRows(n)
	if got := e.output("/gen"); !bytes.Equal(got, bytes.Join(rows, nil)) {
		t.Fatalf("teragen output (%d bytes) differs from the direct generation", len(got))
	}
	if len(e.parts("/gen")) != 3 {
		t.Fatalf("teragen wrote %v, want 3 files", e.parts("/gen"))
	}
	var sum uint64
	for _, r := range rows {
		sum += rowChecksum(r)
	}
	if got := res.Counters[GroupTera][CounterChecksum]; got != int64(sum) {
		t.Fatalf("teragen checksum counter %d, want %d", got, sum)
	}

	e.run("terasort", "input", "/gen", "output", "/sorted", "reduces", "3")
	sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i][:10], rows[j][:10]) < 0 })
	got := e.output("/sorted")
	if !bytes.Equal(got, bytes.Join(rows, nil)) {
		t.Fatalf("terasort output (%d bytes) is not the sorted rows", len(got))
	}
	parts := e.parts("/sorted")
	if len(parts) != 3 {
		t.Fatalf("terasort wrote %v, want 3 files", parts)
	}
	for _, p := range parts {
		// The sampled cut points must spread rows over every reducer.
		if size := len(e.read(p)); size < n*teraRowLen/6 {
			t.Fatalf("%s holds %d bytes: partitions badly balanced", p, size)
		}
	}

	res = e.run("teravalidate", "input", "/sorted", "output", "/valid")
	out := kvLines(t, e.output("/valid"))
	if out["misordered"] != "0" || out["rows"] != strconv.Itoa(n) || out["checksum"] != strconv.FormatUint(sum, 16) {
		t.Fatalf("teravalidate of sorted data: %v (want checksum %x)", out, sum)
	}
	if res.Counters[GroupTera][CounterChecksum] != int64(sum) || res.Counters[GroupTera][CounterMisorder] != 0 {
		t.Fatalf("teravalidate counters %v", res.Counters[GroupTera])
	}
}

func TestTeraGenSameDataWhateverTheMaps(t *testing.T) {
	e := newEnv(t)
	e.run("teragen", "rows", "1000", "maps", "1", "output", "/a")
	e.run("teragen", "rows", "1000", "maps", "7", "output", "/b")
	if !bytes.Equal(e.output("/a"), e.output("/b")) {
		t.Fatal("teragen data depends on the number of maps")
	}
}

func TestTeraValidateFindsMisorder(t *testing.T) {
	e := newEnv(t)
	rows := genRows(3000)
	sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i][:10], rows[j][:10]) < 0 })
	// File 0 in order but holding one swapped pair; file 1 starting
	// below file 0's end (a partitioning error).
	rows[100], rows[101] = rows[101], rows[100]
	e.write("/bad/part-r-00000", bytes.Join(rows[:2000], nil))
	second := append([][]byte{rows[1500]}, rows[2000:]...)
	e.write("/bad/part-r-00001", bytes.Join(second, nil))
	res := e.run("teravalidate", "input", "/bad", "output", "/valid")
	out := e.output("/valid")
	if got := res.Counters[GroupTera][CounterMisorder]; got != 2 {
		t.Fatalf("misordered = %d, want 2 (one within file 0, one between files); output:\n%s", got, out)
	}
	if !strings.Contains(string(out), "misorder between file #0 and file #1") ||
		!strings.Contains(string(out), "misorder in file #0 at row 101") {
		t.Fatalf("errors not described:\n%s", out)
	}
}

func TestTeraInputRejectsTruncatedRows(t *testing.T) {
	e := newEnv(t)
	e.write("/odd/part-0", make([]byte, 250))
	_, err := e.r.Run(t.Context(), "teravalidate", map[string]string{"input": "/odd", "output": "/v"})
	if err == nil || !strings.Contains(err.Error(), "multiple of 100") {
		t.Fatalf("err = %v, want a size error", err)
	}
}

func TestSortLinesAndKV(t *testing.T) {
	e := newEnv(t)
	r := rand.New(rand.NewPCG(5, 5))
	var in []string
	for range 20000 {
		in = append(in, fmt.Sprintf("%x\tv%d", r.Uint32()%50000, r.IntN(10)))
	}
	e.write("/in/x", []byte(strings.Join(in, "\n")+"\n"))

	e.run("sort", "input", "/in", "output", "/lines", "reduces", "4")
	want := append([]string(nil), in...)
	sort.Strings(want)
	if got := lines(e.output("/lines")); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sort --format lines: %d lines, first %q; want %d, first %q", len(got), got[:1], len(want), want[:1])
	}
	e.run("sort", "input", "/in", "output", "/kv", "reduces", "3", "format", "kv")
	got := lines(e.output("/kv"))
	if len(got) != len(in) || !sort.SliceIsSorted(got, func(i, j int) bool {
		ki, _, _ := strings.Cut(got[i], "\t")
		kj, _, _ := strings.Cut(got[j], "\t")
		return ki < kj
	}) {
		t.Fatalf("sort --format kv: %d lines, not ordered by key", len(got))
	}
	gs, ws := append([]string(nil), got...), append([]string(nil), in...)
	sort.Strings(gs)
	sort.Strings(ws)
	if strings.Join(gs, "\n") != strings.Join(ws, "\n") {
		t.Fatal("sort --format kv lost or changed records")
	}
}

func TestPartitionFileRoundTrip(t *testing.T) {
	cuts := [][]byte{[]byte("a"), {}, []byte("zzz\x00\xff")}
	got, err := decodePartitions(encodePartitions(cuts))
	if err != nil || len(got) != 3 || !bytes.Equal(got[2], cuts[2]) || len(got[1]) != 0 {
		t.Fatalf("decode: %q, %v", got, err)
	}
	enc := encodePartitions(cuts)
	for i := range enc {
		if _, err := decodePartitions(enc[:i]); err == nil {
			t.Fatalf("truncated file of %d bytes decoded", i)
		}
	}
}

func FuzzDecodePartitions(f *testing.F) {
	f.Add(encodePartitions([][]byte{[]byte("k1"), []byte("k2")}))
	f.Add([]byte(partitionMagic + "\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cuts, err := decodePartitions(b)
		if err != nil {
			return
		}
		again, err := decodePartitions(encodePartitions(cuts))
		if err != nil || len(again) != len(cuts) {
			t.Fatalf("decoded %q does not survive a round trip: %q, %v", cuts, again, err)
		}
		for i := range cuts {
			if !bytes.Equal(again[i], cuts[i]) {
				t.Fatalf("key %d changed in a round trip: %q -> %q", i, cuts[i], again[i])
			}
		}
	})
}

func TestTotalOrderPartition(t *testing.T) {
	o := newTotalOrder(nil)
	cuts := [][]byte{[]byte("c"), []byte("f"), []byte("m")}
	o.cuts.Store(&cuts)
	for _, c := range []struct {
		key  string
		n, p int
	}{{"a", 4, 0}, {"c", 4, 1}, {"d", 4, 1}, {"f", 4, 2}, {"zz", 4, 3}, {"zz", 2, 1}} {
		if got := o.Partition([]byte(c.key), c.n); got != c.p {
			t.Errorf("Partition(%q, %d) = %d, want %d", c.key, c.n, got, c.p)
		}
	}
}

var _ mapreduce.Partitioner = (*totalOrder)(nil)
