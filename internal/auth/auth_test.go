package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyFileAndCredentials(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k", "auth.key")
	k1, err := LoadOrCreateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(p)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("second load: %v", err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %#o", st.Mode().Perm())
	}
	os.Chmod(p, 0o644)
	if _, err := LoadKey(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key accepted: %v", err)
	}
	cred := UserCredential(k1, "alice")
	if u, err := VerifyUser(k1, cred); err != nil || u != "alice" {
		t.Fatalf("verify: %q %v", u, err)
	}
	for _, bad := range []string{"", "alice", "bob" + cred[len("alice"):], cred + "0"} {
		if _, err := VerifyUser(k1, bad); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("credential %q accepted", bad)
		}
	}
	if _, err := VerifyDatanode(k1, DatanodeCredential(k1, "dn1")); err != nil {
		t.Fatal(err)
	}
	tf := filepath.Join(dir, "token")
	if err := WriteTokenFile(tf, cred); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTokenFile(tf); err != nil || got != cred {
		t.Fatalf("token file: %q %v", got, err)
	}
}
