package cluster_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/testcluster"
)

// TestHAJobRunsWithNN1Down: on a secure `cluster up --namenodes 3`, a
// streaming job runs after nn1 (the member whose web address the home
// records) is stopped. A streaming task runs in a container that gets a
// delegation token of its submitter, which the node manager fetches over
// WebHDFS; node managers used to ask nn1 only, so with nn1 down every
// such task ran without its submitter's token (a container that cannot
// get one still runs). Now they are given every member and ask the
// active.
func TestHAJobRunsWithNN1Down(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real-binary cluster of three namenodes, two datanodes and two node managers; skipped in -short mode")
	}
	defer syscall.Umask(syscall.Umask(0o022))
	base := reachableTempDir(t) // containers' users reach their work directories
	bin := testcluster.Binary(t)
	home := filepath.Join(base, "home")
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	smarth(t, bin, "cluster", "up", "--home", home, "--namenodes", "3", "--datanodes", "2",
		"--namenode-addr", "127.0.0.1:0", "--namenode-http", "127.0.0.1:0", "--block-size", "1MiB", "--timeout", "2m")
	smarth(t, bin, "cluster", "stop", "nn1", "--home", home)
	st, err := cluster.LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if name, _, err := cluster.WaitActive(ctx, st); err != nil || name == "nn1" {
		t.Fatalf("active after stopping nn1: %q, %v", name, err)
	}
	sec, err := st.Security()
	if err != nil {
		t.Fatal(err)
	}
	owner, err := client.New(ownerConfig(t, home, st.NameNode))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	fs, jc := aliceOnCluster(ctx, t, home, st, owner, sec)
	// A container that cannot get its token runs without one (most
	// commands never talk to the cluster), so the task says which.
	mapper := `cat >/dev/null; if [ -s "$HADOOP_TOKEN_FILE_LOCATION" ]; then echo token-present; else echo token-missing; fi`
	if _, err := jc.Run(ctx, "streaming", map[string]string{"input": "/secure-in", "output": "/alice/out", "mapper": mapper, "reducer": "NONE"}); err != nil {
		t.Fatalf("alice's streaming job with nn1 down: %v", err)
	}
	f, err := fs.Open(ctx, "/alice/out/part-m-00000")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || !strings.Contains(string(b), "token-present") || strings.Contains(string(b), "token-missing") {
		t.Fatalf("the task's container, with nn1 down, got no delegation token of alice's (%v):\n%s", err, b)
	}
}
