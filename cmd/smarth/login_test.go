package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/auth"
)

func loginRun(args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetArgs(append([]string{"login"}, args...))
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	err := root.Execute()
	return out.String(), err
}

// TestLogin: login signs the user's credential with the identity secret
// into a 0600 token file the namenode's check accepts for that user; a
// secret others can read, or none, is refused and writes nothing.
func TestLogin(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "auth.key")
	secret, err := auth.LoadOrCreateKey(secretFile)
	if err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "tok", "alice")
	if out, err := loginRun("--secret-file", secretFile, "--user", "alice", "--token-file", token); err != nil || !strings.Contains(out, "token for alice") {
		t.Fatalf("login: %q %v", out, err)
	}
	cred, err := auth.ReadTokenFile(token) // refuses a file others can read
	if err != nil {
		t.Fatal(err)
	}
	if u, err := auth.VerifyUser(secret, cred); err != nil || u != "alice" {
		t.Fatalf("token proves %q (%v), want alice", u, err)
	}

	// The local cluster's secret by --home (control for the default path).
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.LoadOrCreateKey(filepath.Join(home, "keys", "auth.key")); err != nil {
		t.Fatal(err)
	}
	if _, err := loginRun("--home", home, "--user", "bob", "--token-file", filepath.Join(dir, "bob")); err != nil {
		t.Fatalf("login --home: %v", err)
	}
	// Without --token-file a local cluster's token goes to its home,
	// where clients of that cluster look (cluster.ClientSecurity).
	if _, err := loginRun("--home", home, "--user", "bob"); err != nil {
		t.Fatalf("login --home: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(home, "tokens", "bob.token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("bob's token in the cluster home: %v %v", fi, err)
	}

	if err := os.Chmod(secretFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loginRun("--secret-file", secretFile, "--user", "carol", "--token-file", filepath.Join(dir, "carol")); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("login with a world-readable secret: %v, want refused", err)
	}
	if _, err := loginRun("--home", t.TempDir(), "--token-file", filepath.Join(dir, "dave")); err == nil || !strings.Contains(err.Error(), "is the cluster secure") {
		t.Fatalf("login on a cluster without keys: %v, want a hint", err)
	}
	for _, f := range []string{"carol", "dave"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a refused login wrote %s", f)
		}
	}
}
