package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteReplacesWithExactMode: the file gets exactly the mode asked
// for, under a umask that would narrow it and over an old file with a
// wider one, and no temporary file is left.
func TestWriteReplacesWithExactMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		mode os.FileMode
	}{{"key", 0o600}, {"state.json", 0o644}, {"ready", 0o640}} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte("old contents, longer than the new"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := Write(path, []byte("new"), c.mode); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.mode {
			t.Errorf("%s: mode %#o, want %#o", c.name, st.Mode().Perm(), c.mode)
		}
		if b, _ := os.ReadFile(path); string(b) != "new" {
			t.Errorf("%s: contents %q, want %q", c.name, b, "new")
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("directory holds %d entries after three writes, want 3 (a temporary file left?)", len(ents))
	}
}

// TestWriteFailureLeavesTheOldFile: when the rename cannot happen (the
// name is a directory), the old entry is untouched and the temporary file
// is removed.
func TestWriteFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(target, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, []byte("x"), 0o644); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	if st, err := os.Stat(filepath.Join(target, "child")); err != nil || !st.IsDir() {
		t.Fatalf("the old entry changed: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want 1: the temporary file was left behind", len(ents))
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}
