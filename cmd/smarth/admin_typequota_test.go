package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/testcluster"
)

// TestAdminTypeQuotas: setSpaceQuota -storageType DISK on a real cluster
// stops a write that would pass it with HDFS's
// QuotaByStorageTypeExceededException message naming the directory; fs
// count -q -t shows the type columns as hdfs dfs -count -q -t; the quota
// survives a namenode restart; clrSpaceQuota -storageType DISK lifts it.
func TestAdminTypeQuotas(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1, BlockSize: 1 << 20})
	addr := c.NameNodeAddr()
	fsys := c.Client(t)
	ctx := context.Background()
	su := fsys.User()
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, su))
	if err := fsys.Mkdir(ctx, "/x", 0o755, false); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		code, _, msg := adminRun(append([]string{"--namenode", addr, "--user", su}, args...)...)
		return code, msg
	}
	// hdfs dfsadmin's spelling: one dash, the type before the quota.
	if code, msg := run("setSpaceQuota", "-storageType", "DISK", "1m", "/x"); code != 0 {
		t.Fatalf("setSpaceQuota -storageType DISK: %d %s", code, msg)
	}
	if code, msg := run("setSpaceQuota", "5g", "-storageType", "ssd", "/x"); code != 0 {
		t.Fatalf("setSpaceQuota -storageType ssd after the quota: %d %s", code, msg)
	}
	if code, msg := run("setSpaceQuota", "-storageType", "FLASH", "1m", "/x"); code != 2 || !strings.Contains(msg, `"FLASH"`) {
		t.Fatalf("an unknown storage type: %d %s", code, msg)
	}
	if code, msg := run("setSpaceQuota", "-storageType", "RAM_DISK", "1m", "/x"); code != 1 {
		t.Fatalf("RAM_DISK takes no quota: %d %s", code, msg)
	}

	var out bytes.Buffer
	sh := &fsshell.Shell{FS: fsys, Out: &out, Err: &out, Progress: fsshell.ProgressNever}
	// 1.5 MiB at replication 1: the second 1 MiB block passes 1 MiB on DISK.
	sh.Stdin = bytes.NewReader(make([]byte, 1536<<10))
	err := sh.Put(ctx, []string{"-"}, "/x/big", fsshell.PutOptions{Replication: 1})
	want := "Quota by storage type : DISK on path : /x is exceeded. quota = 1 MB but space consumed = 2 MB"
	if !errors.Is(err, client.ErrQuotaExceeded) || !strings.Contains(err.Error(), want) {
		t.Fatalf("put past the DISK quota: %v\nwant %s", err, want)
	}
	if err := fsys.Mkdir(ctx, "/x/d", 0o755, false); err != nil {
		t.Fatalf("a type quota limits space, not names: %v", err)
	}

	count := func(args ...string) string {
		t.Helper()
		code, stdout, msg := runSmarth(append([]string{"fs", "--namenode", addr, "--user", su, "count"}, args...)...)
		if code != 0 {
			t.Fatalf("fs count %v: %d %s", args, code, msg)
		}
		return stdout
	}
	// What is left of /x/big (a file cut at its first, full block or
	// removed) decides the DISK remainder; read it from the summary.
	cs, err := fsys.ContentSummary(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if tq := cs.TypeQuotas["DISK"]; tq.Quota != 1<<20 || tq.Consumed != cs.SpaceConsumed {
		t.Fatalf("DISK quota %+v; space consumed %d", tq, cs.SpaceConsumed)
	}
	rem := 1<<20 - cs.SpaceConsumed
	wantCount := "    SSD_QUOTA     REM_SSD_QUOTA    DISK_QUOTA    REM_DISK_QUOTA ARCHIVE_QUOTA REM_ARCHIVE_QUOTA PROVIDED_QUOTA REM_PROVIDED_QUOTA  NVDIMM_QUOTA  REM_NVDIMM_QUOTA PATHNAME\n" +
		"   5368709120        5368709120       1048576 " + pad(rem, 17) + "          none               inf          none               inf          none               inf /x\n"
	if got := count("-q", "-t", "-v", "/x"); got != wantCount {
		t.Fatalf("count -q -t -v:\n%s\nwant\n%s", got, wantCount)
	}
	if got, want := count("-q", "-t", "disk", "/x"), "      1048576 "+pad(rem, 17)+" /x\n"; got != want {
		t.Fatalf("count -q -t disk:\n%q\nwant\n%q", got, want)
	}
	if code, _, msg := runSmarth("fs", "--namenode", addr, "count", "-q", "-t", "TAPE", "/x"); code != 2 {
		t.Fatalf("count -t TAPE: %d %s", code, msg)
	}

	c.RestartNameNode()
	sh.Stdin = bytes.NewReader(make([]byte, 1536<<10))
	err = sh.Put(ctx, []string{"-"}, "/x/big2", fsshell.PutOptions{Replication: 1})
	if !errors.Is(err, client.ErrQuotaExceeded) || !strings.Contains(err.Error(), "DISK on path : /x is exceeded") {
		t.Fatalf("after a namenode restart the DISK quota is gone: %v", err)
	}
	if code, msg := run("clrSpaceQuota", "-storageType", "DISK", "/x"); code != 0 {
		t.Fatalf("clrSpaceQuota -storageType DISK: %d %s", code, msg)
	}
	sh.Stdin = bytes.NewReader(make([]byte, 1536<<10))
	if err := sh.Put(ctx, []string{"-"}, "/x/big2", fsshell.PutOptions{Replication: 1, Overwrite: true}); err != nil {
		t.Fatalf("put after clearing the DISK quota: %v", err)
	}
	if got := count("-q", "-t", "DISK,SSD", "/x"); got != "         none               inf    5368709120        5368709120 /x\n" {
		t.Fatalf("count after clearing DISK: %q", got)
	}
}

func pad(n int64, w int) string {
	s := strings.Repeat(" ", w) + strconv.FormatInt(n, 10)
	return s[len(s)-w:]
}
