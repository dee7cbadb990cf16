package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const bpc = 512

func sumsOf(data []byte) []byte {
	var out []byte
	for len(data) > 0 {
		n := min(bpc, len(data))
		out = binary.BigEndian.AppendUint32(out, crc32.Checksum(data[:n], castagnoli))
		data = data[n:]
	}
	return out
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeAll appends data in packets of size pkt.
func writeAll(t *testing.T, w *Writer, data []byte, pkt int) {
	t.Helper()
	for off := 0; off < len(data); off += pkt {
		chunk := data[off:min(off+pkt, len(data))]
		if err := w.Write(w.Length(), chunk, sumsOf(chunk)); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, s *Store, id, gs uint64) []byte {
	t.Helper()
	h, err := s.Open(id, gs)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	b, err := io.ReadAll(io.NewSectionReader(h.Data, 0, h.Visible))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteFinalizeReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data := pattern(200_000, 1)
	w, err := s.CreateRBW(1, 1001, bpc, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, data, 65536)
	if r, _ := s.Get(1); r.State != RBW || r.Length != int64(len(data)) {
		t.Fatalf("before finalize: %+v", r)
	}
	r, err := w.Finalize()
	if err != nil || r.State != Finalized || r.Length != int64(len(data)) {
		t.Fatalf("Finalize = %+v, %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "current", "finalized", "blk_1_1001.meta")); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(1, 1001, -1, nil); err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	s2 := openStore(t, dir)
	if s2.ID() != id {
		t.Errorf("id changed across restart: %s → %s", id, s2.ID())
	}
	got, ok := s2.Get(1)
	if !ok || got.State != Finalized || got.Length != int64(len(data)) || got.GS != 1001 {
		t.Fatalf("after restart: %+v %v", got, ok)
	}
	if !bytes.Equal(readAll(t, s2, 1, 1001), data) {
		t.Fatal("data differs after restart")
	}
	if _, err := s2.CreateRBW(1, 1001, bpc, false, 0); !errors.Is(err, ErrExists) {
		t.Fatalf("create over finalized: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	s := openStore(t, t.TempDir())
	if _, err := s.Open(5, 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown block: %v", err)
	}
	w, _ := s.CreateRBW(5, 10, bpc, false, 0)
	writeAll(t, w, pattern(1000, 0), 1000)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(5, 11); !errors.Is(err, ErrNotFound) {
		t.Fatalf("newer gs requested: %v", err)
	}
	s.MarkCorrupt(5, 10)
	if _, err := s.Open(5, 10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt: %v", err)
	}
}

func TestVerifyFindsFlippedByte(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	w, _ := s.CreateRBW(2, 1, bpc, false, 0)
	writeAll(t, w, pattern(10_000, 3), 4096)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "current", "finalized", "blk_2")
	b, _ := os.ReadFile(path)
	b[7777] ^= 1
	os.WriteFile(path, b, 0o644)
	if err := s.Verify(2, 1, -1, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify = %v, want ErrCorrupt", err)
	}
}

func TestRBWScanDropsTornChunk(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	w, _ := s.CreateRBW(3, 7, bpc, false, 0)
	data := pattern(5000, 9)
	writeAll(t, w, data, 1024)
	w.Close()
	// Simulate a crash after the data of a next chunk hit the disk but
	// before its checksum did, and a torn last chunk.
	f, _ := os.OpenFile(filepath.Join(dir, "rbw", "blk_3"), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(pattern(700, 1))
	f.Close()
	s2 := openStore(t, dir)
	r, _ := s2.Get(3)
	if r.State != RBW || r.Length != 5000 {
		t.Fatalf("after restart: %+v, want RBW of 5000 bytes", r)
	}
	// Corrupt the partial last chunk: the scan drops it.
	path := filepath.Join(dir, "rbw", "blk_3")
	b, _ := os.ReadFile(path)
	b[4700] ^= 0xff
	os.WriteFile(path, b, 0o644)
	s3 := openStore(t, dir)
	if r, _ := s3.Get(3); r.Length != 4608 {
		t.Fatalf("torn chunk kept: length %d, want 4608", r.Length)
	}
}

func TestRecoverRBWUnalignedThenAppend(t *testing.T) {
	s := openStore(t, t.TempDir())
	w, _ := s.CreateRBW(4, 100, bpc, false, 0)
	data := pattern(3000, 5)
	writeAll(t, w, data, 3000)
	stopped := false
	w.SetStopper(func() { stopped = true; w.Close() })
	// Client saw 1300 bytes acked (mid-chunk); resume under gs 101.
	w2, err := s.RecoverRBW(4, 101, 1300, bpc)
	if err != nil {
		t.Fatal(err)
	}
	if !stopped {
		t.Error("old writer was not asked to stop")
	}
	more := pattern(2000, 8)
	if err := w2.Write(1300, more[:100], sumsOf(more[:100])); err != nil { // misaligned append
		t.Fatal(err)
	}
	if err := w2.Write(1400, more[100:], sumsOf(more[100:])); err != nil {
		t.Fatal(err)
	}
	r, err := w2.Finalize()
	if err != nil || r.GS != 101 || r.Length != 3300 {
		t.Fatalf("%+v %v", r, err)
	}
	if err := s.Verify(4, 101, -1, nil); err != nil {
		t.Fatalf("checksums after unaligned resume: %v", err)
	}
	want := append(append([]byte{}, data[:1300]...), more...)
	if !bytes.Equal(readAll(t, s, 4, 101), want) {
		t.Fatal("data differs")
	}
	if _, err := s.RecoverRBW(99, 2, 0, bpc); !errors.Is(err, ErrNotFound) {
		t.Fatalf("recover unknown: %v", err)
	}
}

// A multi-pipeline first node finalizes the whole block while the client
// has seen only a prefix acknowledged by the whole pipeline. Recovery under
// a newer stamp takes the replica back to RBW, cut to the acknowledged
// length; an older or equal stamp is refused.
func TestRecoverFinalizedBeyondAcked(t *testing.T) {
	s := openStore(t, t.TempDir())
	w, _ := s.CreateRBW(7, 100, bpc, false, 0)
	data := pattern(4096, 6)
	writeAll(t, w, data, 1024)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecoverRBW(7, 99, 1024, bpc); !errors.Is(err, ErrExists) {
		t.Fatalf("recovery under an older stamp: %v, want ErrExists", err)
	}
	w2, err := s.RecoverRBW(7, 101, 1024, bpc)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Get(7); r.State != RBW || r.Length != 1024 || r.GS != 101 {
		t.Fatalf("after recovery: %+v, want RBW of 1024 bytes at gs 101", r)
	}
	if err := w2.Write(1024, data[1024:], sumsOf(data[1024:])); err != nil {
		t.Fatal(err)
	}
	if r, err := w2.Finalize(); err != nil || r.Length != 4096 {
		t.Fatalf("%+v %v", r, err)
	}
	if !bytes.Equal(readAll(t, s, 7, 101), data) {
		t.Fatal("data differs")
	}
}

// Transfers (re-replication, a node added to a pipeline) replace a
// finalized replica with an older generation stamp, as in HDFS; a client's
// new pipeline and a transfer at the same or an older stamp do not.
func TestTransferReplacesStaleFinalized(t *testing.T) {
	s := openStore(t, t.TempDir())
	finalized := func(id, gs uint64) {
		t.Helper()
		w, err := s.CreateRBW(id, gs, bpc, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, pattern(1000, 1), 1000)
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
	}
	finalized(8, 100)
	if _, err := s.CreateRBW(8, 101, bpc, false, 0); !errors.Is(err, ErrExists) {
		t.Fatalf("a new pipeline over a finalized replica: %v, want ErrExists", err)
	}
	for _, gs := range []uint64{99, 100} {
		if _, err := s.CreateRBW(8, gs, bpc, true, 0); !errors.Is(err, ErrExists) {
			t.Fatalf("a copy at stamp %d over a finalized replica at 100: %v, want ErrExists", gs, err)
		}
	}
	data := pattern(3000, 2)
	w, err := s.CreateRBW(8, 101, bpc, true, 0)
	if err != nil {
		t.Fatalf("a copy at a newer stamp: %v", err)
	}
	writeAll(t, w, data, 1000)
	if r, err := w.Finalize(); err != nil || r.GS != 101 || r.Length != 3000 {
		t.Fatalf("%+v %v", r, err)
	}
	if !bytes.Equal(readAll(t, s, 8, 101), data) {
		t.Fatal("data differs")
	}

	finalized(9, 100)
	w, err = s.CreateTransferRBW(9, 102, bpc, 0)
	if err != nil {
		t.Fatalf("a pipeline's added node at a newer stamp: %v", err)
	}
	if r, _ := s.Get(9); r.State != RBW || r.GS != 102 || r.Length != 0 {
		t.Fatalf("after the transfer began: %+v, want an empty RBW at 102", r)
	}
	w.Abort()
}

func TestLeaseRecovery(t *testing.T) {
	s := openStore(t, t.TempDir())
	w, _ := s.CreateRBW(6, 5, bpc, false, 0)
	writeAll(t, w, pattern(4000, 1), 1000)
	w.Close()
	r, orig, err := s.InitRecovery(6, 9)
	if err != nil || orig != RBW || r.State != RUR || r.Length != 4000 {
		t.Fatalf("InitRecovery = %+v %v %v", r, orig, err)
	}
	if _, _, err := s.InitRecovery(6, 8); err == nil {
		t.Fatal("older recovery accepted")
	}
	if _, err := s.UpdateRecovery(6, 9, 5000); err == nil {
		t.Fatal("extending a replica accepted")
	}
	r, err = s.UpdateRecovery(6, 9, 2500)
	if err != nil || r.State != Finalized || r.GS != 9 || r.Length != 2500 {
		t.Fatalf("UpdateRecovery = %+v %v", r, err)
	}
	if err := s.Verify(6, 9, -1, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteStopsWriter(t *testing.T) {
	s := openStore(t, t.TempDir())
	w, _ := s.CreateRBW(7, 1, bpc, false, 0)
	w.SetStopper(func() { w.Close() })
	if _, err := s.Delete(7, 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete with wrong gs: %v", err)
	}
	if _, err := s.Delete(7, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(7); ok {
		t.Fatal("replica still listed")
	}
	if err := w.Write(0, []byte("x"), sumsOf([]byte("x"))); err == nil {
		t.Fatal("write after delete succeeded")
	}
}

func TestTemporaryIsInvisibleAndDiscarded(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	w, _ := s.CreateRBW(8, 1, bpc, true, 0)
	writeAll(t, w, pattern(100, 0), 100)
	if len(s.Replicas()) != 0 {
		t.Fatal("temporary replica reported")
	}
	if _, err := s.Open(8, 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("temporary replica readable: %v", err)
	}
	r, err := w.Finalize()
	if err != nil || r.State != Finalized {
		t.Fatalf("%+v %v", r, err)
	}
	if len(s.Replicas()) != 1 {
		t.Fatal("finalized temporary replica not reported")
	}
	w2, _ := s.CreateRBW(9, 1, bpc, true, 0)
	writeAll(t, w2, pattern(100, 0), 100)
	s2 := openStore(t, dir) // a restart while the copy is in progress
	if _, ok := s2.Get(9); ok {
		t.Fatal("temporary replica survived restart")
	}
	if _, ok := s2.Get(8); !ok {
		t.Fatal("finalized copy lost on restart")
	}
}

func TestUsage(t *testing.T) {
	s := openStore(t, t.TempDir())
	u, err := s.Usage()
	if err != nil || u.Capacity <= 0 || u.Remaining <= 0 || u.Used != 0 {
		t.Fatalf("%+v %v", u, err)
	}
}

// TestFinalizeWithSyncOnClose: the fsync path (files, then the finalized
// directory) finalizes like the default one, and the replica is found
// finalized, byte for byte, by a store opened afterwards.
func TestFinalizeWithSyncOnClose(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{SyncOnClose: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateRBW(7, 1001, bpc, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(3*bpc+100, 3)
	writeAll(t, w, data, 1024)
	rep, err := w.Finalize()
	if err != nil {
		t.Fatalf("finalize with sync_on_close: %v", err)
	}
	if rep.State != Finalized || rep.Length != int64(len(data)) {
		t.Fatalf("finalized replica %+v, want Finalized of %d bytes", rep, len(data))
	}
	s2 := openStore(t, dir)
	if got, ok := s2.Get(7); !ok || got.State != Finalized || got.GS != 1001 {
		t.Fatalf("after reopen: %+v %v", got, ok)
	}
	if got := readAll(t, s2, 7, 1001); !bytes.Equal(got, data) {
		t.Fatalf("after reopen: read %d bytes, want the %d written", len(got), len(data))
	}
}

// Options.Changed fires for every change that makes an earlier copy of a
// finalized replica stale (the memory cache depends on it), and not for a
// plain finalize.
func TestChangedHook(t *testing.T) {
	var changed []uint64
	s, err := Open(t.TempDir(), Options{Changed: func(id uint64) { changed = append(changed, id) }})
	if err != nil {
		t.Fatal(err)
	}
	finalized := func(id, gs uint64) {
		t.Helper()
		w, err := s.CreateRBW(id, gs, bpc, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, pattern(3000, byte(id)), 1024)
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, want ...uint64) {
		t.Helper()
		if !slices.Equal(changed, want) {
			t.Errorf("%s: Changed called for %v, want %v", what, changed, want)
		}
		changed = nil
	}
	finalized(1, 1)
	expect("create and finalize")
	s.MarkCorrupt(1, 1)
	expect("mark corrupt", 1)
	if _, err := s.Delete(1, 1); err != nil {
		t.Fatal(err)
	}
	expect("delete", 1)

	finalized(2, 1)
	changed = nil
	if _, _, err := s.InitRecovery(2, 2); err != nil {
		t.Fatal(err)
	}
	expect("init recovery", 2)
	if _, err := s.UpdateRecovery(2, 2, 3000); err != nil {
		t.Fatal(err)
	}
	expect("update recovery (new generation stamp)", 2)

	// A pipeline recovery takes a finalized replica back to RBW.
	w, err := s.RecoverRBW(2, 3, 3000, bpc)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if len(changed) == 0 || changed[0] != 2 {
		t.Errorf("pipeline recovery of a finalized replica: Changed called for %v", changed)
	}
	changed = nil

	finalized(3, 1)
	changed = nil
	if w, err := s.CreateTransferRBW(3, 2, bpc, 0); err != nil {
		t.Fatal(err)
	} else {
		w.Abort()
	}
	if len(changed) == 0 || changed[0] != 3 {
		t.Errorf("transfer replacing a stale finalized replica: Changed called for %v", changed)
	}
}
