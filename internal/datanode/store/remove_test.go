package store

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// failingRemove fails removals of files whose name contains match while
// match is non-empty.
type failingRemove struct{ match string }

func (f *failingRemove) remove(path string) error {
	if f.match != "" && strings.Contains(path, f.match) {
		return &os.PathError{Op: "remove", Path: path, Err: errors.New("injected I/O error")}
	}
	return os.Remove(path)
}

// TestRemoveFailureKeepsReplica: a delete whose file removal fails says so
// and keeps the replica known and corrupt (never served, still
// deletable), instead of forgetting it while its files stay on disk to
// come back at the next start; a create over it fails the same way. Once
// removal works (control) the delete succeeds and the files are gone.
func TestRemoveFailureKeepsReplica(t *testing.T) {
	dir := t.TempDir()
	rm := &failingRemove{}
	s, err := Open(dir, Options{Remove: rm.remove})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateRBW(5, 1, bpc, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, pattern(3000, 5), 1024)
	if _, err := w.Finalize(); err != nil {
		t.Fatal(err)
	}

	rm.match = "blk_5"
	if _, err := s.Delete(5, 1); err == nil || !strings.Contains(err.Error(), "injected I/O error") {
		t.Fatalf("Delete with a failing removal = %v, want the removal error", err)
	}
	got, ok := s.Get(5)
	if !ok || !got.Corrupt {
		t.Fatalf("after a failed delete the replica is %+v (known %v), want known and corrupt", got, ok)
	}
	if _, err := s.CreateTransferRBW(5, 2, bpc, 0); err == nil || !strings.Contains(err.Error(), "injected I/O error") {
		t.Fatalf("replacing an undeletable replica = %v, want the removal error", err)
	}

	rm.match = ""
	if _, err := s.Delete(5, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(5); ok {
		t.Fatal("replica still listed after a successful delete")
	}
	s2 := openStore(t, dir)
	if _, ok := s2.Get(5); ok {
		t.Fatal("deleted replica came back after reopening the store")
	}
}

// TestAbortReportsRemoveFailure: an aborted write whose files cannot be
// removed returns the error and leaves the replica marked corrupt.
func TestAbortReportsRemoveFailure(t *testing.T) {
	rm := &failingRemove{match: "blk_6"}
	s, err := Open(t.TempDir(), Options{Remove: rm.remove})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateRBW(6, 1, bpc, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, pattern(100, 6), 100)
	if err := w.Abort(); err == nil {
		t.Fatal("Abort hid the removal failure")
	}
	if got, ok := s.Get(6); !ok || !got.Corrupt {
		t.Fatalf("replica %+v (known %v), want known and corrupt", got, ok)
	}
}
