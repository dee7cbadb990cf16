package client_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// Append, truncate and concat against a real in-process cluster: the
// bytes read back, every replica's stored checksums, the errors HDFS
// gives, and namenode restarts.

const fdBlock = 256 << 10 // small blocks: a few hundred KiB span several

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustAppend(t *testing.T, f *client.FileSystem, path string, b []byte, opts client.AppendOptions) {
	t.Helper()
	w, err := f.Append(ctxT(t), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Odd-sized writes, so packets start and end anywhere in a chunk.
	for len(b) > 0 {
		n := min(len(b), 7919)
		if _, err := w.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func wantContent(t *testing.T, f *client.FileSystem, path string, want []byte) {
	t.Helper()
	got := mustRead(t, f, path)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: read %d bytes, want %d; first difference at byte %d", path, len(got), len(want), i)
	}
	st, err := f.Stat(ctxT(t), path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(want)) || st.UnderConstruction {
		t.Fatalf("%s: stat says %d bytes, under construction %v; want %d, closed", path, st.Size, st.UnderConstruction, len(want))
	}
}

// verifyReplicas checks, on the disks of the datanodes the namenode lists
// for each of path's blocks, the finalized replica: its length is the block's and each stored CRC32C
// matches its chunk (the partial chunk an append extended, the chunk a
// truncate cut). It returns how many replicas it checked.
func verifyReplicas(t *testing.T, c *testcluster.Cluster, f *client.FileSystem, path string) int {
	t.Helper()
	resp, err := f.Namenode().GetBlockLocations(ctxT(t), &dfspb.GetBlockLocationsRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	checked := 0
	for _, lb := range resp.GetLocations().GetBlocks() {
		b := struct {
			BlockID, GenerationStamp uint64
			Length                   int64
		}{lb.GetBlock().GetBlockId(), lb.GetBlock().GetGenerationStamp(), lb.GetBlock().GetNumBytes()}
		// The replicas the namenode lists: a stale one on a node that
		// missed the append or the cut is the namenode's to delete.
		for _, loc := range lb.GetLocations() {
			i := hostIndex(t, loc.GetHostname())
			metas, _ := filepath.Glob(filepath.Join(c.DataDir(i), "current", "finalized", fmt.Sprintf("blk_%d_*.meta", b.BlockID)))
			if len(metas) != 1 || !strings.HasSuffix(metas[0], fmt.Sprintf("_%d.meta", b.GenerationStamp)) {
				t.Errorf("%s block %d on %s: meta files %v, want one for generation stamp %d", path, b.BlockID, testcluster.Hostname(i), metas, b.GenerationStamp)
				continue
			}
			data, err1 := os.ReadFile(filepath.Join(filepath.Dir(metas[0]), fmt.Sprintf("blk_%d", b.BlockID)))
			meta, err2 := os.ReadFile(metas[0])
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != b.Length {
				t.Errorf("%s block %d on %s: %d bytes, block has %d", path, b.BlockID, testcluster.Hostname(i), len(data), b.Length)
				continue
			}
			sums := meta[store.MetaHeaderLen:]
			if want := (len(data) + 511) / 512 * 4; len(sums) != want {
				t.Errorf("%s block %d on %s: %d checksum bytes, want %d", path, b.BlockID, testcluster.Hostname(i), len(sums), want)
				continue
			}
			for k := 0; k*512 < len(data); k++ {
				chunk := data[k*512 : min(len(data), (k+1)*512)]
				if got, want := crc32.Checksum(chunk, table), binary.BigEndian.Uint32(sums[4*k:]); got != want {
					t.Errorf("%s block %d on %s: chunk %d checksum %08x, stored %08x", path, b.BlockID, testcluster.Hostname(i), k, got, want)
					break
				}
			}
			checked++
		}
	}
	return checked
}

func TestAppendBothModes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: fdBlock})
	for _, mode := range []string{"classic", "multipipeline"} {
		t.Run(mode, func(t *testing.T) {
			f := c.Client(t, testcluster.WithWriteMode(mode))
			opts := client.CreateOptions{Replication: 2}
			dir := "/append-" + mode

			// A partial, unaligned last block (37857 = 73*512 + 481).
			p := dir + "/partial"
			want := data(fdBlock+37857, 1)
			mustPut(t, f, p, want, opts)
			more := data(600_003, 2)
			mustAppend(t, f, p, more, client.AppendOptions{})
			want = append(want, more...)
			wantContent(t, f, p, want)
			// Again into what is now a partial block, a few bytes only.
			mustAppend(t, f, p, []byte("tail"), client.AppendOptions{})
			want = append(want, "tail"...)
			wantContent(t, f, p, want)
			c.WaitReplication(t, p, 2)
			if n := verifyReplicas(t, c, f, p); n != 2*4 {
				t.Errorf("%d replicas checked, want 8 (4 blocks x 2)", n)
			}

			// A full last block: the append starts a new block.
			q := dir + "/full"
			wq := data(2*fdBlock, 3)
			mustPut(t, f, q, wq, opts)
			extra := data(fdBlock+100, 4)
			mustAppend(t, f, q, extra, client.AppendOptions{})
			wq = append(wq, extra...)
			wantContent(t, f, q, wq)
			verifyReplicas(t, c, f, q)

			// An empty file, and an append of nothing.
			e := dir + "/empty"
			mustPut(t, f, e, nil, opts)
			mustAppend(t, f, e, nil, client.AppendOptions{})
			wantContent(t, f, e, nil)
			mustAppend(t, f, e, []byte("x"), client.AppendOptions{})
			mustAppend(t, f, e, nil, client.AppendOptions{})
			wantContent(t, f, e, []byte("x"))

			// The checksum of an appended file is the checksum of the
			// same bytes written at once: every stored chunk CRC agrees.
			fresh := dir + "/fresh"
			mustPut(t, f, fresh, want, opts)
			a, err := f.FileChecksum(ctxT(t), p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := f.FileChecksum(ctxT(t), fresh)
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Errorf("checksum of the appended file %x differs from the same bytes written at once %x", a.MD5, b.MD5)
			}
		})
	}
}

