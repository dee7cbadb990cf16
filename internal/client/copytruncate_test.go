package client_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// blockIDs lists the ids and lengths of path's blocks.
func blockIDs(t *testing.T, f *client.FileSystem, path string) (ids []uint64, lens []int64) {
	t.Helper()
	resp, err := f.Namenode().GetBlockLocations(ctxT(t), &dfspb.GetBlockLocationsRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range resp.GetLocations().GetBlocks() {
		ids = append(ids, lb.GetBlock().GetBlockId())
		lens = append(lens, lb.GetBlock().GetNumBytes())
	}
	return ids, lens
}

// blockFiles are the finalized block files of block id on the cluster's
// datanodes.
func blockFiles(c *testcluster.Cluster, n int, id uint64) []string {
	var out []string
	for i := range n {
		p := filepath.Join(c.DataDir(i), "current", "finalized", fmt.Sprintf("blk_%d", id))
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestCopyOnTruncate: a truncate inside a block a snapshot holds is made
// on a copy, as HDFS does: the file's last block becomes a new block (new
// id) holding the prefix, which the datanodes copy from their replicas of
// the old block; the snapshot keeps the old block, whose replica files
// stay on disk as they were. Live file and snapshot read right, and their
// replicas check out on disk, across a namenode restart; deleting the
// snapshot then frees the old block. A second file's copy is refused by
// every datanode (the source's cut chunk is corrupt), so it is still to
// be made when the namenode restarts (from its image), and is made once
// the source is repaired.
func TestCopyOnTruncate(t *testing.T) {
	const dns = 3
	c := testcluster.Start(t, testcluster.Options{DataNodes: dns, BlockSize: fdBlock, DeadNodeTimeout: 30 * time.Second})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(2*fdBlock+3000, 90)
	mustPut(t, f, "/cot/f", orig, client.CreateOptions{})
	c.WaitReplication(t, "/cot/f", 3)
	if err := f.AllowSnapshot(ctx, "/cot"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateSnapshot(ctx, "/cot", "s1"); err != nil {
		t.Fatal(err)
	}
	before, _ := blockIDs(t, f, "/cot/f")

	cut := int64(fdBlock + 777) // inside block 1, inside a checksum chunk
	if ready, err := f.Truncate(ctx, "/cot/f", cut); err != nil || ready {
		t.Fatalf("truncate inside a snapshotted block: ready %v, %v; want false", ready, err)
	}
	if err := f.WaitClosed(ctx, "/cot/f"); err != nil {
		t.Fatal(err)
	}
	after, lens := blockIDs(t, f, "/cot/f")
	if len(after) != 2 || after[0] != before[0] || after[1] == before[1] || lens[1] != 777 {
		t.Fatalf("blocks after the truncate: %v %v; before %v; want block 0 kept and a new block of 777 bytes", after, lens, before)
	}
	check := func(when string) {
		t.Helper()
		wantContent(t, f, "/cot/f", orig[:cut])
		if got := mustRead(t, f, "/cot/.snapshot/s1/f"); !bytes.Equal(got, orig) {
			t.Fatalf("%s: the snapshot reads %d bytes, want the %d it had", when, len(got), len(orig))
		}
		c.WaitReplication(t, "/cot/f", 3)
		if n := verifyReplicas(t, c, f, "/cot/f"); n != 6 {
			t.Errorf("%s: %d replicas of the live file checked, want 6", when, n)
		}
		// The old block's replicas, full length with their checksums,
		// are what the snapshot lists.
		if n := verifyReplicas(t, c, f, "/cot/.snapshot/s1/f"); n != 9 {
			t.Errorf("%s: %d replicas of the snapshot checked, want 9", when, n)
		}
		if files := blockFiles(c, dns, before[1]); len(files) != 3 {
			t.Errorf("%s: old block %d has block files %v, want one on each of the 3 datanodes", when, before[1], files)
		}
	}
	check("after the copy")
	c.RestartNameNode()
	check("after a namenode restart")

	// The new block is a partial block like any: appends continue it.
	mustAppend(t, f, "/cot/f", []byte("tail"), client.AppendOptions{})
	wantContent(t, f, "/cot/f", append(append([]byte{}, orig[:cut]...), "tail"...))

	// Deleting the snapshot frees the old block and the one the truncate
	// dropped whole: their replicas go.
	if err := f.DeleteSnapshot(ctx, "/cot", "s1"); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, "the old blocks' replicas deleted", func() bool {
		return len(blockFiles(c, dns, before[1])) == 0 && len(blockFiles(c, dns, before[2])) == 0
	})
	wantContent(t, f, "/cot/f", append(append([]byte{}, orig[:cut]...), "tail"...))

	// In progress across a restart: the chunk the cut falls in is
	// corrupt in every replica of the old block, so each datanode refuses
	// to copy it (a fresh checksum would hide the damage) and the file
	// stays being truncated; the namenode restarts (loading its image);
	// once the bytes are repaired a retried recovery makes the copy.
	orig2 := data(fdBlock+5000, 91)
	mustPut(t, f, "/cot2/g", orig2, client.CreateOptions{})
	c.WaitReplication(t, "/cot2/g", 3)
	if err := f.AllowSnapshot(ctx, "/cot2"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateSnapshot(ctx, "/cot2", "s"); err != nil {
		t.Fatal(err)
	}
	old2, _ := blockIDs(t, f, "/cot2/g")
	corrupt := func(b byte) {
		t.Helper()
		files := blockFiles(c, dns, old2[0])
		if len(files) != dns {
			t.Fatalf("block %d: files %v", old2[0], files)
		}
		for _, p := range files {
			fh, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = fh.WriteAt([]byte{b}, 50)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	corrupt(^orig2[50])
	if ready, err := f.Truncate(ctx, "/cot2/g", 100); err != nil || ready {
		t.Fatalf("truncate of /cot2/g: %v %v", ready, err)
	}
	c.RestartNameNode()
	if st, err := f.Stat(ctx, "/cot2/g"); err != nil || !st.UnderConstruction || st.Size > 100 {
		t.Fatalf("/cot2/g after the restart, its copy refused: %+v %v; want under construction", st, err)
	}
	corrupt(orig2[50])
	if err := f.WaitClosed(ctx, "/cot2/g"); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f, "/cot2/g", orig2[:100])
	if got := mustRead(t, f, "/cot2/.snapshot/s/g"); !bytes.Equal(got, orig2) {
		t.Fatalf("snapshot of /cot2/g reads %d bytes, want %d", len(got), len(orig2))
	}
	if ids, _ := blockIDs(t, f, "/cot2/g"); len(ids) != 1 || ids[0] == old2[0] {
		t.Fatalf("/cot2/g blocks %v, old %v: want one new block", ids, old2)
	}
	c.WaitReplication(t, "/cot2/g", 3)
	verifyReplicas(t, c, f, "/cot2/g")
	if n := verifyReplicas(t, c, f, "/cot2/.snapshot/s/g"); n != 6 {
		t.Errorf("%d replicas of the snapshot of /cot2/g checked, want 6", n)
	}
}
