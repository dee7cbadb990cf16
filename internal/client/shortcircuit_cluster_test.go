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

// shortCircuitCluster starts datanodes with domain sockets under one
// directory, and returns the cluster and the socket path template.
func shortCircuitCluster(t *testing.T, dataNodes int) (*testcluster.Cluster, string) {
	t.Helper()
	// A short directory: a unix socket's path has at most 107 bytes, and
	// t.TempDir's grow with the test's name.
	dir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "dn_PORT.sock")
	c := testcluster.Start(t, testcluster.Options{DataNodes: dataNodes, BlockSize: 1 << 20,
		DataNode: map[string]any{"domain_socket_path": sock}})
	return c, sock
}

func withSocket(path string) testcluster.ClientOption {
	return testcluster.WithConfig(func(c *client.Config) { c.DomainSocketPath = path })
}

// openFrom opens p for reading at offset from.
func openFrom(t *testing.T, f *client.FileSystem, p string, from int64) *client.FileReader {
	t.Helper()
	r, err := f.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seek(from, io.SeekStart); err != nil {
		r.Close()
		t.Fatal(err)
	}
	return r
}

// getTo copies p from offset from into a new local file with CopyToFile
// (as `fs get` does) and returns the file's content.
func getTo(t *testing.T, f *client.FileSystem, p string, from int64) []byte {
	t.Helper()
	r := openFrom(t, f, p, from)
	defer r.Close()
	dst, err := os.CreateTemp(t.TempDir(), "get")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	n, err := r.CopyToFile(dst, nil)
	if err != nil {
		t.Fatalf("CopyToFile after %d bytes: %v", n, err)
	}
	got, err := os.ReadFile(dst.Name())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != n {
		t.Fatalf("CopyToFile says %d bytes, the file holds %d", n, len(got))
	}
	return got
}

