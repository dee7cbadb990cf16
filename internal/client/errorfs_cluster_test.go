package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/client"
	"smarth/internal/datanode/store/vfs"
	"smarth/internal/datanode/store/vfs/errorfs"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// Disk faults injected under the datanodes' block stores (errorfs): the
// disks misbehave, not the files on them, so each test can fail one
// replica's reads or writes part way through, as a bad sector, a full disk
// or a lying disk would.

// faultyCluster starts a cluster whose datanodes' block stores are on
// errorfs wrappers, returned by datanode index (0-based).
func faultyCluster(t *testing.T, opts testcluster.Options) (*testcluster.Cluster, []*errorfs.FS) {
	disks := make([]*errorfs.FS, opts.DataNodes)
	opts.FS = func(i int) vfs.FS {
		if disks[i] == nil { // a restarted datanode keeps its disk
			disks[i] = errorfs.Wrap(vfs.OS)
		}
		return disks[i]
	}
	return testcluster.Start(t, opts), disks
}

func blockFile(id uint64) func(string) bool {
	return errorfs.Glob("blk_" + strconv.FormatUint(id, 10))
}

func readAll(t *testing.T, f *client.FileSystem, p string) ([]byte, error) {
	t.Helper()
	r, err := f.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

// waitReplaced waits until the block of p is listed on repl good replicas,
// none on bad, and each listed replica holds want on its own disk.
func waitReplaced(t *testing.T, c *testcluster.Cluster, f *client.FileSystem, p string, want []byte, repl int, bad string) {
	t.Helper()
	ctx := context.Background()
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last seen: %s", last)
		}
	})
	c.WaitFor(t, fmt.Sprintf("%s's bad replica of %s reported, dropped, and the block copied to %d good replicas elsewhere", bad, p, repl), func() bool {
		locs, err := f.BlockLocations(ctx, p, 0, int64(len(want)))
		if err != nil || len(locs) != 1 {
			last = fmt.Sprintf("locations %v, %v", locs, err)
			return false
		}
		l := locs[0]
		if len(l.Hosts) != repl || l.Corrupt || slices.Contains(l.Hosts, bad) {
			last = fmt.Sprintf("blk_%d on %v (corrupt %v)", l.BlockID, l.Hosts, l.Corrupt)
			return false
		}
		for _, h := range l.Hosts {
			got, err := os.ReadFile(filepath.Join(c.DataDir(hostIndex(t, h)), "current", "finalized", "blk_"+strconv.FormatUint(l.BlockID, 10)))
			if err != nil || !bytes.Equal(got, want) {
				last = fmt.Sprintf("%s's replica of blk_%d does not hold the written bytes (%v)", h, l.BlockID, err)
				return false
			}
		}
		return true
	})
}

// One datanode's disk fails with EIO part way through a replica (a bad
// sector at 600 000 bytes): the open succeeds and the first bytes go out,
// then the read fails. The client fails over to the other replica and
// returns the right bytes; the datanode has its scanner verify the
// replica, which meets the same EIO and reports it; the namenode copies
// the block to the third datanode and drops the bad replica.
func TestReadEIOMidBlockFailsOverAndReplicaIsReplaced(t *testing.T) {
	c, disks := faultyCluster(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2})
	f := c.Client(t)
	ctx := context.Background()
	want := data(1<<20-100, 11)
	mustPut(t, f, "/eio-mid", want, client.CreateOptions{Replication: 2})
	c.WaitReplication(t, "/eio-mid", 2)
	locs, err := f.BlockLocations(ctx, "/eio-mid", 0, int64(len(want)))
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations %v, %v", locs, err)
	}
	bad := locs[0].Hosts[0]
	fault := disks[hostIndex(t, bad)].Add(errorfs.Rule{Ops: errorfs.OpRead, Path: blockFile(locs[0].BlockID), Err: syscall.EIO, From: 600_000})

	// The reader orders equally close replicas as it likes: read until a
	// read has met the bad sector.
	for try := 0; fault.Hits() == 0; try++ {
		if try == 30 {
			t.Fatalf("30 reads and none read %s's replica past 600000", bad)
		}
		got, err := readAll(t, f, "/eio-mid")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read with %s's replica failing EIO at 600000: %d bytes, err %v; want the %d written", bad, len(got), err, len(want))
		}
	}
	waitReplaced(t, c, f, "/eio-mid", want, 2, bad)
}

