package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCopyRecovery: copy-on-truncate makes a new finalized replica of the
// prefix under the new id and stamp, with valid checksums (the cut chunk's
// recomputed), and leaves the source replica's files byte for byte as
// they were; the copy survives a restart.
func TestCopyRecovery(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	data := pattern(10_000, 7)
	finalized(t, s, 20, 1001, data)
	srcData := filepath.Join(dir, "current", "finalized", "blk_20")
	srcMeta := filepath.Join(dir, "current", "finalized", "blk_20_1001.meta")
	beforeData, _ := os.ReadFile(srcData)
	beforeMeta, _ := os.ReadFile(srcMeta)

	if _, err := s.CopyRecovery(20, 1001, 1005, 21, 1234); err == nil {
		t.Fatal("copy without InitRecovery under that id was accepted")
	}
	if _, _, err := s.InitRecovery(20, 1005); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CopyRecovery(20, 1000, 1005, 21, 1234); !errors.Is(err, ErrNotFound) {
		t.Fatalf("copy naming the wrong source stamp: %v", err)
	}
	if _, err := s.CopyRecovery(20, 1001, 1005, 21, 10_001); err == nil {
		t.Fatal("copy longer than the source was accepted")
	}
	for _, n := range []int64{1234, 1024} { // inside a chunk, then on a chunk boundary (a retry replaces)
		r, err := s.CopyRecovery(20, 1001, 1005, 21, n)
		if err != nil || r.BlockID != 21 || r.GS != 1005 || r.Length != n || r.State != Finalized {
			t.Fatalf("CopyRecovery(%d) = %+v, %v", n, r, err)
		}
		if err := s.Verify(21, 1005, -1, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readAll(t, s, 21, 1005), data[:n]) {
			t.Fatalf("copy of %d bytes differs", n)
		}
	}
	if src, _ := s.Get(20); src.GS != 1001 || src.Length != 10_000 || src.State != Finalized {
		t.Fatalf("source replica changed: %+v", src)
	}
	afterData, _ := os.ReadFile(srcData)
	afterMeta, _ := os.ReadFile(srcMeta)
	if !bytes.Equal(beforeData, afterData) || !bytes.Equal(beforeMeta, afterMeta) {
		t.Fatal("the source replica's files changed")
	}
	if err := s.Verify(20, 1001, -1, nil); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dir)
	if r, ok := s2.Get(21); !ok || r.GS != 1005 || r.Length != 1024 {
		t.Fatalf("after restart: %+v %v", r, ok)
	}
	if !bytes.Equal(readAll(t, s2, 20, 1001), data) {
		t.Fatal("source differs after restart")
	}
}

// TestCopyRecoveryCorruptChunk: a source whose cut chunk fails its
// checksum is not copied (a fresh checksum would hide the corruption).
func TestCopyRecoveryCorruptChunk(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	finalized(t, s, 30, 1001, pattern(4096, 3))
	f, err := os.OpenFile(filepath.Join(dir, "current", "finalized", "blk_30"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0x00, 0xff}, 1030); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := s.InitRecovery(30, 1002); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CopyRecovery(30, 1001, 1002, 31, 1100); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("copy of a corrupt chunk: %v", err)
	}
	if _, ok := s.Get(31); ok {
		t.Fatal("a replica was left after the failed copy")
	}
}