// TestAppendAfterDatanodeDeath: a datanode holding the partial last block
// is gone; the append pipeline is built from the others.
func TestAppendDatanodeDown(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: fdBlock, DeadNodeTimeout: 30 * time.Second})
	f := c.Client(t)
	want := data(1000, 5)
	mustPut(t, f, "/down/f", want, client.CreateOptions{Replication: 3})
	blocks, err := f.BlockLocations(ctxT(t), "/down/f", 0, 1)
	if err != nil || len(blocks) != 1 {
		t.Fatalf("%v %v", blocks, err)
	}
	// Killed, but not yet declared dead: the namenode still offers it.
	c.KillDataNode(hostIndex(t, blocks[0].Hosts[0]))
	more := data(300_000, 6)
	mustAppend(t, f, "/down/f", more, client.AppendOptions{})
	wantContent(t, f, "/down/f", append(want, more...))
}

func TestAppendRefusals(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/shared", 0o777, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetPermission(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}

	// Open elsewhere: another client writing it, or this client itself.
	writer := c.Client(t)
	w, err := writer.Create(ctx, "/shared/open", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("half")); err != nil {
		t.Fatal(err)
	}
	other := c.Client(t)
	_, err = other.Append(ctx, "/shared/open", client.AppendOptions{})
	if !errors.Is(err, client.ErrLease) || !strings.Contains(err.Error(), "/shared/open") || !strings.Contains(err.Error(), writer.ClientName()) {
		t.Fatalf("append to a file another client writes: %v; want a lease error naming the path and the holder", err)
	}
	_, err = writer.Append(ctx, "/shared/open", client.AppendOptions{})
	if !errors.Is(err, client.ErrLease) || !strings.Contains(err.Error(), "already the current lease holder") {
		t.Fatalf("append by the writer itself: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// While one append is open, a second one is refused too.
	aw, err := other.Append(ctx, "/shared/open", client.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Append(ctx, "/shared/open", client.AppendOptions{}); !errors.Is(err, client.ErrLease) {
		t.Fatalf("append while another append is open: %v", err)
	}
	if _, err := aw.Write([]byte("-whole")); err != nil {
		t.Fatal(err)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, admin, "/shared/open", []byte("half-whole"))

	// Permission: write on the file is needed.
	alice := c.Client(t, testcluster.WithUser("alice"))
	bob := c.Client(t, testcluster.WithUser("bob"))
	mustPut(t, alice, "/shared/alices", []byte("mine"), client.CreateOptions{Perm: 0o644})
	if _, err := bob.Append(ctx, "/shared/alices", client.AppendOptions{}); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/shared/alices") {
		t.Fatalf("bob appends to alice's 0644 file: %v; want permission denied naming the path", err)
	}
	if err := alice.SetPermission(ctx, "/shared/alices", 0o666); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, bob, "/shared/alices", []byte(" and bob's"), client.AppendOptions{})
	wantContent(t, alice, "/shared/alices", []byte("mine and bob's"))

	// Missing files and directories.
	if _, err := admin.Append(ctx, "/shared/nope", client.AppendOptions{}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/shared/nope") {
		t.Fatalf("append to a missing file: %v", err)
	}
	if _, err := admin.Append(ctx, "/shared", client.AppendOptions{}); !errors.Is(err, client.ErrIsDir) {
		t.Fatalf("append to a directory: %v", err)
	}
}

func TestAppendQuota(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	f := c.Client(t)
	mustPut(t, f, "/q/f", []byte("0123456789"), client.CreateOptions{Replication: 3})
	// An append charges the rest of the partial block at once: 3 x
	// (block - 10) on top of the 30 bytes charged now.
	if err := f.SetQuota(ctx, "/q", client.QuotaDontSet, 3*fdBlock-1); err != nil {
		t.Fatal(err)
	}
	_, err := f.Append(ctx, "/q/f", client.AppendOptions{})
	if !errors.Is(err, client.ErrQuotaExceeded) || !strings.Contains(err.Error(), "The DiskSpace quota of /q is exceeded") {
		t.Fatalf("append over the space quota: %v", err)
	}
	st, err := f.Stat(ctx, "/q/f")
	if err != nil || st.UnderConstruction {
		t.Fatalf("the refused append left the file open: %+v %v", st, err)
	}
	if err := f.SetQuota(ctx, "/q", client.QuotaDontSet, 3*fdBlock); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, f, "/q/f", []byte("abc"), client.AppendOptions{})
	wantContent(t, f, "/q/f", []byte("0123456789abc"))
	cs, err := f.ContentSummary(ctx, "/q")
	if err != nil {
		t.Fatal(err)
	}
	if cs.SpaceConsumed != 3*13 {
		t.Errorf("space consumed %d after the append closed, want %d", cs.SpaceConsumed, 3*13)
	}
}

