package client_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"smarth/internal/client"
	"smarth/internal/datanode/store/vfs"
	"smarth/internal/datanode/store/vfs/errorfs"
	"smarth/internal/testcluster"
)

// The disk of the datanode a reader tries first fails to read one replica
// (EIO, injected under its block store): the read fails over to the other
// replica and returns the right bytes, the failing replica is verified,
// reported, and the namenode has the block copied to the third datanode.
func TestReadEIOFailsOverAndReplicaIsReplaced(t *testing.T) {
	disks := make([]*errorfs.FS, 3)
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2,
		FS: func(i int) vfs.FS {
			disks[i] = errorfs.Wrap(vfs.OS)
			return disks[i]
		}})
	f := c.Client(t)
	ctx := context.Background()
	want := data(1<<20-100, 5)
	mustPut(t, f, "/eio", want, client.CreateOptions{Replication: 2})
	c.WaitReplication(t, "/eio", 2)
	locs, err := f.BlockLocations(ctx, "/eio", 0, int64(len(want)))
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations %v, %v", locs, err)
	}
	blk, first, had := locs[0].BlockID, locs[0].Hosts[0], locs[0].Hosts
	i, _ := strconv.Atoi(first[len("dn"):])
	fault := disks[i-1].Add(errorfs.Rule{Ops: errorfs.OpOpenRead, Path: errorfs.Glob("blk_" + strconv.FormatUint(blk, 10)), Err: syscall.EIO})

	// The reader orders equally close replicas as it likes: read until
	// one read has tried the failing replica first.
	for try := 0; fault.Hits() == 0; try++ {
		if try == 30 {
			t.Fatalf("30 reads and none tried %s's replica", first)
		}
		r, err := f.Open(ctx, "/eio")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read with %s's replica failing EIO: %d bytes, err %v; want the %d written", first, len(got), err, len(want))
		}
	}

	third := ""
	for i := range 3 {
		if h := testcluster.Hostname(i); !slices.Contains(had, h) {
			third = h
		}
	}
	replicaFile := func(host string) string {
		i, _ := strconv.Atoi(host[len("dn"):])
		return filepath.Join(c.DataDir(i-1), "current", "finalized", "blk_"+strconv.FormatUint(blk, 10))
	}
	c.WaitFor(t, "the unreadable replica reported and the block copied to "+third+", two good replicas listed", func() bool {
		locs, err := f.BlockLocations(ctx, "/eio", 0, int64(len(want)))
		if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 2 || locs[0].Corrupt || !slices.Contains(locs[0].Hosts, third) {
			return false
		}
		b, err := os.ReadFile(replicaFile(third))
		return err == nil && bytes.Equal(b, want)
	})
}
