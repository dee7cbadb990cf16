package client_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// TestProcsDatanodeKilledWhileServingRead: a reader takes the first 64 KiB
// of a 16 MiB block and pauses, so the datanode serving it is mid-stream
// (the rest of the block is far more than the sockets between them hold);
// the reader names that datanode, which is then SIGKILLed. Reading on must
// fail over to another replica and return exactly the file's bytes, and
// the block must then have been served by another datanode: were the
// victim not serving any more (the block all buffered), the kill would
// have hit nothing and the test says so.
func TestProcsDatanodeKilledWhileServingRead(t *testing.T) {
	const block = 16 << 20
	c := testcluster.StartProcs(t, testcluster.Options{DataNodes: 3, BlockSize: block})
	f := c.Client(t)
	ctx := context.Background()
	want := data(block+4321, 31)
	mustPut(t, f, "/r", want, client.CreateOptions{Replication: 3})
	c.WaitReplication(t, "/r", 3)
	host := map[string]string{} // datanode id -> hostname
	dns, err := f.Datanodes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dns {
		host[d.GetId()] = d.GetHostname()
	}
	locs, err := f.BlockLocations(ctx, "/r", 0, 1)
	if err != nil || len(locs) != 1 {
		t.Fatalf("locations of /r's first block: %v %v", locs, err)
	}
	id := locs[0].BlockID

	rd, err := f.Open(ctx, "/r")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got := make([]byte, 64<<10)
	if _, err := io.ReadFull(rd, got); err != nil {
		t.Fatal(err)
	}
	victim := host[rd.ServedBy(id)]
	if victim == "" {
		t.Fatalf("the reader names no datanode serving block %d (served by %q)", id, rd.ServedBy(id))
	}
	t.Logf("block %d: %d bytes read from %s (pid %d); SIGKILL it mid-stream", id, len(got), victim, c.DataNodePID(hostIndex(t, victim)))
	c.KillDataNode(hostIndex(t, victim))

	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("reading on after %s was killed: %v", victim, err)
	}
	got = append(got, rest...)
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes after the kill, want the file's %d (equal: %v)", len(got), len(want), len(got) == len(want))
	}
	after := host[rd.ServedBy(id)]
	if after == "" || after == victim {
		t.Fatalf("block %d was last served by %q: the reader never failed over from %s, so the kill did not hit a read in progress", id, after, victim)
	}
	t.Logf("the reader failed over from %s to %s and read all %d bytes right", victim, after, len(got))
}

// TestProcsNameNodeKilledDuringWrite: the namenode is SIGKILLed while a
// writer is in the middle of its second block (no namenode call in
// flight: the block's pipeline needs none) and stays down for a moment.
// The writer's next block needs the namenode: its call is refused (the
// request never leaves), retried until the namenode is back and out of
// start-up safe mode, and the file must close with exactly the bytes
// written, fully replicated, each replica right on its own datanode.
func TestProcsNameNodeKilledDuringWrite(t *testing.T) {
	c := testcluster.StartProcs(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	var plog pipelineLog
	f := c.Client(t, testcluster.WithConfig(func(cfg *client.Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&plog.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	// A client without connect retries shares f's connection: its
	// failure shows when that connection is known dead.
	probe := c.Client(t, testcluster.WithConfig(func(cfg *client.Config) { cfg.ConnectRetry = -1 }))
	ctx := context.Background()
	want := data(3<<20+555, 41)
	w, err := f.Create(ctx, "/n", client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	half := 1<<20 + 1<<19
	if _, err := w.Write(want[:half]); err != nil {
		t.Fatal(err)
	}
	// The namenode has allocated the second block and the writer has its
	// reply (it opened the block's pipeline): no call of the writer is in
	// flight, so the kill cannot make one ambiguous.
	c.WaitFor(t, "the writer to open the pipeline of /n's second block, as the namenode lists it", func() bool {
		locs, err := f.BlockLocations(ctx, "/n", 0, 1<<40)
		block, _ := plog.last()
		return err == nil && len(locs) == 2 && block == locs[1].BlockID
	})
	c.KillNameNode()
	c.WaitFor(t, "a call on the writer's namenode connection to be refused", func() bool {
		_, err := probe.Stat(ctx, "/")
		return err != nil && strings.Contains(err.Error(), "cannot reach the namenode")
	})
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(want[half:])
		if err == nil {
			err = w.Close()
		}
		done <- err
	}()
	time.Sleep(1500 * time.Millisecond) // the namenode stays down this long: the outage under test
	select {
	case err := <-done:
		t.Fatalf("the write ended while the namenode was down (%v): it needs the namenode for its third block", err)
	default:
	}
	c.RestartNameNode()
	if err := <-done; err != nil {
		t.Fatalf("write across a namenode SIGKILL and restart: %v", err)
	}
	st, err := f.Stat(ctx, "/n")
	if err != nil || st.UnderConstruction || st.Size != int64(len(want)) {
		t.Fatalf("/n after the write: %+v %v; want closed at %d bytes", st, err, len(want))
	}
	if got := mustRead(t, f, "/n"); !bytes.Equal(got, want) {
		t.Fatalf("/n reads %d bytes, not the %d written", len(got), len(want))
	}
	c.WaitReplication(t, "/n", 3)
	if err := eachReplica(ctx, t, c, "/n", want); err != nil {
		t.Fatal(err)
	}
}
