package datanode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/auth"
)

// A datanode config that names no auth is secure: without a
// datanode_key_file it does not start, and the error says which key is
// missing and where to get it (not a refusal at registration later).
func TestSecureByDefaultNeedsDatanodeKey(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DataAddr, cfg.IPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	if cfg.Auth != auth.Secure {
		t.Fatalf("default auth %q, want secure", cfg.Auth)
	}
	_, err := New(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "datanode_key_file: not set") || !strings.Contains(err.Error(), "meta_dir/datanode.key") {
		t.Fatalf("secure datanode without a key: %v, want datanode_key_file named with where to get it", err)
	}
	cfg.Auth = ""
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "datanode_key_file: not set") {
		t.Fatalf("auth unset, no key: %v", err)
	}

	missing := filepath.Join(t.TempDir(), "datanode.key")
	cfg.DatanodeKeyFile = missing
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), missing+" does not exist") {
		t.Fatalf("key file missing: %v, want its path named", err)
	}
	if _, err := auth.LoadOrCreateKey(missing); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("with the key: %v", err)
	}
	if err := os.Chmod(missing, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key: %v", err)
	}

	cfg.Auth, cfg.DatanodeKeyFile = auth.Simple, ""
	if err := cfg.Validate(); err != nil {
		t.Fatalf("auth: simple without a key: %v", err)
	}
	cfg.Auth = "kerberos"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `auth: "kerberos"`) {
		t.Fatalf("unknown auth: %v", err)
	}
}

// auth: simple is opt-in and warned about at start.
func TestSimpleDatanodeWarns(t *testing.T) {
	_, logs := startDataNode(t, startFakeNameNode(t), "", nil)
	if out := logs.String(); !strings.Contains(out, `"level":"WARN"`) || !strings.Contains(out, "auth is simple") {
		t.Fatalf("no start-up warning for auth: simple:\n%.2000s", out)
	}
}