// catTo streams p from offset from with WriteTo (as `fs cat` does) into a
// pipe, or with appendFile into a file opened for append (which takes no
// sendfile), and returns what arrived.
func catTo(t *testing.T, f *client.FileSystem, p string, from int64, appendFile bool) []byte {
	t.Helper()
	r := openFrom(t, f, p, from)
	defer r.Close()
	if appendFile {
		name := filepath.Join(t.TempDir(), "cat")
		out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if n, err := r.WriteTo(out); err != nil {
			t.Fatalf("WriteTo after %d bytes: %v", n, err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- b
	}()
	n, err := r.WriteTo(pw)
	pw.Close()
	b := <-got
	if err != nil {
		t.Fatalf("WriteTo after %d bytes: %v", n, err)
	}
	if int64(len(b)) != n {
		t.Fatalf("WriteTo says %d bytes, the pipe carried %d", n, len(b))
	}
	return b
}

// `fs cat` through the replicas' descriptors: a file of six blocks, the
// last one short and not chunk aligned, comes back byte for byte into a
// pipe (the kernel sends the block files' pages) and into a file opened
// for append (no sendfile there: written from a mapping), every block by
// short-circuit (counted, so the test cannot pass by falling back to
// TCP), also from a position inside a block.
func TestShortCircuitCatIsByteExact(t *testing.T) {
	c, sock := shortCircuitCluster(t, 3)
	f := c.Client(t, withSocket(sock))
	want := data(5<<20+300_001, 31)
	mustPut(t, f, "/sc", want, client.CreateOptions{})

	for i, appendFile := range []bool{false, true} {
		if got := catTo(t, f, "/sc", 0, appendFile); !bytes.Equal(got, want) {
			t.Fatalf("append %v: got %d bytes, want the %d put (first difference at %d)", appendFile, len(got), len(want), firstDiff(got, want))
		}
		if blocks, fallbacks := f.ShortCircuitStats(); blocks != 6*int64(i+1) || fallbacks != 0 {
			t.Fatalf("append %v: short-circuit blocks %d, fallbacks %d; want all 6 blocks and no fallback", appendFile, blocks, fallbacks)
		}
	}
	from := int64(3<<20 + 12_345)
	if got := catTo(t, f, "/sc", from, false); !bytes.Equal(got, want[from:]) {
		t.Fatalf("from %d: got %d bytes, want %d (first difference at %d)", from, len(got), len(want)-int(from), firstDiff(got, want[from:]))
	}
	if blocks, _ := f.ShortCircuitStats(); blocks != 12+3 {
		t.Fatalf("short-circuit blocks %d after the third cat, want 15", blocks)
	}
}

// A file of six blocks, the last one short and not chunk aligned, comes
// back byte for byte through the replicas' descriptors: every block by
// short-circuit (the client's count says so, so the test cannot pass by
// falling back to TCP), also from a position inside a block.
func TestShortCircuitGetIsByteExact(t *testing.T) {
	c, sock := shortCircuitCluster(t, 3)
	f := c.Client(t, withSocket(sock))
	want := data(5<<20+300_001, 27)
	mustPut(t, f, "/sc", want, client.CreateOptions{})

	if got := getTo(t, f, "/sc", 0); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want the %d put (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	if blocks, fallbacks := f.ShortCircuitStats(); blocks != 6 || fallbacks != 0 {
		t.Fatalf("short-circuit blocks %d, fallbacks %d; want all 6 blocks and no fallback", blocks, fallbacks)
	}
	from := int64(3<<20 + 12_345)
	if got := getTo(t, f, "/sc", from); !bytes.Equal(got, want[from:]) {
		t.Fatalf("from %d: got %d bytes, want %d (first difference at %d)", from, len(got), len(want)-int(from), firstDiff(got, want[from:]))
	}
	if blocks, _ := f.ShortCircuitStats(); blocks != 6+3 {
		t.Fatalf("short-circuit blocks %d after the second copy, want 9", blocks)
	}
}

// One replica's block file is corrupted on disk (a byte flipped; size and
// checksums as they were). The short-circuit read checks the block before
// copying it, finds the mismatch, reports the replica to the namenode as
// a TCP read would, and copies the block from another replica: the file
// is right, and the namenode has the corrupt replica replaced. Both as
// `fs get` (CopyToFile) and as `fs cat` (WriteTo to a pipe) read.
func TestShortCircuitCorruptReplicaReportedAndAvoided(t *testing.T) {
	for _, how := range []string{"get", "cat"} {
		t.Run(how, func(t *testing.T) { testShortCircuitCorruptReplica(t, how) })
	}
}

func testShortCircuitCorruptReplica(t *testing.T, how string) {
	c, sock := shortCircuitCluster(t, 4)
	w := c.Client(t, withSocket(sock), testcluster.WithClientHost("dn2"))
	want := data(3<<20, 28)
	mustPut(t, w, "/bad", want, client.CreateOptions{})
	c.WaitReplication(t, "/bad", 3)
	ctx := context.Background()
	locs, err := w.BlockLocations(ctx, "/bad", 1<<20, 1)
	if err != nil || len(locs) != 1 || len(locs[0].Hosts) == 0 {
		t.Fatalf("locations of the second block: %+v, %v", locs, err)
	}
	// The reader runs on the host of one of the second block's replicas
	// (placement need not have put one on the writer's host, dn2, on a
	// busy machine): the namenode lists that replica first to it, so
	// that is the one short-circuit reads try first.
	bad := locs[0].Hosts[0]
	f := c.Client(t, withSocket(sock), testcluster.WithClientHost(bad))
	if locs, err = f.BlockLocations(ctx, "/bad", 1<<20, 1); err != nil || len(locs) != 1 || locs[0].Hosts[0] != bad {
		t.Fatalf("locations of the second block for a reader on %s: %+v, %v; want %s first", bad, locs, err, bad)
	}
	blk := locs[0].BlockID
	replica := func(host string) string {
		i, _ := strconv.Atoi(host[len("dn"):])
		return filepath.Join(c.DataDir(i-1), "current", "finalized", "blk_"+strconv.FormatUint(blk, 10))
	}
	b, err := os.ReadFile(replica(bad))
	if err != nil {
		t.Fatal(err)
	}
	b[700_001] ^= 0x40
	if err := os.WriteFile(replica(bad), b, 0o600); err != nil {
		t.Fatal(err)
	}

	var got []byte
	if how == "get" {
		got = getTo(t, f, "/bad", 0)
	} else {
		got = catTo(t, f, "/bad", 0, false)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want the %d put (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	if blocks, fallbacks := f.ShortCircuitStats(); blocks != 3 || fallbacks != 0 {
		t.Errorf("short-circuit blocks %d, fallbacks %d; want 3 (the bad block from another local replica) and 0", blocks, fallbacks)
	}

	wantBlock := want[1<<20 : 2<<20]
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last seen: %s", last)
		}
	})
	c.WaitFor(t, "the reported replica on "+bad+" replaced by a good copy (the namenode heard of it from the reader)", func() bool {
		locs, err := f.BlockLocations(ctx, "/bad", 1<<20, 1)
		if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 3 {
			last = "not three replicas listed"
			return false
		}
		for _, h := range locs[0].Hosts {
			if got, err := os.ReadFile(replica(h)); err != nil || !bytes.Equal(got, wantBlock) {
				last = h + "'s replica is not the block's bytes"
				return false
			}
		}
		return true
	})
}

// A client told of a socket no datanode serves reads every block over
// TCP, and says so in its count: short-circuit is an optimization the
// user never sees fail.
func TestShortCircuitFallsBackWithoutSocket(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	f := c.Client(t, withSocket(filepath.Join(t.TempDir(), "none_PORT.sock")))
	want := data(3<<20+5, 29)
	mustPut(t, f, "/tcp", want, client.CreateOptions{})
	if got := getTo(t, f, "/tcp", 0); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want the %d put (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	if blocks, fallbacks := f.ShortCircuitStats(); blocks != 0 || fallbacks == 0 {
		t.Fatalf("short-circuit blocks %d, fallbacks %d; want 0 and at least 1", blocks, fallbacks)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