// One datanode's disk fills up while it writes a block: from then on its
// statfs shows no space and writes of its block files past 1 MiB fail with
// ENOSPC. The pipeline recovers without it (the block's generation stamp
// moves on from the one dn1's replica was started under), the file closes
// and reads back, and the namenode lists three replicas, none on dn1,
// which (below du_reserved) is chosen for no new block.
func TestWriteENOSPCMidBlockPipelineRecovers(t *testing.T) {
	c, disks := faultyCluster(t, testcluster.Options{DataNodes: 4, BlockSize: 4 << 20, Replication: 3})
	f := c.Client(t)
	ctx := context.Background()
	want := data(3<<20, 12)
	head := 512 << 10

	// Until the namenode puts dn1 in the pipeline (three of four nodes).
	var w *client.FileWriter
	var p string
	var gs0 uint64 // the generation stamp dn1's replica was started under
	for try := 0; w == nil; try++ {
		if try == 20 {
			t.Fatal("dn1 was left out of 20 pipelines of 3 among 4 datanodes")
		}
		p = fmt.Sprintf("/enospc-mid/f%d", try)
		before := make([]map[string]int64, 4) // replicas left by aborted tries
		for i := range before {
			before[i] = rbwFiles(c.DataDir(i))
		}
		cand, err := f.Create(ctx, p, client.CreateOptions{Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cand.Write(want[:head]); err != nil {
			t.Fatal(err)
		}
		var in int
		var onDN1 string
		c.WaitFor(t, "the first 256 KiB of the new block on three datanodes", func() bool {
			in, onDN1 = 0, ""
			for i := range 4 {
				for name, size := range rbwFiles(c.DataDir(i)) {
					if _, old := before[i][name]; !old && size >= 256<<10 {
						in++
						if i == 0 {
							onDN1 = name
						}
						break
					}
				}
			}
			return in == 3
		})
		if onDN1 == "" {
			if err := cand.Abort(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		metas, _ := filepath.Glob(filepath.Join(c.DataDir(0), "rbw", onDN1+"_*.meta"))
		if len(metas) != 1 {
			t.Fatalf("dn1's replica %s being written has meta files %v, want one", onDN1, metas)
		}
		gs0, err = strconv.ParseUint(strings.TrimSuffix(metas[0][strings.LastIndex(metas[0], "_")+1:], ".meta"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		w = cand
	}
	full := disks[0].Add(errorfs.Rule{Ops: errorfs.OpWrite, Path: errorfs.Glob("blk_*[0-9]"), Err: syscall.ENOSPC, From: 1 << 20})
	disks[0].Add(errorfs.Rule{Ops: errorfs.OpStatfs, Full: true})
	if _, err := w.Write(want[head:]); err != nil {
		t.Fatalf("write of %s with dn1's disk full past 1 MiB: %v", p, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close of %s with dn1's disk full past 1 MiB: %v", p, err)
	}
	if full.Hits() == 0 {
		t.Fatal("dn1 was in the pipeline but never wrote past 1 MiB")
	}
	resp, err := f.Namenode().GetBlockLocations(ctx, &dfspb.GetBlockLocationsRequest{Path: p})
	if err != nil || len(resp.GetLocations().GetBlocks()) != 1 {
		t.Fatalf("locations of %s: %v, %v", p, resp, err)
	}
	if gs := resp.GetLocations().GetBlocks()[0].GetBlock().GetGenerationStamp(); gs <= gs0 {
		t.Fatalf("%s's block has generation stamp %d, the one dn1's replica was started under: the pipeline was not recovered", p, gs)
	}
	if got, err := readAll(t, f, p); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (err %v), want the %d written", len(got), err, len(want))
	}
	c.WaitFor(t, p+" fully replicated (3) without dn1, whose disk filled while writing it", func() bool {
		locs, err := f.BlockLocations(ctx, p, 0, int64(len(want)))
		return err == nil && len(locs) == 1 && len(locs[0].Hosts) == 3 && !slices.Contains(locs[0].Hosts, "dn1")
	})
	// Full, dn1 takes no new block (a new client, which has not seen dn1 fail).
	f2 := c.Client(t)
	for i := range 3 {
		q := fmt.Sprintf("/enospc-mid/after%d", i)
		mustPut(t, f2, q, data(100<<10, uint64(i)), client.CreateOptions{Replication: 3})
		locs, err := f.BlockLocations(ctx, q, 0, 100<<10)
		if err != nil || len(locs) != 1 || slices.Contains(locs[0].Hosts, "dn1") {
			t.Fatalf("%s placed on %v (%v) with dn1's disk full", q, locs, err)
		}
	}
}

// One datanode's disk silently flips a bit in what it reads back of one
// replica (the file and its checksums are intact on the platter; the
// bytes returned are wrong). The client's checksum check catches it, the
// read fails over and returns the right bytes; the replica is reported
// and the namenode copies the block to the third datanode and drops it.
func TestReadBitFlipCaughtFailsOverAndReplicaIsReplaced(t *testing.T) {
	c, disks := faultyCluster(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2})
	f := c.Client(t)
	ctx := context.Background()
	want := data(1<<20, 13)
	mustPut(t, f, "/flip-read", want, client.CreateOptions{Replication: 2})
	c.WaitReplication(t, "/flip-read", 2)
	locs, err := f.BlockLocations(ctx, "/flip-read", 0, int64(len(want)))
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations %v, %v", locs, err)
	}
	bad := locs[0].Hosts[0]
	flip := disks[hostIndex(t, bad)].Add(errorfs.Rule{Ops: errorfs.OpRead, Path: blockFile(locs[0].BlockID), Flip: true, From: 777_777})
	for try := 0; flip.Hits() == 0; try++ {
		if try == 30 {
			t.Fatalf("30 reads and none read %s's replica", bad)
		}
		got, err := readAll(t, f, "/flip-read")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read with %s's disk flipping a bit: %d bytes, err %v; want the %d written", bad, len(got), err, len(want))
		}
	}
	waitReplaced(t, c, f, "/flip-read", want, 2, bad)
}

// The same lying disk, found by no reader: the block scanner of the
// datanode reads the replica within its scan_interval, the checksum
// catches the flip, and the replica is reported and replaced.
func TestBitFlipOnReadFoundByScanner(t *testing.T) {
	c, disks := faultyCluster(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2,
		DataNode: map[string]any{"scan_interval": "300ms"}})
	f := c.Client(t)
	ctx := context.Background()
	want := data(1<<20, 14)
	mustPut(t, f, "/flip-scan", want, client.CreateOptions{Replication: 2})
	c.WaitReplication(t, "/flip-scan", 2)
	locs, err := f.BlockLocations(ctx, "/flip-scan", 0, int64(len(want)))
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations %v, %v", locs, err)
	}
	bad := locs[0].Hosts[0]
	disks[hostIndex(t, bad)].Add(errorfs.Rule{Ops: errorfs.OpRead, Path: blockFile(locs[0].BlockID), Flip: true, From: 123_457})
	waitReplaced(t, c, f, "/flip-scan", want, 2, bad)
}

// One of dn1's two data directories vanishes: from a moment on every
// operation under it fails with EIO, as on a disk pulled out of the
// machine. With failed_volumes_tolerated 1, dn1 takes the directory out of
// service, keeps serving the replicas of its other one, and the namenode
// copies the lost replicas back to two live ones each.
func TestVolumeEIOIsTakenOutAndReReplicated(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	c, disks := faultyCluster(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2,
		DataNodeFor: dn1TwoVolumes(a, b)})
	f := c.Client(t)
	const size = 2<<20 + 1000
	paths := writeFiles(t, f, 6, size)
	for _, p := range paths {
		c.WaitReplication(t, p, 2)
	}
	onA, onB := finalizedIDs(t, a), finalizedIDs(t, b)
	if len(onA) == 0 || len(onB) == 0 {
		t.Fatalf("dn1 holds %d replicas in %s and %d in %s; round robin should use both", len(onA), a, len(onB), b)
	}
	gone := disks[0].Add(errorfs.Rule{Ops: errorfs.OpAll, Path: errorfs.Under(b), Err: syscall.EIO})

	waitVolumeReReplicated(t, c, f, paths, size, a, b, onA, onB)
	if gone.Hits() == 0 {
		t.Fatal("no operation met the failed directory")
	}
	if err := c.DataNode(0).Stopped(); err != nil {
		t.Fatalf("dn1 stopped with one failed directory tolerated: %v", err)
	}
	checkFiles(t, f, paths, size)
}
