package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseModeDefaultsToSecure(t *testing.T) {
	for in, want := range map[string]string{"": Secure, Secure: Secure, Simple: Simple} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("Simple"); err == nil || !strings.Contains(err.Error(), `auth: "Simple"`) {
		t.Errorf("ParseMode(Simple) = %v, want the bad value named", err)
	}
}

// RequireKeyFile and RequireCredential name the key, the path and the
// hint for every way a secret can be unusable.
func TestRequireFiles(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if err := RequireKeyFile("datanode_key_file", "", "HINT"); err == nil || !strings.Contains(err.Error(), "datanode_key_file: not set") || !strings.Contains(err.Error(), "HINT") {
		t.Errorf("unset: %v", err)
	}
	if err := RequireKeyFile("datanode_key_file", key, "HINT"); err == nil || !strings.Contains(err.Error(), key+" does not exist: HINT") {
		t.Errorf("missing: %v", err)
	}
	if err := os.WriteFile(key, []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RequireKeyFile("datanode_key_file", key, "HINT"); err == nil || !strings.Contains(err.Error(), "not a hex key") {
		t.Errorf("garbage: %v", err)
	}
	os.Remove(key)
	if _, err := LoadOrCreateKey(key); err != nil {
		t.Fatal(err)
	}
	if err := RequireKeyFile("datanode_key_file", key, "HINT"); err != nil {
		t.Errorf("good key: %v", err)
	}

	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(dir, "default-token"))
	if err := RequireCredential("token_file", "", "HINT"); err == nil || !strings.Contains(err.Error(), "default-token does not exist") {
		t.Errorf("no token anywhere: %v", err)
	}
	tok := filepath.Join(dir, "t")
	if err := RequireCredential("token_file", tok, "HINT"); err == nil || !strings.Contains(err.Error(), tok+" does not exist: HINT") {
		t.Errorf("named token missing: %v", err)
	}
	if err := os.WriteFile(tok, []byte("u:00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RequireCredential("token_file", tok, "HINT"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("readable token: %v", err)
	}
	if err := os.Chmod(tok, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RequireCredential("token_file", tok, "HINT"); err != nil {
		t.Errorf("good token: %v", err)
	}
	t.Setenv("SMARTH_TOKEN_FILE", tok)
	if err := RequireCredential("token_file", "", "HINT"); err != nil {
		t.Errorf("token from SMARTH_TOKEN_FILE: %v", err)
	}
}
