package client_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// One bit of one finalized replica flips on disk, silently (the file's
// size and its checksums stay as they were). The block scanner of that
// datanode finds it within its scan_interval, reports it, and the
// namenode has the block copied from the good replica and the bad one
// deleted: in the end every replica the namenode lists holds the written
// bytes on its own disk.
func TestBitFlipFoundByScannerAndReplaced(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2,
		DataNode: map[string]any{"scan_interval": "300ms"}})
	f := c.Client(t)
	ctx := context.Background()
	want := data(1<<20, 42)
	mustPut(t, f, "/flip", want, client.CreateOptions{Replication: 2})
	c.WaitReplication(t, "/flip", 2)
	locs, err := f.BlockLocations(ctx, "/flip", 0, int64(len(want)))
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations %v, %v", locs, err)
	}
	blk := locs[0].BlockID
	host := locs[0].Hosts[0]
	replicaFile := func(host string) string {
		i, _ := strconv.Atoi(host[len("dn"):])
		return filepath.Join(c.DataDir(i-1), "current", "finalized", "blk_"+strconv.FormatUint(blk, 10))
	}
	bad := replicaFile(host)
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	b[777_777] ^= 0x10
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}

	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last seen: %s", last)
		}
	})
	c.WaitFor(t, "the flipped replica to be found and deleted, and the block copied back to two good replicas", func() bool {
		locs, err := f.BlockLocations(ctx, "/flip", 0, int64(len(want)))
		if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 2 || locs[0].Corrupt {
			last = "locations not yet two good replicas"
			return false
		}
		for _, h := range locs[0].Hosts {
			got, err := os.ReadFile(replicaFile(h))
			if err != nil || !bytes.Equal(got, want) {
				last = h + "'s replica does not hold the written bytes yet"
				return false
			}
		}
		if got, err := os.ReadFile(bad); err == nil && !bytes.Equal(got, want) {
			last = "the flipped replica " + bad + " is still on disk"
			return false
		}
		return true
	})
	r, err := f.Open(ctx, "/flip")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, err %v", len(got), err)
	}
}
