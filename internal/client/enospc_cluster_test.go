package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
	"smarth/internal/testfs"
)

// rbwFiles maps the block files of replicas being written in a data
// directory to their sizes.
func rbwFiles(dir string) map[string]int64 {
	entries, _ := os.ReadDir(filepath.Join(dir, "rbw"))
	out := map[string]int64{}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && filepath.Ext(e.Name()) == "" {
			out[e.Name()] = fi.Size()
		}
	}
	return out
}

// dn1's disk fills up in the middle of a block it is writing (a filler
// file takes its 8 MiB tmpfs down to below its reserve): its write fails
// with ENOSPC, the client's pipeline recovers onto the spare datanode, and
// the file closes with three good replicas, none on dn1; dn1, now below
// du_reserved, takes no new block.
func TestDiskFullMidBlockPipelineRecovers(t *testing.T) {
	full := testfs.Tmpfs(t, "8m")
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: 4 << 20, Replication: 3,
		DataNodeFor: func(i int) map[string]any {
			if i == 0 {
				return map[string]any{"data_dir": full}
			}
			return nil
		}})
	f := c.Client(t)
	ctx := context.Background()
	dirs := []string{full, c.DataDir(1), c.DataDir(2), c.DataDir(3)}
	want := data(3<<20, 7)
	head := 1 << 20

	// Until the namenode puts dn1 in the pipeline (three of four nodes).
	var w *client.FileWriter
	var p string
	for try := 0; w == nil; try++ {
		if try == 20 {
			t.Fatal("dn1 was left out of 20 pipelines of 3 among 4 datanodes")
		}
		p = fmt.Sprintf("/enospc/f%d", try)
		before := make([]map[string]int64, len(dirs)) // replicas left by aborted tries
		for i, d := range dirs {
			before[i] = rbwFiles(d)
		}
		cand, err := f.Create(ctx, p, client.CreateOptions{Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cand.Write(want[:head]); err != nil {
			t.Fatal(err)
		}
		var in []int
		c.WaitFor(t, "512 KiB of the new block on three datanodes", func() bool {
			in = in[:0]
			for i, d := range dirs {
				for name, size := range rbwFiles(d) {
					if _, old := before[i][name]; !old && size >= 512<<10 {
						in = append(in, i)
						break
					}
				}
			}
			return len(in) == 3
		})
		if slices.Contains(in, 0) {
			w = cand
		} else if err := cand.Abort(); err != nil {
			t.Fatal(err)
		}
	}

	filler := filepath.Join(full, "filler")
	testfs.Fill(t, filler, 128<<10) // dn1 may still be storing the head's last packets
	if _, err := w.Write(want[head:]); err != nil {
		t.Fatalf("write after dn1's disk filled: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after dn1's disk filled mid-block: %v", err)
	}
	c.WaitReplication(t, p, 3)
	locs, err := f.BlockLocations(ctx, p, 0, int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		if slices.Contains(l.Hosts, "dn1") {
			t.Fatalf("block %d lists dn1, whose disk filled while writing it: %v", l.BlockID, l.Hosts)
		}
	}
	r, err := f.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (err %v), want the %d written", len(got), err, len(want))
	}

	// Full below its reserve, dn1 is chosen for no new block.
	for i := range 3 {
		q := fmt.Sprintf("/enospc/after%d", i)
		wq, err := f.Create(ctx, q, client.CreateOptions{Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wq.Write(data(100<<10, uint64(i))); err != nil {
			t.Fatal(err)
		}
		if err := wq.Close(); err != nil {
			t.Fatalf("write %s with dn1 full: %v", q, err)
		}
		locs, err := f.BlockLocations(ctx, q, 0, 100<<10)
		if err != nil {
			t.Fatal(err)
		}
		if len(locs) != 1 || slices.Contains(locs[0].Hosts, "dn1") {
			t.Fatalf("%s placed on %v with dn1 below its reserve", q, locs)
		}
	}
}
