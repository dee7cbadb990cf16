package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// finalizedIDs lists the block ids of the finalized replicas in a data
// directory.
func finalizedIDs(t *testing.T, dir string) map[uint64]bool {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "current", "finalized"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]bool{}
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), "blk_"); ok && !strings.Contains(rest, "_") {
			id, err := strconv.ParseUint(rest, 10, 64)
			if err == nil {
				ids[id] = true
			}
		}
	}
	return ids
}

func writeFiles(t *testing.T, f *client.FileSystem, n, size int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		p := fmt.Sprintf("/vol/f%d", i)
		w, err := f.Create(context.Background(), p, client.CreateOptions{Replication: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data(size, uint64(100+i))); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func checkFiles(t *testing.T, f *client.FileSystem, paths []string, size int) {
	t.Helper()
	for i, p := range paths {
		r, err := f.Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data(size, uint64(100+i))) {
			t.Fatalf("%s: read %d bytes, err %v; want its %d bytes back", p, len(got), err, size)
		}
	}
}

// dn1TwoVolumes gives the first datanode two data directories, a and b,
// tolerating the loss of one and checking them every 100 ms; the others
// keep their defaults.
func dn1TwoVolumes(a, b string) func(i int) map[string]any {
	return func(i int) map[string]any {
		if i != 0 {
			return nil
		}
		return map[string]any{"data_dir": "", "data_dirs": []string{a, b}, "failed_volumes_tolerated": 1, "disk_check_interval": "100ms"}
	}
}

// A data directory of dn1 disappears (failed_volumes_tolerated 1): dn1
// takes it out of service and reports its replicas lost, the namenode
// copies each of them back to two live replicas elsewhere, and dn1 keeps
// serving the replicas of its other directory.
func TestVolumeLossIsReReplicated(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2,
		DataNodeFor: dn1TwoVolumes(a, b)})
	f := c.Client(t)
	const size = 2<<20 + 1000
	paths := writeFiles(t, f, 6, size)
	for _, p := range paths {
		c.WaitReplication(t, p, 2)
	}
	onA, onB := finalizedIDs(t, a), finalizedIDs(t, b)
	if len(onA) == 0 || len(onB) == 0 {
		t.Fatalf("dn1 holds %d replicas in its first directory and %d in its second; round robin should use both", len(onA), len(onB))
	}

	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	// A lost replica may come back to dn1 itself (it has room in its
	// other directory); then it must be a new copy there.
	waitVolumeReReplicated(t, c, f, paths, size, a, b, onA, onB)
	if err := c.DataNode(0).Stopped(); err != nil {
		t.Fatalf("dn1 stopped with one failed directory tolerated: %v", err)
	}
	checkFiles(t, f, paths, size)
}

// Past failed_volumes_tolerated (0) the datanode shuts down, saying which
// directory failed; the files stay readable from their other replicas.
func TestVolumeLossBeyondToleranceStopsDataNode(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Replication: 2,
		DataNodeFor: func(i int) map[string]any {
			if i != 0 {
				return nil
			}
			return map[string]any{"data_dir": "", "data_dirs": []string{a, b}, "disk_check_interval": "100ms"}
		}})
	f := c.Client(t)
	const size = 1<<20 + 1000
	paths := writeFiles(t, f, 3, size)
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	dn := c.DataNode(0)
	c.WaitFor(t, "dn1 to shut down after losing a data directory with none tolerated", func() bool { return dn.Stopped() != nil })
	if msg := dn.Stopped().Error(); !strings.Contains(msg, b) || !strings.Contains(msg, "failed_volumes_tolerated") {
		t.Fatalf("dn1 stopped with %q; want the failed directory %s and failed_volumes_tolerated named", msg, b)
	}
	addr := dn.DataAddr()
	c.WaitFor(t, "dn1's data port to close", func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err != nil
	})
	checkFiles(t, f, paths, size)
}

// waitVolumeReReplicated waits until every block of paths is listed on two
// live replicas, none of those dn1 lost with its data directory b listed
// on dn1 (unless copied back into a), and every replica in dn1's healthy
// directory a still listed on dn1.
func waitVolumeReReplicated(t *testing.T, c *testcluster.Cluster, f *client.FileSystem, paths []string, size int, a, b string, onA, onB map[uint64]bool) {
	t.Helper()
	ctx := context.Background()
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last seen:%s", last)
		}
	})
	c.WaitFor(t, "every replica of dn1's lost directory copied to a live one (two per block), and dn1 still listed for those of its other directory", func() bool {
		nowOnA := finalizedIDs(t, a)
		last = ""
		ok := true
		for _, p := range paths {
			locs, err := f.BlockLocations(ctx, p, 0, int64(size))
			if err != nil {
				last = err.Error()
				return false
			}
			for _, l := range locs {
				has := slices.Contains(l.Hosts, "dn1")
				switch {
				case len(l.Hosts) != 2:
					last += fmt.Sprintf(" blk_%d on %v;", l.BlockID, l.Hosts)
					ok = false
				case onB[l.BlockID] && has && !nowOnA[l.BlockID]:
					last += fmt.Sprintf(" blk_%d (lost with %s) still listed on dn1;", l.BlockID, b)
					ok = false
				case onA[l.BlockID] && !has:
					last += fmt.Sprintf(" blk_%d of dn1's healthy directory not listed on dn1;", l.BlockID)
					ok = false
				}
			}
		}
		return ok
	})
}
