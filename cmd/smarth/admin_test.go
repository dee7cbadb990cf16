package main

import (
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/namenode"
	"smarth/internal/rpc/dfspb"
)

// adminRun runs `smarth admin args...` (see runSmarth).
func adminRun(args ...string) (int, string, string) {
	return runSmarth(append([]string{"admin"}, args...)...)
}

func TestAdminAgainstANamenode(t *testing.T) {
	cfg := namenode.DefaultConfig()
	cfg.RPCAddr, cfg.HTTPAddr, cfg.MetaDir, cfg.Superuser = "127.0.0.1:0", "127.0.0.1:0", t.TempDir(), "root-of-test"
	cfg.Auth = auth.Simple // the commands run with --user (the default is secure)
	nn, err := namenode.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	addr := nn.Addr()
	cases := []struct {
		args []string
		code int
		out  string // in the output, or in the error when code != 0
	}{
		{[]string{"--namenode", addr, "report"}, 0, "Datanodes: 0 live, 0 dead"},
		{[]string{"--namenode", addr, "speeds"}, 0, "No speed records"},
		{[]string{"--namenode", addr, "cache"}, 0, "Cache policy none: 0 hits, 0 misses"},
		{[]string{"--namenode", addr, "safemode", "get"}, 0, "Safe mode is OFF"},
		{[]string{"--namenode", addr, "--user", "root-of-test", "saveNamespace"}, 1, "saveNamespace: Safe mode should be turned ON in order to create namespace image."},
		{[]string{"--namenode", addr, "--user", "root-of-test", "safemode", "enter"}, 0, "Safe mode is ON: namenode is in safe mode: entered manually"},
		{[]string{"--namenode", addr, "--user", "mallory", "saveNamespace"}, 1, "saveNamespace: Access denied for user mallory. Superuser privilege is required"},
		{[]string{"--namenode", addr, "--user", "root-of-test", "saveNamespace"}, 0, "Save namespace successful"},
		{[]string{"--namenode", addr, "--user", "mallory", "safemode", "leave"}, 1, "safemode: user mallory is not a superuser"},
		{[]string{"--namenode", addr, "--user", "root-of-test", "safemode", "leave"}, 0, "Safe mode is OFF"},
		{[]string{"--namenode", addr, "safemode", "toggle"}, 2, `safemode: unknown action "toggle"`},
		{[]string{"--namenode", addr, "report", "--live", "--dead"}, 2, "--live and --dead exclude each other"},
		{[]string{"--namenode", "127.0.0.1:1", "report"}, 1, "cannot reach the namenode at 127.0.0.1:1"},
	}
	for _, c := range cases {
		code, out, msg := adminRun(c.args...)
		text := out
		if c.code != 0 {
			text = msg
		}
		if code != c.code || !strings.Contains(text, c.out) {
			t.Errorf("smarth admin %s: exit %d, output %q, error %q; want exit %d with %q", strings.Join(c.args, " "), code, out, msg, c.code, c.out)
		}
	}
}

// TestReportShowsNonDFSUsed: admin report gives HDFS's non DFS used
// (capacity - DFS used - remaining) for the live datanodes together and
// for each datanode.
func TestReportShowsNonDFSUsed(t *testing.T) {
	var b strings.Builder
	nodes := []*dfspb.DatanodeInfo{
		{Hostname: "dn1", Rack: "/r", State: dfspb.DatanodeState_LIVE, Capacity: 10 << 30, DfsUsed: 2 << 30, Remaining: 5 << 30},
		{Hostname: "dn2", Rack: "/r", State: dfspb.DatanodeState_LIVE, Capacity: 10 << 30, DfsUsed: 2 << 30, Remaining: 7 << 30},
	}
	printReport(&b, "nn:8020", &dfspb.SetSafeModeResponse{}, nodes, &dfspb.FsckResponse{Healthy: true})
	out := b.String()
	if !strings.Contains(out, "Capacity: 20.0 GiB, used 4.0 GiB, non DFS used 4.0 GiB, remaining 12.0 GiB (live datanodes)") {
		t.Errorf("report lacks the total non DFS used:\n%s", out)
	}
	if !strings.Contains(out, "NON DFS USED") || !strings.Contains(out, "3.0 GiB") || !strings.Contains(out, "1.0 GiB") {
		t.Errorf("report lacks each datanode's non DFS used (3.0 GiB, 1.0 GiB):\n%s", out)
	}
}