func TestTruncate(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(3*fdBlock+1000, 7)
	mustPut(t, f, "/t/f", orig, client.CreateOptions{})

	// Larger than the file, or negative: refused, the file untouched.
	if _, err := f.Truncate(ctx, "/t/f", int64(len(orig))+1); !errors.Is(err, fs.ErrInvalid) ||
		!strings.Contains(err.Error(), fmt.Sprintf("Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", len(orig), len(orig)+1)) ||
		!strings.Contains(err.Error(), "/t/f") {
		t.Fatalf("truncate beyond the end: %v", err)
	}
	if _, err := f.Truncate(ctx, "/t/f", -1); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("negative truncate: %v", err)
	}
	// The same length: nothing to do.
	if ready, err := f.Truncate(ctx, "/t/f", int64(len(orig))); err != nil || !ready {
		t.Fatalf("truncate to the same length: %v %v", ready, err)
	}
	// On a block boundary: done at once.
	ready, err := f.Truncate(ctx, "/t/f", 2*fdBlock)
	if err != nil || !ready {
		t.Fatalf("truncate on a block boundary: ready %v, %v; want true", ready, err)
	}
	wantContent(t, f, "/t/f", orig[:2*fdBlock])

	// Inside a block: the datanodes cut it; the file is under
	// construction until they are done.
	cut := int64(fdBlock + 12345)
	ready, err = f.Truncate(ctx, "/t/f", cut)
	if err != nil || ready {
		t.Fatalf("truncate inside a block: ready %v, %v; want false", ready, err)
	}
	if err := f.WaitClosed(ctx, "/t/f"); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f, "/t/f", orig[:cut])
	c.WaitReplication(t, "/t/f", 3)
	if n := verifyReplicas(t, c, f, "/t/f"); n != 6 {
		t.Errorf("%d replicas checked, want 6", n)
	}
	// The cut block takes appends like any partial block.
	mustAppend(t, f, "/t/f", []byte("after"), client.AppendOptions{})
	wantContent(t, f, "/t/f", append(append([]byte{}, orig[:cut]...), "after"...))
	verifyReplicas(t, c, f, "/t/f")

	// To zero.
	if ready, err := f.Truncate(ctx, "/t/f", 0); err != nil || !ready {
		t.Fatalf("truncate to 0: %v %v", ready, err)
	}
	wantContent(t, f, "/t/f", nil)

	// A file being written, a directory, a missing file, no permission.
	w, err := f.Create(ctx, "/t/open", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Truncate(ctx, "/t/open", 0); !errors.Is(err, client.ErrLease) || !strings.Contains(err.Error(), "/t/open") {
		t.Fatalf("truncate of a file being written: %v", err)
	}
	w.Close()
	if _, err := f.Truncate(ctx, "/t", 0); !errors.Is(err, client.ErrIsDir) {
		t.Fatalf("truncate of a directory: %v", err)
	}
	if _, err := f.Truncate(ctx, "/t/nope", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("truncate of a missing file: %v", err)
	}
	mustPut(t, f, "/t/ro", []byte("read only"), client.CreateOptions{Perm: 0o644})
	bob := c.Client(t, testcluster.WithUser("bob"))
	if _, err := bob.Truncate(ctx, "/t/ro", 1); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/t/ro") {
		t.Fatalf("bob truncates a 0644 file: %v", err)
	}
}

