package client_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// Algorithm 4 on the real in-process cluster: a downstream datanode of a
// pipeline that has already sent FIRST_NODE_FINISH_ACK, and is still
// forwarding, dies while the client writes the next block. The datanode
// links are slowed so the first pipeline cannot drain before the kill. The
// file must complete byte-identical, the dead pipeline must have been
// rebuilt (its block carries a newer generation stamp than the one it was
// opened with) and the namenode must restore three replicas.
func TestClusterKillNodeOfFNFAdPipeline(t *testing.T) {
	const dns = 6
	links := testcluster.NewLinks()
	slowForwarding := func(rate int64) {
		for i := range dns {
			links.Slow(testcluster.Hostname(i), "*", rate)
		}
	}
	// 1 MiB blocks forwarded at 128 KiB/s: about 8 s to drain a pipeline,
	// while the client hands a block to its first datanode in milliseconds.
	slowForwarding(128 << 10)
	c := testcluster.Start(t, testcluster.Options{DataNodes: dns, BlockSize: 1 << 20, Links: links})
	f := c.Client(t, testcluster.WithWriteMode("multipipeline"))
	ctx := context.Background()
	want := data(3<<20+777, 21)
	w, err := f.Create(ctx, "/f", client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Block 1 whole plus part of block 2: block 2 is only allocated after
	// block 1's first datanode sent FNFA.
	head := 1<<20 + 300<<10
	if _, err := w.Write(want[:head]); err != nil {
		t.Fatal(err)
	}
	var first client.BlockLocation
	for deadline := time.Now().Add(10 * time.Second); ; {
		locs, err := f.BlockLocations(ctx, "/f", 0, 1<<40)
		if err == nil && len(locs) >= 2 {
			first = locs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("block 2 was not allocated within 10 s (block 1's FNFA never came?): %v %v", locs, err)
		}
		time.Sleep(5 * time.Millisecond) // poll interval for a condition with a deadline
	}
	// Kill a node of block 1's pipeline that the forwarding has not
	// finished reaching: one that holds the block as a replica being
	// written. (The namenode lists only the replicas reported so far.)
	victim, gs := "", uint64(0)
	for i := range dns {
		if g, ok := rbwReplica(t, c.DataDir(i), first.BlockID); ok {
			victim, gs = testcluster.Hostname(i), g
		}
	}
	if victim == "" {
		t.Fatal("block 1 is not being written on any datanode: its pipeline was not still forwarding")
	}
	c.KillDataNode(hostIndex(t, victim))
	slowForwarding(0) // the rest of the test need not wait on slow links
	finishSurvivingWrite(t, c, f, w, want, head)
	newer := false
	for i := range dns {
		if h := testcluster.Hostname(i); h != victim {
			if g, ok := finalizedReplica(t, c.DataDir(i), first.BlockID); ok && g > gs {
				newer = true
			}
		}
	}
	if !newer {
		t.Fatalf("no replica of block %d has a generation stamp newer than %d: the FNFA'd pipeline was not recovered", first.BlockID, gs)
	}
}

// rbwReplica reports whether dir holds block id as a replica being
// written, and its generation stamp.
func rbwReplica(t *testing.T, dir string, id uint64) (uint64, bool) {
	return findMeta(t, dir, id, "rbw")
}

// finalizedReplica is rbwReplica for finalized replicas.
func finalizedReplica(t *testing.T, dir string, id uint64) (uint64, bool) {
	return findMeta(t, dir, id, "finalized")
}

// findMeta looks for blk_<id>_<gs>.meta in a directory named state.
func findMeta(t *testing.T, dir string, id uint64, state string) (uint64, bool) {
	t.Helper()
	prefix := fmt.Sprintf("blk_%d_", id)
	var gs uint64
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || filepath.Base(filepath.Dir(p)) != state || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".meta") {
			return nil
		}
		g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, prefix), ".meta"), 10, 64)
		if err == nil && g >= gs {
			gs, found = g, true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return gs, found
}
