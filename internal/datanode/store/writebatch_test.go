package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A batch of packets written with WriteBatch (one pwritev per file) leaves
// the same block and meta files as the packets written one by one, and
// the replica verifies; a batch that would misplace checksums (a packet
// ending inside a chunk before the last, an unaligned offset) is refused
// and writes nothing.
func TestWriteBatchMatchesWrites(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data := pattern(5*4096+700, 9)
	one, _ := s.CreateRBW(1, 1, bpc, false, 0)
	writeAll(t, one, data, 4096)
	if _, err := one.Finalize(); err != nil {
		t.Fatal(err)
	}

	w, _ := s.CreateRBW(2, 1, bpc, false, 0)
	// Two batches: 3 packets, then 2 more plus the partial tail.
	cut := func(from, to int) ([][]byte, [][]byte) {
		var ds, ss [][]byte
		for off := from; off < to; off += 4096 {
			d := data[off:min(off+4096, to)]
			ds, ss = append(ds, d), append(ss, sumsOf(d))
		}
		return ds, ss
	}
	ds, ss := cut(0, 3*4096)
	if err := w.WriteBatch(0, ds, ss); err != nil {
		t.Fatal(err)
	}
	bad := [][]byte{data[3*4096 : 3*4096+100], data[3*4096+100 : 4*4096]}
	if err := w.WriteBatch(3*4096, bad, [][]byte{sumsOf(bad[0]), sumsOf(bad[1])}); err == nil {
		t.Fatal("a batch whose first packet ends inside a chunk was accepted")
	}
	if err := w.WriteBatch(3*4096+100, [][]byte{data[:512], data[:512]}, [][]byte{sumsOf(data[:512]), sumsOf(data[:512])}); err == nil {
		t.Fatal("a batch at an offset that is not the replica's length was accepted")
	}
	if w.Length() != 3*4096 {
		t.Fatalf("refused batches changed the length to %d", w.Length())
	}
	ds, ss = cut(3*4096, len(data))
	if err := w.WriteBatch(3*4096, ds, ss); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, 2, 1); !bytes.Equal(got, data) {
		t.Fatal("batched replica's data differs")
	}
	fin := filepath.Join(dir, "current", "finalized")
	m1, _ := os.ReadFile(filepath.Join(fin, "blk_1_1.meta"))
	m2, _ := os.ReadFile(filepath.Join(fin, "blk_2_1.meta"))
	if len(m1) == 0 || !bytes.Equal(m1, m2) {
		t.Fatalf("meta files differ: %d bytes one by one, %d batched", len(m1), len(m2))
	}
	if err := s.Verify(2, 1, -1, nil); err != nil {
		t.Fatalf("Verify of the batched replica: %v", err)
	}
}

// skipWritten after a short pwritev resumes inside the right buffer.
func TestSkipWritten(t *testing.T) {
	bufs := [][]byte{[]byte("abc"), []byte("de"), []byte("fgh")}
	got := skipWritten(bufs, 4)
	if len(got) != 2 || string(got[0]) != "e" || string(got[1]) != "fgh" {
		t.Fatalf("skipWritten(4) = %q", got)
	}
	if got := skipWritten([][]byte{[]byte("ab"), nil}, 2); len(got) != 0 {
		t.Fatalf("skipWritten of everything = %q", got)
	}
}
