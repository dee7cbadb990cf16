package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/testcluster"
)

// TestAdminQuotas: setQuota/setSpaceQuota/clrQuota/clrSpaceQuota as hdfs
// dfsadmin (several directories, going on past a bad one), shown by fs
// count -q, enforced with HDFS's message, kept across a namenode restart.
func TestAdminQuotas(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1, BlockSize: 1 << 20})
	addr := c.NameNodeAddr()
	fsys := c.Client(t)
	ctx := context.Background()
	su := fsys.User() // the test cluster's superuser runs the tests
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, su))
	for _, d := range []string{"/a", "/b"} {
		if err := fsys.Mkdir(ctx, d, 0o755, false); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		code, _, msg := adminRun(append([]string{"--namenode", addr, "--user", su}, args...)...)
		return code, msg
	}
	if code, msg := run("setQuota", "2", "/a", "/b"); code != 0 {
		t.Fatalf("setQuota: %d %s", code, msg)
	}
	if code, msg := run("setSpaceQuota", "1m", "/a", "/nope"); code != 1 || !strings.Contains(msg, "1 of 2 directories failed") {
		t.Fatalf("setSpaceQuota with a missing directory: %d %s", code, msg)
	}
	if code, msg := run("setQuota", "0", "/a"); code != 2 || !strings.Contains(msg, `"0" is not a positive integer`) {
		t.Fatalf("setQuota 0: %d %s", code, msg)
	}
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, "mallory"))
	if code, _, msg := adminRun("--namenode", addr, "--user", "mallory", "clrQuota", "/a"); code != 1 {
		t.Fatalf("clrQuota by a non-superuser: %d %s", code, msg)
	}
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, su))

	var out bytes.Buffer
	sh := &fsshell.Shell{FS: fsys, Out: &out, Err: &out, Progress: fsshell.ProgressNever}
	count := func() string {
		out.Reset()
		if err := sh.Count(ctx, []string{"/a", "/b"}, fsshell.CountOptions{Quotas: true}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := "           2               1         1048576         1048576            1            0                  0 /a\n" +
		"           2               1            none             inf            1            0                  0 /b\n"
	if got := count(); got != want {
		t.Fatalf("count -q:\n%s\nwant\n%s", got, want)
	}
	if err := fsys.Mkdir(ctx, "/a/x", 0o755, false); err != nil {
		t.Fatal(err)
	}
	err := sh.Touchz(ctx, []string{"/a/y"})
	if !errors.Is(err, client.ErrQuotaExceeded) || !strings.Contains(err.Error(), "The NameSpace quota (directories and files) of directory /a is exceeded: quota=2 file count=3") {
		t.Fatalf("touchz over the name quota: %v", err)
	}

	// A write that needs a second block (1 MiB each) over a 1 MiB space
	// quota fails with HDFS's DSQuotaExceededException message.
	if code, msg := run("setSpaceQuota", "1M", "/b"); code != 0 {
		t.Fatalf("setSpaceQuota: %d %s", code, msg)
	}
	sh.Stdin = bytes.NewReader(make([]byte, 1536<<10))
	err = sh.Put(ctx, []string{"-"}, "/b/big", fsshell.PutOptions{Replication: 1})
	if !errors.Is(err, client.ErrQuotaExceeded) || !strings.Contains(err.Error(), "The DiskSpace quota of /b is exceeded: quota = 1048576 B = 1 MB but diskspace consumed = 2097152 B = 2 MB") {
		t.Fatalf("put over the space quota: %v", err)
	}

	c.RestartNameNode()
	if err := fsys.Mkdir(ctx, "/a/z", 0o755, false); !errors.Is(err, client.ErrQuotaExceeded) {
		t.Fatalf("after a restart the name quota is gone: %v", err)
	}
	if code, msg := run("clrQuota", "/a"); code != 0 {
		t.Fatalf("clrQuota: %d %s", code, msg)
	}
	if code, msg := run("clrSpaceQuota", "/a"); code != 0 {
		t.Fatalf("clrSpaceQuota: %d %s", code, msg)
	}
	if got := count(); !strings.HasPrefix(got, "        none             inf            none             inf ") {
		t.Fatalf("count -q after clearing: %s", got)
	}
}