// TestTruncateWhileRecoveringIsRefused: a file whose last block is being
// cut cannot be appended to or truncated again until it is done.
func TestTruncateInProgressRefusesWriters(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock, DeadNodeTimeout: 30 * time.Second})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(fdBlock+5000, 8)
	mustPut(t, f, "/p/f", orig, client.CreateOptions{})
	// With every datanode stopped the recovery command waits; the
	// namenode still counts them live for DeadNodeTimeout.
	for i := range 3 {
		c.KillDataNode(i)
	}
	if ready, err := f.Truncate(ctx, "/p/f", 100); err != nil || ready {
		t.Fatalf("truncate: %v %v", ready, err)
	}
	if _, err := f.Append(ctx, "/p/f", client.AppendOptions{}); !errors.Is(err, client.ErrUnavailable) || !strings.Contains(err.Error(), "being truncated") {
		t.Fatalf("append during a truncate: %v", err)
	}
	if _, err := f.Truncate(ctx, "/p/f", 10); !errors.Is(err, client.ErrUnavailable) {
		t.Fatalf("truncate during a truncate: %v", err)
	}
	// Across a namenode restart the truncate goes on once the datanodes
	// are back.
	c.RestartNameNode()
	for i := range 3 {
		c.RestartDataNode(i)
	}
	if err := f.WaitClosed(ctx, "/p/f"); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f, "/p/f", orig[:100])
	verifyReplicas(t, c, f, "/p/f")
}

