package resourcemanager

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/auth"
)

// A resource manager config that names no auth is secure: without the
// namenode's identity secret or its own credential it does not start, and
// the error names the missing file and where to get it.
func TestSecureByDefaultNeedsSecretAndToken(t *testing.T) {
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(t.TempDir(), "no-token"))
	cfg := DefaultConfig()
	if cfg.Auth != auth.Secure {
		t.Fatalf("default auth %q, want secure", cfg.Auth)
	}
	_, err := New(cfg, nil)
	for _, want := range []string{"auth_secret_file: not set", "meta_dir/auth.key", "token_file: not set", "smarth login"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("secure resource manager with no files: %v, want %q", err, want)
		}
	}
	dir := t.TempDir()
	cfg.Auth = "" // as a Config built in code
	cfg.AuthSecretFile, cfg.TokenFile = filepath.Join(dir, "auth.key"), filepath.Join(dir, "rm.token")
	err = cfg.Validate()
	for _, want := range []string{cfg.AuthSecretFile + " does not exist", cfg.TokenFile + " does not exist"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("files named but missing: %v, want %q", err, want)
		}
	}
	secret, err := auth.LoadOrCreateKey(cfg.AuthSecretFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.WriteTokenFile(cfg.TokenFile, auth.UserCredential(secret, "yarn")); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("with both files: %v", err)
	}
}

// auth: simple is opt-in and warned about at start.
func TestSimpleResourceManagerWarns(t *testing.T) {
	var logs bytes.Buffer
	cfg := DefaultConfig()
	cfg.Auth, cfg.NameNode = auth.Simple, "127.0.0.1:1"
	rm, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rm.Close()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "auth is simple") {
		t.Fatalf("no warning for auth: simple:\n%s", logs.String())
	}
}
