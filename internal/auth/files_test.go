package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteTokenFileStaleTmp: a token.tmp left behind with a wider mode
// (an interrupted write, a hand-made file) must not carry that mode to the
// credential: os.WriteFile keeps an existing file's mode.
func TestWriteTokenFileStaleTmp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens", "alice")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteTokenFile(path, "alice:cred"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Fatalf("token file mode %#o after a stale 0644 tmp, want 0600", m)
	}
	if got, err := ReadTokenFile(path); err != nil || got != "alice:cred" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

// TestReadPrivateFile: a file others may read is refused, naming it; an
// owner-only one is read; a missing one is os.ErrNotExist (LoadOrCreateKey
// relies on it).
func TestReadPrivateFile(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "k")
	if err := os.WriteFile(open, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPrivateFile(open, "key file"); err == nil || !strings.Contains(err.Error(), "key file "+open+" has mode 0640") {
		t.Fatalf("group-readable key: %v", err)
	}
	if err := os.Chmod(open, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadPrivateFile(open, "key file"); err != nil || string(b) != "x" {
		t.Fatalf("owner-only key: %q, %v", b, err)
	}
	if _, err := ReadPrivateFile(filepath.Join(dir, "none"), "key file"); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v, want not-exist", err)
	}
}
