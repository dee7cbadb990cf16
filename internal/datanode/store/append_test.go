package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// finalized writes a finalized replica of data.
func finalized(t *testing.T, s *Store, id, gs uint64, data []byte) {
	t.Helper()
	w, err := s.CreateRBW(id, gs, bpc, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, data, 4096)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
}

// TestAppendToFinalized: a finalized replica ending inside a chunk is
// reopened under a new stamp and extended; the stored checksums are those
// of the whole data written at once, across a restart.
func TestAppendToFinalized(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	head, tail := pattern(5000, 1), pattern(70_001, 2) // 5000 = 9 chunks + 392 bytes
	finalized(t, s, 7, 1001, head)
	// The stamp and the length must be the namenode's.
	if _, err := s.Append(7, 1000, 1002, 5000, bpc); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append naming the wrong stamp: %v", err)
	}
	if _, err := s.Append(7, 1001, 1002, 4999, bpc); err == nil {
		t.Fatal("append naming the wrong length was accepted")
	}
	if _, err := s.Append(7, 1001, 1001, 5000, bpc); err == nil {
		t.Fatal("append without a newer stamp was accepted")
	}
	w, err := s.Append(7, 1001, 1002, 5000, bpc)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Get(7); r.State != RBW || r.GS != 1002 || r.Visible != 5000 {
		t.Fatalf("reopened replica: %+v", r)
	}
	// The writer's first packet fills the partial chunk (as the client
	// sends it), then whole packets.
	first := bpc - 5000%bpc
	if err := w.Write(5000, tail[:first], sumsOf(tail[:first])); err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, tail[first:], 65536)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, head...), tail...)
	fresh := openStore(t, t.TempDir())
	finalized(t, fresh, 7, 1002, want)
	for name, st := range map[string]*Store{"appended": s, "reopened after a restart": openStore(t, dir)} {
		if err := st.Verify(7, 1002, -1, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(readAll(t, st, 7, 1002), want) {
			t.Fatalf("%s: data differs", name)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, "current", "finalized", "blk_7_1002.meta"))
	wantMeta, _ := os.ReadFile(filepath.Join(fresh.Dir(), "current", "finalized", "blk_7_1002.meta"))
	if !bytes.Equal(got, wantMeta) {
		t.Fatal("meta file of the appended replica differs from the same bytes written at once")
	}
}

// TestAppendRetryAfterFailedSetup: a pipeline whose set-up failed on
// another node is built again under a newer stamp; the replica this node
// reopened for the first attempt is taken back at the block's length.
func TestAppendRetryAfterFailedSetup(t *testing.T) {
	s := openStore(t, t.TempDir())
	head := pattern(3000, 3)
	finalized(t, s, 8, 1001, head)
	w, err := s.Append(8, 1001, 1002, 3000, bpc)
	if err != nil {
		t.Fatal(err)
	}
	w.Close() // the attempt failed: the replica waits, being written
	if _, err := s.Append(8, 1001, 1002, 3000, bpc); !errors.Is(err, ErrExists) {
		t.Fatalf("a second append under the same stamp: %v", err)
	}
	w, err = s.Append(8, 1001, 1003, 3000, bpc)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, []byte("more"), 4096)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(8, 1003, -1, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, 8, 1003); !bytes.Equal(got, append(head, "more"...)) {
		t.Fatalf("read %d bytes", len(got))
	}
}

// TestAppendTornMoveIsUndone: a crash between the two renames that move a
// finalized replica back to rbw/ leaves a finalized replica as it was.
func TestAppendTornMoveIsUndone(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data := pattern(2000, 4)
	finalized(t, s, 9, 1001, data)
	// The block file moved, the meta file not yet.
	if err := os.Rename(filepath.Join(dir, "current", "finalized", "blk_9"), filepath.Join(dir, "rbw", "blk_9")); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dir)
	if r, ok := s2.Get(9); !ok || r.State != Finalized || r.GS != 1001 || r.Length != 2000 {
		t.Fatalf("after the torn move: %+v %v", r, ok)
	}
	if !bytes.Equal(readAll(t, s2, 9, 1001), data) {
		t.Fatal("data differs")
	}
}

// TestCutRecovery: truncate recovery shortens a finalized replica (plain
// lease recovery refuses to) and recomputes the cut chunk's checksum.
func TestCutRecovery(t *testing.T) {
	s := openStore(t, t.TempDir())
	data := pattern(10_000, 5)
	finalized(t, s, 10, 1001, data)
	if _, _, err := s.InitRecovery(10, 1002); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateRecovery(10, 1002, 1234); err == nil {
		t.Fatal("lease recovery shortened a finalized replica")
	}
	r, err := s.CutRecovery(10, 1002, 1234)
	if err != nil || r.Length != 1234 || r.GS != 1002 || r.State != Finalized {
		t.Fatalf("CutRecovery = %+v, %v", r, err)
	}
	if err := s.Verify(10, 1002, -1, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, s, 10, 1002), data[:1234]) {
		t.Fatal("data differs")
	}
}
