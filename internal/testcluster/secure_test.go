package testcluster

import (
	"bytes"
	"context"
	"io"
	"testing"

	"smarth/internal/client"
)

// A secure cluster: datanodes register with the datanode key, a client
// with a credential writes and reads through block tokens, and a client
// without one is refused by the namenode.
func TestSecureCluster(t *testing.T) {
	c := Start(t, Options{DataNodes: 3, Secure: true})
	fs := c.Client(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("secure"), 100_000)
	w, err := fs.Create(ctx, "/s", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(ctx, "/s")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, err %v", len(got), err)
	}
	anon, err := client.New(client.Config{NameNode: c.NameNodeAddr(), Credential: "nobody:00"})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.Stat(ctx, "/s"); err == nil {
		t.Fatal("a client with a made-up credential was served")
	}
}
