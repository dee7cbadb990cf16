package webhdfs_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// A datanode serves OPEN of the blocks it holds from its own store
// (datanode.ReadReplica); these tests check the bytes against the native
// client's, across block boundaries, and that a corrupt local replica is
// never served.

// dnMetric reads one counter of datanode i's /metrics.
func dnMetric(t *testing.T, c *testcluster.Cluster, i int, name string) float64 {
	t.Helper()
	res, err := http.Get("http://" + c.DataNode(i).HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("datanode %d has no metric %s", i, name)
	return 0
}

const localBytes = "smarth_datanode_webhdfs_local_read_bytes_total"

func localTotal(t *testing.T, c *testcluster.Cluster, n int) float64 {
	var sum float64
	for i := 0; i < n; i++ {
		sum += dnMetric(t, c, i, localBytes)
	}
	return sum
}

func writeFile(t *testing.T, fsys *client.FileSystem, path string, data []byte, repl int) {
	t.Helper()
	fw, err := fsys.Create(context.Background(), path, client.CreateOptions{Replication: repl})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenLocalRangesMatchNativeRead(t *testing.T) {
	const block = 1 << 20
	c, w := startCluster(t, testcluster.Options{DataNodes: 3, BlockSize: block, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	data := randBytes(3*block + block/2 + 77)
	writeFile(t, admin, "/f", data, 3) // every block on every datanode: all reads local
	fr, err := admin.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	native := func(off, n int64) []byte {
		b := make([]byte, n)
		if _, err := fr.ReadAt(b, off); err != nil {
			t.Fatalf("native ReadAt(%d, %d): %v", off, n, err)
		}
		return b
	}
	size := int64(len(data))
	var served float64
	for _, rg := range []struct{ off, n int64 }{
		{0, size},                    // whole file
		{block - 1000, block + 2000}, // spans three blocks
		{block, block},               // exactly one block, on its boundaries
		{block - 1, 2},               // one byte each side of a boundary
		{513, 3*block - 700},         // unaligned to chunks and blocks
		{3 * block, size - 3*block},  // the partial last block
		{size - 5, 5},                // the tail
		{2*block + 100, 0},           // nothing
	} {
		r := w.twoStep("GET", "/f", "OPEN", nil, "user.name="+osUser(t), fmt.Sprintf("offset=%d", rg.off), fmt.Sprintf("length=%d", rg.n))
		if r.code != 200 {
			t.Fatalf("OPEN offset=%d length=%d: %d %s", rg.off, rg.n, r.code, r.body)
		}
		if want := native(rg.off, rg.n); !bytes.Equal(r.body, want) {
			t.Fatalf("OPEN offset=%d length=%d: %d bytes differ from the native read's %d", rg.off, rg.n, len(r.body), len(want))
		}
		served += float64(rg.n)
	}
	// Every byte came from a datanode's own store, none through its client.
	if got := localTotal(t, c, 3); got != served {
		t.Fatalf("datanodes read %v bytes locally for %v served", got, served)
	}
}

// blockFile is datanode i's finalized block file of block id.
func blockFile(t *testing.T, c *testcluster.Cluster, i int, id uint64) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(c.DataDir(i), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == fmt.Sprintf("blk_%d", id) && strings.Contains(p, "finalized") {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("datanode %d has no finalized file of block %d", i, id)
	}
	return found
}

func TestOpenCorruptLocalReplicaFallsBack(t *testing.T) {
	const block = 1 << 20
	c, w := startCluster(t, testcluster.Options{DataNodes: 3, BlockSize: block, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	data := randBytes(3 * block)
	writeFile(t, admin, "/g", data, 3)
	locs, err := admin.BlockLocations(ctx, "/g", 0, int64(len(data)))
	if err != nil || len(locs) != 3 {
		t.Fatalf("locations: %v %v", locs, err)
	}

	// Step one names the datanode; corrupt its replica of the middle
	// block before step two reads it.
	r := w.op("GET", "/g", "OPEN", "user.name="+osUser(t))
	if r.code != http.StatusTemporaryRedirect {
		t.Fatalf("OPEN step one: %d %s", r.code, r.body)
	}
	u, err := url.Parse(r.hdr.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	target := -1
	for i := 0; i < 3; i++ {
		if c.DataNode(i).HTTPAddr() == u.Host {
			target = i
		}
	}
	if target < 0 {
		t.Fatalf("redirect %s is to no datanode", u)
	}
	p := blockFile(t, c, target, locs[1].BlockID)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[block/2] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := dnMetric(t, c, target, localBytes)
	fails := dnMetric(t, c, target, "smarth_datanode_checksum_failures_total")

	got := w.do("GET", u.String(), nil)
	if got.code != 200 || !bytes.Equal(got.body, data) {
		t.Fatalf("OPEN over a corrupt local replica: %d, %d bytes, equal=%v", got.code, len(got.body), bytes.Equal(got.body, data))
	}
	// The first block and the verified half of the second came from the
	// store; the rest of the second from another datanode; the third from
	// the store again.
	local := dnMetric(t, c, target, localBytes) - before
	if local < 2*block || local >= 3*block {
		t.Fatalf("%v bytes read locally; want the two good blocks (and at most part of the bad one)", local)
	}
	if dnMetric(t, c, target, "smarth_datanode_checksum_failures_total") <= fails {
		t.Fatal("the checksum mismatch was not counted")
	}
	// The replica is now marked corrupt (and soon replaced by the
	// namenode): a second OPEN still returns the right bytes.
	if got := w.do("GET", u.String(), nil); got.code != 200 || !bytes.Equal(got.body, data) {
		t.Fatalf("second OPEN: %d, %d bytes", got.code, len(got.body))
	}
}

// TestOpenMissingLocalReplicaFallsBack: block files gone from the
// redirected datanode's disk (the store still lists them) are read
// through the client from the other replicas, in the middle of a ranged
// OPEN that takes the other blocks from the store.
func TestOpenMissingLocalReplicaFallsBack(t *testing.T) {
	const block = 1 << 20
	c, w := startCluster(t, testcluster.Options{DataNodes: 3, BlockSize: block, Simple: true})
	admin := c.Client(t)
	data := randBytes(6*block + 999)
	writeFile(t, admin, "/m", data, 3)
	locs, err := admin.BlockLocations(context.Background(), "/m", 0, int64(len(data)))
	if err != nil || len(locs) != 7 {
		t.Fatalf("locations: %d %v", len(locs), err)
	}
	off, n := int64(block/2), int64(len(data)-block)
	r := w.op("GET", "/m", "OPEN", "user.name="+osUser(t), fmt.Sprintf("offset=%d", off), fmt.Sprintf("length=%d", n))
	u, err := url.Parse(r.hdr.Get("Location"))
	if r.code != http.StatusTemporaryRedirect || err != nil {
		t.Fatalf("OPEN step one: %d %v", r.code, err)
	}
	target := -1
	for i := 0; i < 3; i++ {
		if c.DataNode(i).HTTPAddr() == u.Host {
			target = i
		}
	}
	for _, b := range []int{2, 4} {
		if err := os.Remove(blockFile(t, c, target, locs[b].BlockID)); err != nil {
			t.Fatal(err)
		}
	}
	before := dnMetric(t, c, target, localBytes)
	got := w.do("GET", u.String(), nil)
	if got.code != 200 || !bytes.Equal(got.body, data[off:off+n]) {
		t.Fatalf("OPEN with missing local replicas: %d, %d bytes, equal=%v", got.code, len(got.body), bytes.Equal(got.body, data[off:off+n]))
	}
	if local := dnMetric(t, c, target, localBytes) - before; local != float64(n-2*block) {
		t.Fatalf("%v bytes read locally, want all but the two missing blocks (%d)", local, n-2*block)
	}
}
