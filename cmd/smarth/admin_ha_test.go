package main

import (
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/namenode"
	"smarth/internal/testenv"
)

// TestAdminHAStatusSingleNamenode: a namenode without HA is listed as
// the active member of a group of itself at term 0, in haadmin's words.
func TestAdminHAStatusSingleNamenode(t *testing.T) {
	nn := startSingleNamenode(t)
	code, out, msg := adminRun("--namenode", nn.Addr(), "ha", "status")
	if want := nn.Addr() + "   active   term 0"; code != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("smarth admin ha status: exit %d, output %q, error %q; want a line starting %q", code, out, msg, want)
	}
	code, _, msg = adminRun("--namenode", "127.0.0.1:1", "ha", "status")
	if code != 1 || !strings.Contains(msg, "cannot reach the namenode at 127.0.0.1:1") {
		t.Fatalf("ha status of a namenode that is not there: exit %d, %q", code, msg)
	}
}

// TestAdminNameNodeList: given an HA group's namenode list (--namenode
// or $SMARTH_NAMENODE, "a,b,c"), admin talks to the one that answers as
// the active, and says which answered nothing when none did.
func TestAdminNameNodeList(t *testing.T) {
	nn := startSingleNamenode(t)
	dead := testenv.DeadAddr(t)
	code, out, msg := adminRun("--namenode", dead+","+nn.Addr(), "ha", "status")
	if want := nn.Addr() + "   active   term 0"; code != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("smarth admin --namenode %s,%s ha status: exit %d, output %q, error %q; want a line starting %q",
			dead, nn.Addr(), code, out, msg, want)
	}
	dead2 := testenv.DeadAddr(t)
	code, _, msg = adminRun("--namenode", dead+","+dead2, "safemode", "get")
	if code != 1 || !strings.Contains(msg, "no namenode of "+dead+","+dead2+" answered") || !strings.Contains(msg, dead2) {
		t.Fatalf("admin with no namenode of the list up: exit %d, %q", code, msg)
	}
	code, _, msg = adminRun("--namenode", dead+",nonsense", "safemode", "get")
	if code != 2 || !strings.Contains(msg, `"nonsense" is not host:port`) {
		t.Fatalf("admin with a malformed list: exit %d, %q; want exit 2 naming the entry", code, msg)
	}
}

// startSingleNamenode starts a namenode without HA, simple auth, whose
// superuser is hdfs.
func startSingleNamenode(t *testing.T) *namenode.NameNode {
	t.Helper()
	cfg := namenode.DefaultConfig()
	cfg.RPCAddr, cfg.HTTPAddr, cfg.MetaDir = "127.0.0.1:0", "127.0.0.1:0", t.TempDir()
	cfg.Auth, cfg.Superuser = auth.Simple, "hdfs"
	nn, err := namenode.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	return nn
}

// TestAdminHAOpsUsageAndSingleNamenode: each HA operation has an Example;
// wrong argument counts are usage errors (exit 2) before any call; a
// namenode without HA refuses each with exit 1, saying it has no group.
func TestAdminHAOpsUsageAndSingleNamenode(t *testing.T) {
	for _, c := range newAdminHAOpsCmds(&adminConn{}) {
		if c.Example == "" || c.Short == "" || c.Long == "" {
			t.Errorf("admin ha %s: no Example, Short or Long help", c.Name())
		}
	}
	nn := startSingleNamenode(t)
	for _, args := range [][]string{{"transfer-leader"}, {"remove", "a", "b"}, {"add", "nn3", "127.0.0.1:1"}, {"add", "a", "b", "c", "d", "e"}} {
		code, _, msg := adminRun(append([]string{"--namenode", nn.Addr(), "--user", "hdfs", "ha"}, args...)...)
		if code != 2 || !strings.Contains(msg, "usage: smarth admin ha "+args[0]) {
			t.Errorf("admin ha %v: exit %d, %q; want 2 with the usage", args, code, msg)
		}
	}
	for what, args := range map[string][]string{
		"failover to nn1 failed: transfer-leader": {"transfer-leader", "nn1"},
		"removing nn1 failed: remove":             {"remove", "nn1"},
		"adding nn3 failed: add":                  {"add", "nn3", "127.0.0.1:1", "127.0.0.1:2"},
	} {
		code, out, msg := adminRun(append([]string{"--namenode", nn.Addr(), "--user", "hdfs", "ha"}, args...)...)
		if want := what + ": this namenode is not a member of an HA group"; code != 1 || !strings.Contains(msg, want) || out != "" {
			t.Errorf("admin ha %v on a namenode without HA: exit %d, stdout %q, stderr %q; want exit 1 with %q", args, code, out, msg, want)
		}
	}
}
