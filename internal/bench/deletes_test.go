package bench

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// blockFiles counts the replica files (not .meta) under the datanodes'
// data dirs.
func blockFiles(t *testing.T, c *testcluster.Cluster, n int) int {
	t.Helper()
	count := 0
	for i := range n {
		err := filepath.WalkDir(c.DataDir(i), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasPrefix(d.Name(), "blk_") && !strings.HasSuffix(d.Name(), ".meta") {
				count++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return count
}

// The file a timed upload replaces must be gone from the datanodes'
// disks before the clock starts, not unlinked by a later heartbeat's
// invalidate command in the middle of the upload.
func TestClearTargetWaitsForReplicasToGo(t *testing.T) {
	// Heartbeats slower than the default 200ms, so a delete's replicas
	// are still on disk for a while after the namenode forgot the file.
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, HeartbeatInterval: 700 * time.Millisecond})
	fsys := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	p := "/benchmarks/put/classic.dat"
	w, err := fsys.Create(ctx, p, client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 3<<20+5)); err != nil { // 4 blocks of 1 MiB
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := blockFiles(t, c, 3); n != 12 {
		t.Fatalf("%d replica files after the write, want 12", n)
	}

	if err := clearTarget(ctx, fsys, p, false); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(ctx, p); err == nil {
		t.Fatalf("%s still exists", p)
	}
	if n := blockFiles(t, c, 3); n != 0 {
		t.Fatalf("%d replica files left on the datanodes when clearTarget returned, want 0", n)
	}

	// Nothing left to delete: no error.
	if err := clearTarget(ctx, fsys, p, false); err != nil {
		t.Fatal(err)
	}
}