func TestConcat(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	f := c.Client(t)
	put := func(p string, n int, seed uint64, opts client.CreateOptions) []byte {
		b := data(n, seed)
		mustPut(t, f, p, b, opts)
		return b
	}
	trg := put("/c/t", 2*fdBlock, 10, client.CreateOptions{})
	s1 := put("/c/s1", fdBlock, 11, client.CreateOptions{})
	s2 := put("/c/s2", 2*fdBlock+777, 12, client.CreateOptions{})
	if err := f.Concat(ctx, "/c/t", []string{"/c/s1", "/c/s2"}); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte{}, trg...), s1...), s2...)
	wantContent(t, f, "/c/t", want)
	for _, s := range []string{"/c/s1", "/c/s2"} {
		if _, err := f.Stat(ctx, s); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("source %s still there after concat: %v", s, err)
		}
	}
	c.WaitReplication(t, "/c/t", 3)

	// Every bad case, with HDFS's words; nothing changes.
	put("/c/tt", fdBlock, 19, client.CreateOptions{})
	put("/c/full", fdBlock, 20, client.CreateOptions{})
	put("/c/partial", 100, 21, client.CreateOptions{})
	put("/c/partial2", 200, 22, client.CreateOptions{})
	put("/c/r2", fdBlock, 23, client.CreateOptions{Replication: 2})
	put("/c/big", 2*fdBlock, 24, client.CreateOptions{BlockSize: 2 * fdBlock})
	put("/c/empty", 0, 25, client.CreateOptions{})
	put("/d/other", 100, 26, client.CreateOptions{})
	w, err := f.Create(ctx, "/c/open", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range []struct {
		target string
		srcs   []string
		kind   error
		msg    string
	}{
		{"/c/tt", nil, fs.ErrInvalid, "no sources given"},
		{"/c/tt", []string{"/d/other"}, fs.ErrInvalid, "Sources and target are not in the same directory"},
		{"/c/tt", []string{"/c/empty"}, fs.ErrInvalid, "concat: source file /c/empty is invalid or empty or underConstruction"},
		{"/c/tt", []string{"/c/open"}, fs.ErrInvalid, "concat: source file /c/open is invalid or empty or underConstruction"},
		{"/c/tt", []string{"/c/partial", "/c/full"}, fs.ErrInvalid, "concat: the source file /c/partial and the target file /c/tt should have the same blocks sizes: target block size is 262144 but the size of source block 0 is 100"},
		{"/c/partial", []string{"/c/full"}, fs.ErrInvalid, "The last block in /c/partial is not full; last block size = 100 but file block size = 262144"},
		{"/c/empty", []string{"/c/full"}, fs.ErrInvalid, "concat: target file /c/empty is empty"},
		{"/c/open", []string{"/c/full"}, client.ErrLease, "concat: target file /c/open is under construction"},
		{"/c/tt", []string{"/c/r2"}, fs.ErrInvalid, "concat: the source file /c/r2 and the target file /c/tt should have the same replication: source replication is 2 but target replication is 3"},
		{"/c/tt", []string{"/c/big"}, fs.ErrInvalid, "concat: source file /c/big has preferred block size 524288 which is greater than the target file's preferred block size 262144"},
		{"/c/tt", []string{"/c/full", "/c/full"}, fs.ErrInvalid, "concat: at least two of the source files are the same"},
		{"/c/tt", []string{"/c/tt"}, fs.ErrInvalid, "concat: the src file /c/tt is the same with the target file /c/tt"},
		{"/c/tt", []string{"/c/missing"}, fs.ErrNotExist, "/c/missing"},
		{"/c/missing", []string{"/c/full"}, fs.ErrNotExist, "/c/missing"},
		{"/c/tt", []string{"/c"}, fs.ErrInvalid, "Sources and target are not in the same directory"},
	} {
		err := f.Concat(ctx, tc.target, tc.srcs)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("concat %s %v: %v; want %v with %q", tc.target, tc.srcs, err, tc.kind, tc.msg)
		}
	}
	wantContent(t, f, "/c/t", want)
	wantContent(t, f, "/c/tt", data(fdBlock, 19))
	wantContent(t, f, "/c/partial", data(100, 21))

	// Permission: read on the sources, write on the target and the
	// directory.
	if err := f.Mkdir(ctx, "/open", 0o777, true); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPermission(ctx, "/open", 0o777); err != nil {
		t.Fatal(err)
	}
	alice := c.Client(t, testcluster.WithUser("alice"))
	mustPut(t, alice, "/open/t", data(fdBlock, 30), client.CreateOptions{Perm: 0o644})
	mustPut(t, f, "/open/private", data(100, 31), client.CreateOptions{Perm: 0o600})
	if err := alice.Concat(ctx, "/open/t", []string{"/open/private"}); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/open/private") {
		t.Fatalf("alice concats a file she cannot read: %v", err)
	}
	// The last source may end in a partial block; two partial sources
	// may not both be used unless the partial one is last.
	if err := f.Concat(ctx, "/c/full", []string{"/c/partial"}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f, "/c/full", append(data(fdBlock, 20), data(100, 21)...))
}

