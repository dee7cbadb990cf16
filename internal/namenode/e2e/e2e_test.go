// Package e2e_test checks the namenode end to end, with the real datanodes
// and client of internal/testcluster. It lives apart from the namenode's
// own tests so that those never wait on the rest of the tree compiling.
package e2e_test

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// TestE2EClientDiesWhileWriting: a writer stops in the middle of its second
// block without closing; after the hard limit the namenode recovers the
// lease through a datanode, and the file closes at a length that every
// replica agrees on, with the bytes written up to it.
func TestE2EClientDiesWhileWriting(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, LeaseSoftLimit: 500 * time.Millisecond, LeaseHardLimit: 1500 * time.Millisecond})
	ctx := context.Background()
	data := make([]byte, 1<<20+300<<10)
	rand.New(rand.NewSource(1)).Read(data)

	dying := c.Client(t)
	w, err := dying.Create(ctx, "/dying", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	dying.Close() // no Close of the writer, no more lease renewals

	reader := c.Client(t)
	c.WaitFor(t, "the namenode to recover and close /dying", func() bool {
		st, err := reader.Stat(ctx, "/dying")
		return err == nil && !st.UnderConstruction
	})
	st, _ := reader.Stat(ctx, "/dying")
	if st.Size < 1<<20 || st.Size > int64(len(data)) {
		t.Fatalf("recovered length %d; want between the first block (%d) and what was written (%d)", st.Size, 1<<20, len(data))
	}
	r, err := reader.Open(ctx, "/dying")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[:st.Size]) {
		t.Fatalf("recovered file (%d bytes) is not the prefix of what was written", len(got))
	}
	t.Logf("recovered /dying at %d of %d written bytes", st.Size, len(data))
}

// TestE2ERestartNameNode: files written through the real pipeline survive a
// namenode restart; safe mode ends once the datanodes report, and the
// files read back.
func TestE2ERestartNameNode(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	ctx := context.Background()
	fs := c.Client(t)
	data := make([]byte, 2<<20+12345)
	rand.New(rand.NewSource(2)).Read(data)
	w, err := fs.Create(ctx, "/keep", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c.RestartNameNode()
	fs2 := c.Client(t)
	var got []byte
	c.WaitFor(t, "/keep readable after the namenode restart", func() bool {
		r, err := fs2.Open(ctx, "/keep")
		if err != nil {
			return false
		}
		got, err = io.ReadAll(r)
		return err == nil
	})
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes after restart, want the %d written", len(got), len(data))
	}
}
