package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"smarth/internal/client/fakedfs"
)

const testBlock = 256 << 10

type fakeCluster struct {
	nn  *fakedfs.Namenode
	dns []*fakedfs.Datanode
	fs  *FileSystem
}

func newFake(t *testing.T, n int, mode string) *fakeCluster {
	t.Helper()
	c := &fakeCluster{}
	for i := range n {
		c.dns = append(c.dns, fakedfs.StartDatanode(t, "dn"+string(rune('1'+i))))
	}
	c.nn = fakedfs.NewNamenode(c.dns...)
	c.nn.BlockSize = testBlock
	f, err := NewWithClient(Config{WriteMode: mode, IOTimeout: 10 * time.Second, Seed: 1, Logger: testLogger(t)}, c.nn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	c.fs = f
	return c
}

func testData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// put writes data in uneven pieces so packet and block boundaries fall
// inside Write calls.
func put(t *testing.T, f *FileSystem, path string, data []byte, opts CreateOptions) error {
	t.Helper()
	w, err := f.Create(context.Background(), path, opts)
	if err != nil {
		return err
	}
	for off := 0; off < len(data); {
		n := min(len(data)-off, 7777+off%50000)
		if _, err := w.Write(data[off : off+n]); err != nil {
			w.Abort()
			return err
		}
		off += n
	}
	return w.Close()
}

// checkReplicas verifies every replica the namenode recorded holds the
// file's bytes for its block, finalized, and returns the replica count of
// each block.
func (c *fakeCluster) checkReplicas(t *testing.T, path string, data []byte) []int {
	t.Helper()
	blocks, nodes := c.nn.FileBlocks(path)
	var off int64
	var counts []int
	for i, b := range blocks {
		want := data[off : off+b.GetNumBytes()]
		for _, id := range nodes[i] {
			dn := c.dn(id)
			got, gs, fin, ok := dn.Replica(b.GetBlockId())
			if !ok || !bytes.Equal(got, want) || !fin || gs != b.GetGenerationStamp() {
				t.Fatalf("block %d on %s: present %v finalized %v gs %d (want %d), %d bytes, equal %v",
					b.GetBlockId(), id, ok, fin, gs, b.GetGenerationStamp(), len(got), bytes.Equal(got, want))
			}
		}
		counts = append(counts, len(nodes[i]))
		off += b.GetNumBytes()
	}
	if off != int64(len(data)) {
		t.Fatalf("blocks hold %d bytes, file has %d", off, len(data))
	}
	return counts
}

func (c *fakeCluster) dn(id string) *fakedfs.Datanode {
	for _, d := range c.dns {
		if d.Info.GetId() == id {
			return d
		}
	}
	panic("no datanode " + id)
}

func readAll(t *testing.T, f *FileSystem, path string) []byte {
	t.Helper()
	r, err := f.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestClassicWriteAndRead(t *testing.T) {
	c := newFake(t, 3, "classic")
	data := testData(3*testBlock+12345, 1)
	if err := put(t, c.fs, "/a/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	counts := c.checkReplicas(t, "/a/f", data)
	if len(counts) != 4 {
		t.Fatalf("%d blocks, want 4", len(counts))
	}
	adds := c.nn.Calls("AddBlock")
	for _, a := range adds {
		if a != "AddBlock exclude=[] busy=[]" {
			t.Errorf("classic AddBlock call %q: one pipeline at a time has no busy nodes", a)
		}
	}
	if got := readAll(t, c.fs, "/a/f"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not equal to the %d written", len(got), len(data))
	}
	if got := c.nn.Calls("Complete"); len(got) != 1 || got[0] != "Complete /a/f blocks=4" {
		t.Fatalf("Complete calls %v", got)
	}
}

func TestEmptyFileAndExactBlock(t *testing.T) {
	c := newFake(t, 3, "classic")
	if err := put(t, c.fs, "/empty", nil, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := c.nn.Calls("AddBlock"); len(got) != 0 {
		t.Fatalf("empty file asked for blocks: %v", got)
	}
	data := testData(2*testBlock, 2)
	if err := put(t, c.fs, "/exact", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(c.checkReplicas(t, "/exact", data)); n != 2 {
		t.Fatalf("%d blocks for exactly two blocks of data", n)
	}
}

func TestCompleteRetriedUntilTrue(t *testing.T) {
	c := newFake(t, 3, "classic")
	c.nn.CompleteFalse(3)
	if err := put(t, c.fs, "/f", testData(1000, 3), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := len(c.nn.Calls("Complete")); got != 4 {
		t.Fatalf("Complete called %d times, want 3 refusals then success", got)
	}
}

func TestCompleteGivesUpWithClearError(t *testing.T) {
	c := newFake(t, 3, "classic")
	c.fs.cfg.CompleteTimeout = 100 * time.Millisecond
	c.nn.CompleteFalse(1 << 30)
	err := put(t, c.fs, "/f", testData(1000, 3), CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "did not confirm the file complete") {
		t.Fatalf("err = %v", err)
	}
}

func TestCreateExisting(t *testing.T) {
	c := newFake(t, 3, "classic")
	if err := put(t, c.fs, "/f", []byte("x"), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := put(t, c.fs, "/f", []byte("y"), CreateOptions{})
	if !errors.Is(err, fs.ErrExist) || err.Error() != "create /f: file exists" {
		t.Fatalf("err = %v", err)
	}
}

func TestNoDatanodes(t *testing.T) {
	c := newFake(t, 0, "classic")
	err := put(t, c.fs, "/f", testData(1000, 4), CreateOptions{})
	if !errors.Is(err, ErrNoDatanodes) || !strings.HasPrefix(err.Error(), "write /f: could only be written to 0") {
		t.Fatalf("err = %v", err)
	}
}

// Fewer datanodes than the replication: the namenode hands out what it
// has (HDFS), the file completes under-replicated.
func TestFewerDatanodesThanReplication(t *testing.T) {
	c := newFake(t, 2, "classic")
	data := testData(testBlock+10, 4)
	if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if counts := c.checkReplicas(t, "/f", data); counts[0] != 2 {
		t.Fatalf("replicas %v", counts)
	}
}

// A datanode killed in the middle of a write: the write completes on the
// survivors, byte-identical, under a new generation stamp.
func TestClassicRecoveryMiddleNodeKilled(t *testing.T) {
	for _, victim := range []int{0, 1, 2} {
		t.Run("dn"+string(rune('1'+victim)), func(t *testing.T) {
			c := newFake(t, 3, "classic")
			c.dns[victim].KillAfter(testBlock + 100<<10)
			data := testData(3*testBlock+777, 5)
			if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			counts := c.checkReplicas(t, "/f", data)
			if counts[0] != 3 || counts[1] != 2 || counts[2] != 2 {
				t.Fatalf("replicas per block %v, want [3 2 2 ...]: the dead node dropped from block 2 on", counts)
			}
			if len(c.nn.Calls("UpdatePipeline")) != 1 || len(c.nn.Calls("UpdateBlockForPipeline")) < 1 {
				t.Fatalf("recovery calls: %v %v", c.nn.Calls("UpdateBlockForPipeline"), c.nn.Calls("UpdatePipeline"))
			}
			if got := readAll(t, c.fs, "/f"); !bytes.Equal(got, data) {
				t.Fatal("read back differs")
			}
		})
	}
}

func TestRecoveryWithReplacement(t *testing.T) {
	c := newFake(t, 4, "classic")
	c.dns[1].KillAfter(100 << 10)
	data := testData(2*testBlock, 6)
	if err := put(t, c.fs, "/f", data, CreateOptions{ReplaceOnFailure: "always"}); err != nil {
		t.Fatal(err)
	}
	counts := c.checkReplicas(t, "/f", data)
	if counts[0] != 3 {
		t.Fatalf("replicas %v: the replacement should restore 3", counts)
	}
	if got := c.nn.Calls("GetAdditionalDatanode"); len(got) != 1 {
		t.Fatalf("GetAdditionalDatanode calls %v", got)
	}
	if got := c.nn.Calls("UpdatePipeline"); len(got) != 1 || !strings.Contains(got[0], "dn4") {
		t.Fatalf("UpdatePipeline %v should name the replacement dn4", got)
	}
}

func TestSetupFailureExcludesNode(t *testing.T) {
	c := newFake(t, 4, "classic")
	c.dns[1].Kill() // dead before the write: pipeline setup fails downstream
	data := testData(testBlock/2, 7)
	if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := c.nn.Calls("AbandonBlock"); len(got) != 1 {
		t.Fatalf("AbandonBlock calls %v", got)
	}
	adds := c.nn.Calls("AddBlock")
	if len(adds) != 2 || adds[1] != "AddBlock exclude=[dn2] busy=[]" {
		t.Fatalf("AddBlock calls %v: the retry must exclude dn2 (named by first_bad_link)", adds)
	}
	c.checkReplicas(t, "/f", data)
}

func TestAllNodesFailClearError(t *testing.T) {
	c := newFake(t, 3, "classic")
	for _, d := range c.dns {
		d.KillAfter(64 << 10)
	}
	err := put(t, c.fs, "/f", testData(testBlock, 8), CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "every datanode of its pipeline failed") {
		t.Fatalf("err = %v", err)
	}
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %s", err, n)
		}
	}
	if got := c.nn.Calls("Complete"); len(got) != 0 {
		t.Fatalf("a failed write must not complete the file: %v", got)
	}
}

func TestAbortDeletes(t *testing.T) {
	c := newFake(t, 3, "classic")
	w, err := c.fs.Create(context.Background(), "/f", CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(testData(100<<10, 9)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.fs.Stat(context.Background(), "/f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat after abort: %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after abort: %v", err)
	}
}

type tlog struct{ t *testing.T }

func (w tlog) Write(b []byte) (int, error) { w.t.Log(strings.TrimSpace(string(b))); return len(b), nil }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