// TestFileDataSurvivesRestarts: every operation's effect survives a
// namenode restart from its edit log, and from a checkpoint image.
func TestFileDataSurvivesRestarts(t *testing.T) {
	for _, image := range []bool{false, true} {
		t.Run(fmt.Sprintf("image=%v", image), func(t *testing.T) {
			opts := testcluster.Options{DataNodes: 3, BlockSize: fdBlock}
			if image {
				// A checkpoint after every edit: the restart loads the image.
				opts.NameNode = map[string]any{"checkpoint_txns": 1}
			}
			c := testcluster.Start(t, opts)
			ctx := ctxT(t)
			f := c.Client(t)
			a := data(fdBlock+300, 40)
			mustPut(t, f, "/r/a", a, client.CreateOptions{})
			more := data(70_000, 41)
			mustAppend(t, f, "/r/a", more, client.AppendOptions{})
			a = append(a, more...)

			b := data(2*fdBlock+900, 42)
			mustPut(t, f, "/r/b", b, client.CreateOptions{})
			if ready, err := f.Truncate(ctx, "/r/b", fdBlock); err != nil || !ready {
				t.Fatal(ready, err)
			}
			b2 := data(fdBlock+900, 43)
			mustPut(t, f, "/r/b2", b2, client.CreateOptions{})
			if _, err := f.Truncate(ctx, "/r/b2", 1111); err != nil {
				t.Fatal(err)
			}
			if err := f.WaitClosed(ctx, "/r/b2"); err != nil {
				t.Fatal(err)
			}

			t1, s1 := data(fdBlock, 44), data(5000, 45)
			mustPut(t, f, "/r/t", t1, client.CreateOptions{})
			mustPut(t, f, "/r/s", s1, client.CreateOptions{})
			if err := f.Concat(ctx, "/r/t", []string{"/r/s"}); err != nil {
				t.Fatal(err)
			}
			b, b2 = b[:fdBlock], b2[:1111:1111]
			t1 = append(t1, s1...)
			check := func(when string) {
				t.Helper()
				t.Log(when)
				wantContent(t, f, "/r/a", a)
				wantContent(t, f, "/r/b", b)
				wantContent(t, f, "/r/b2", b2)
				wantContent(t, f, "/r/t", t1)
				if _, err := f.Stat(ctx, "/r/s"); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: /r/s is back: %v", when, err)
				}
			}
			check("live")
			c.RestartNameNode()
			check("after a restart")
			// The files take appends after the restart: their blocks,
			// stamps and lengths are what the datanodes hold.
			mustAppend(t, f, "/r/b2", []byte("!"), client.AppendOptions{})
			mustAppend(t, f, "/r/t", []byte("?"), client.AppendOptions{})
			b2 = append(b2, '!')
			t1 = append(t1, '?')
			c.RestartNameNode()
			check("after a second restart")
		})
	}
}

// TestFileDataWithSnapshots: a snapshot keeps what the file held when it
// was taken. Append goes on (the snapshot reads its old length); a
// truncate on a block boundary keeps the dropped blocks for the snapshot;
// a truncate inside a block a snapshot holds is made on a copy (the
// snapshot keeps the block); a concat source in a snapshot is refused, as
// HDFS does.
func TestFileDataWithSnapshots(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(2*fdBlock+3000, 50)
	mustPut(t, f, "/s/f", orig, client.CreateOptions{})
	mustPut(t, f, "/s/t", data(fdBlock, 51), client.CreateOptions{})
	if err := f.AllowSnapshot(ctx, "/s"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateSnapshot(ctx, "/s", "s1"); err != nil {
		t.Fatal(err)
	}
	more := data(4000, 52)
	mustAppend(t, f, "/s/f", more, client.AppendOptions{})
	wantContent(t, f, "/s/f", append(append([]byte{}, orig...), more...))
	if got := mustRead(t, f, "/s/.snapshot/s1/f"); !bytes.Equal(got, orig) {
		t.Fatalf("snapshot of the appended file reads %d bytes, want the %d it had", len(got), len(orig))
	}
	if ready, err := f.Truncate(ctx, "/s/f", fdBlock+10); err != nil || ready {
		t.Fatalf("truncate inside a block a snapshot holds: %v %v", ready, err)
	}
	if err := f.WaitClosed(ctx, "/s/f"); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f, "/s/f", orig[:fdBlock+10])
	if got := mustRead(t, f, "/s/.snapshot/s1/f"); !bytes.Equal(got, orig) {
		t.Fatalf("snapshot after a copy-on-truncate reads %d bytes, want %d", len(got), len(orig))
	}
	if ready, err := f.Truncate(ctx, "/s/f", fdBlock); err != nil || !ready {
		t.Fatalf("truncate on a block boundary of a snapshotted file: %v %v", ready, err)
	}
	wantContent(t, f, "/s/f", orig[:fdBlock])
	if got := mustRead(t, f, "/s/.snapshot/s1/f"); !bytes.Equal(got, orig) {
		t.Fatalf("snapshot after the truncate reads %d bytes, want %d", len(got), len(orig))
	}
	if err := f.Concat(ctx, "/s/f", []string{"/s/t"}); err == nil || !strings.Contains(err.Error(), "Concat: the source file /s/t is in snapshot") {
		t.Fatalf("concat of a source in a snapshot: %v", err)
	}
	if _, err := f.Append(ctx, "/s/.snapshot/s1/f", client.AppendOptions{}); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("append to a snapshot path: %v", err)
	}
}

