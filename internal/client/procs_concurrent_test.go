package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// opened lists every pipeline the writer opened, in order: block id and
// hosts, first datanode first.
func (l *pipelineLog) opened() (blocks []uint64, pipes [][]string) {
	for _, line := range strings.Split(l.buf.String(), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Block uint64 `json:"block"`
			Nodes string `json:"nodes"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "pipeline open" {
			blocks, pipes = append(blocks, rec.Block), append(pipes, dnName.FindAllString(rec.Nodes, -1))
		}
	}
	return blocks, pipes
}

// TestProcsConcurrentFirstHops: datanode processes, a multipipeline-
// concurrent write, and the first datanode of block 1's pipeline stopped
// (SIGSTOP) half-way through block 1, so it can neither store the rest of
// the block nor send FNFA. The writer must open block 2's pipeline on a
// first datanode outside block 1's pipeline and that datanode must have
// block 2's bytes on disk while block 1's first hop is stalled: two blocks
// in flight at once to different first datanodes. (multipipeline-paper
// and classic wait for block 1's FNFA or acks and fail the wait.) Once the
// node runs again the file must read back byte-exact, and every replica,
// read from its own datanode, must hold the right bytes.
func TestProcsConcurrentFirstHops(t *testing.T) {
	const block = 1 << 20
	c := testcluster.StartProcs(t, testcluster.Options{DataNodes: 6, BlockSize: block})
	var plog pipelineLog
	f := c.Client(t, testcluster.WithWriteMode("multipipeline-concurrent"), testcluster.WithConfig(func(cfg *client.Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&plog.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	ctx := context.Background()
	// The host has measured every datanode alike (as on one loopback): the
	// namenode is told so in a client heartbeat from this host, and the
	// writer starts its speed book from the host's records. Block 1's
	// first hop is then no slower than any other, and the mode may start
	// block 2 beside it. (Measured here under load, loopback records
	// differ by more than the mode's fast/slow threshold from block to
	// block, which would make the test depend on the machine's noise.)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dns, err := f.Datanodes(ctx, 0)
	if err != nil || len(dns) != 6 {
		t.Fatalf("datanodes: %d, %v", len(dns), err)
	}
	var samples []*dfspb.SpeedSample
	for _, d := range dns {
		samples = append(samples, &dfspb.SpeedSample{DatanodeId: d.GetId(), Bytes: 64 << 20, Nanos: int64(time.Second / 4), EndUnixMs: time.Now().UnixMilli()})
	}
	if _, err := f.Namenode().ClientHeartbeat(ctx, &dfspb.ClientHeartbeatRequest{ClientName: f.ClientName(), ClientHost: host, Samples: samples}); err != nil {
		t.Fatal(err)
	}
	_, before := plog.opened()
	mine := func() ([]uint64, [][]string) { // this write's pipelines
		b, p := plog.opened()
		return b[len(before):], p[len(before):]
	}
	want := data(3*block+4321, 77)
	w, err := f.Create(ctx, "/c", client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(want[:block/2]); err != nil {
		t.Fatal(err)
	}
	var first []string
	c.WaitFor(t, "block 1's pipeline open", func() bool {
		_, pipes := mine()
		if len(pipes) == 0 || len(pipes[0]) != 3 {
			return false
		}
		first = pipes[0]
		return true
	})
	stalled := hostIndex(t, first[0])
	pid := c.DataNodePID(stalled)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %s (pid %d): %v", first[0], pid, err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT %s (pid %d): %v", first[0], pid, err)
			}
		}
	}
	t.Cleanup(resume)
	if _, err := w.Write(want[block/2 : block+block/2]); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, "block 2's pipeline open on a first datanode outside block 1's pipeline, with block 2's bytes on its disk, while "+first[0]+" is stopped", func() bool {
		blocks, pipes := mine()
		if len(pipes) < 2 || len(pipes[1]) == 0 {
			return false
		}
		if slices.Contains(first, pipes[1][0]) {
			t.Fatalf("block 2's pipeline %v starts on a node of block 1's open pipeline %v", pipes[1], first)
		}
		return rbwSize(c, hostIndex(t, pipes[1][0]), blocks[1]) > 0
	})
	resume()
	if _, err := w.Write(want[block+block/2:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, f, "/c"); !bytes.Equal(got, want) {
		t.Fatalf("/c reads %d bytes, not the %d written", len(got), len(want))
	}
	c.WaitReplication(t, "/c", 3)
	if err := eachReplica(ctx, t, c, "/c", want); err != nil {
		t.Fatal(err)
	}
	blocks, pipes := mine()
	t.Logf("pipelines: %v %v", blocks, pipes)
}
