package main

import (
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/namenode"
)

// TestAdminHAStatusSingleNamenode: a namenode without HA is listed as
// the active member of a group of itself at term 0, in haadmin's words.
func TestAdminHAStatusSingleNamenode(t *testing.T) {
	cfg := namenode.DefaultConfig()
	cfg.RPCAddr, cfg.HTTPAddr, cfg.MetaDir = "127.0.0.1:0", "127.0.0.1:0", t.TempDir()
	cfg.Auth = auth.Simple
	nn, err := namenode.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	code, out, msg := adminRun("--namenode", nn.Addr(), "ha", "status")
	if want := nn.Addr() + "   active   term 0"; code != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("smarth admin ha status: exit %d, output %q, error %q; want a line starting %q", code, out, msg, want)
	}
	code, _, msg = adminRun("--namenode", "127.0.0.1:1", "ha", "status")
	if code != 1 || !strings.Contains(msg, "cannot reach the namenode at 127.0.0.1:1") {
		t.Fatalf("ha status of a namenode that is not there: exit %d, %q", code, msg)
	}
}
