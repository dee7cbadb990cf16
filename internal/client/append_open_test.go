package client_test

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// TestSnapshotDuringAppend: a snapshot taken while an append continues
// the file's partial last block holds the bytes that block had before the
// append (HDFS records the file's length at snapshot time): read through
// .snapshot they are exactly the pre-append bytes while the append is
// open, after it finishes, and after a namenode restart.
func TestSnapshotDuringAppend(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(fdBlock+3000, 70) // a partial last block of 3000 bytes
	mustPut(t, f, "/sa/f", orig, client.CreateOptions{})
	if err := f.AllowSnapshot(ctx, "/sa"); err != nil {
		t.Fatal(err)
	}
	w, err := f.Append(ctx, "/sa/f", client.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	more := data(5000, 71)
	if _, err := w.Write(more[:2500]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateSnapshot(ctx, "/sa", "during"); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		st, err := f.Stat(ctx, "/sa/.snapshot/during/f")
		if err != nil || st.Size != int64(len(orig)) {
			t.Fatalf("%s: snapshot file stat %+v %v; want %d bytes", when, st, err, len(orig))
		}
		if got := mustRead(t, f, "/sa/.snapshot/during/f"); !bytes.Equal(got, orig) {
			t.Fatalf("%s: snapshot file reads %d bytes, want the %d it had before the append", when, len(got), len(orig))
		}
	}
	check("append open")
	if _, err := w.Write(more[2500:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, f, "/sa/f", append(append([]byte{}, orig...), more...))
	check("append closed")
	c.RestartNameNode()
	check("after a namenode restart")
}

// TestAppendRefusedChunkSizeLeavesFileClosed: a client whose checksum
// chunks do not tile the file's block size is refused before it takes the
// lease, so the file is not left open: another client appends at once
// (before, it waited for lease recovery).
func TestAppendRefusedChunkSizeLeavesFileClosed(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: fdBlock})
	ctx := ctxT(t)
	f := c.Client(t)
	orig := data(1000, 72)
	mustPut(t, f, "/chunk/f", orig, client.CreateOptions{})
	odd := c.Client(t, testcluster.WithConfig(func(cfg *client.Config) { cfg.BytesPerChecksum, cfg.PacketSize = 768, 64*768 }))
	_, err := odd.Append(ctx, "/chunk/f", client.AppendOptions{})
	if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "/chunk/f") || !strings.Contains(err.Error(), "768-byte checksum chunks") {
		t.Fatalf("append with 768-byte chunks to a file of %d-byte blocks: %v; want an invalid-argument error naming the path", fdBlock, err)
	}
	if st, err := f.Stat(ctx, "/chunk/f"); err != nil || st.UnderConstruction {
		t.Fatalf("after the refused append: %+v %v; want the file closed", st, err)
	}
	mustAppend(t, f, "/chunk/f", []byte("!"), client.AppendOptions{})
	wantContent(t, f, "/chunk/f", append(orig, '!'))
}