// TestAppendAfterWriterGone: an appending writer that goes away without
// closing leaves the file open; once its lease passes the soft limit,
// another client's append recovers the file (keeping what the datanodes
// hold) and goes on, as HDFS's recoverLease on append.
func TestAppendAfterWriterGone(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock,
		LeaseSoftLimit: 300 * time.Millisecond, LeaseHardLimit: time.Minute})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(1000, 60)
	mustPut(t, f, "/gone/f", orig, client.CreateOptions{})
	w, err := f.Append(ctx, "/gone/f", client.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lost := data(5000, 61)
	if _, err := w.Write(lost); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil { // the writer stops; the file stays
		t.Fatal(err)
	}
	other := c.Client(t)
	var w2 *client.FileWriter
	c.WaitFor(t, "another client's append after lease recovery", func() bool {
		w2, err = other.Append(ctx, "/gone/f", client.AppendOptions{})
		if err != nil && !errors.Is(err, client.ErrUnavailable) && !errors.Is(err, client.ErrLease) {
			t.Fatalf("append after the writer left: %v", err)
		}
		return err == nil
	})
	if _, err := w2.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, other, "/gone/f")
	n := len(got) - len(orig) - 1
	if n < 0 || !bytes.Equal(got[:len(orig)], orig) || !bytes.Equal(got[len(orig):len(orig)+n], lost[:n]) || got[len(got)-1] != '!' {
		t.Fatalf("after recovery and append: %d bytes; want the original 1000, a prefix of the abandoned 5000, then '!'", len(got))
	}
	verifyReplicas(t, c, other, "/gone/f")
}

// TestAppendDatanodeDiesMidway: a datanode of the append pipeline crashes
// while the partial block is being continued; the pipeline is recovered
// on the others (new stamp, resent packets) and the file reads back
// whole, in both write modes.
func TestAppendDatanodeDiesMidway(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: fdBlock, DeadNodeTimeout: 30 * time.Second})
	for _, mode := range []string{"classic", "multipipeline"} {
		t.Run(mode, func(t *testing.T) {
			ctx := ctxT(t)
			f := c.Client(t, testcluster.WithWriteMode(mode))
			p := "/die/" + mode
			orig := data(fdBlock/2+333, 70)
			mustPut(t, f, p, orig, client.CreateOptions{Replication: 3})
			c.WaitReplication(t, p, 3) // the append pipeline is the replicas the namenode knows
			r0, err := f.Namenode().GetBlockLocations(ctx, &dfspb.GetBlockLocationsRequest{Path: p})
			if err != nil || len(r0.GetLocations().GetBlocks()) != 1 {
				t.Fatalf("%v %v", r0, err)
			}
			gs0 := r0.GetLocations().GetBlocks()[0].GetBlock().GetGenerationStamp()
			w, err := f.Append(ctx, p, client.AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			more := data(3*fdBlock, 71)
			half := 100_000 // a packet or two on their way, the partial block far from full
			if _, err := w.Write(more[:half]); err != nil {
				t.Fatal(err)
			}
			// Once the append pipeline is up (the namenode has its new
			// stamp), one of its nodes crashes.
			var pipeline []string
			c.WaitFor(t, "the append pipeline", func() bool {
				r, err := f.Namenode().GetBlockLocations(ctx, &dfspb.GetBlockLocationsRequest{Path: p})
				if err != nil {
					return false
				}
				lb := r.GetLocations().GetLastBlock()
				pipeline = pipeline[:0]
				for _, l := range lb.GetLocations() {
					pipeline = append(pipeline, l.GetHostname())
				}
				return lb.GetBlock().GetGenerationStamp() > gs0 && len(pipeline) > 1
			})
			victim := hostIndex(t, pipeline[1])
			c.KillDataNode(victim)
			if _, err := w.Write(more[half:]); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			wantContent(t, f, p, append(append([]byte{}, orig...), more...))
			verifyReplicas(t, c, f, p)
			c.RestartDataNode(victim)
		})
	}
}
