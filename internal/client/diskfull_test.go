package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
	"smarth/internal/testfs"
)

// A cluster whose datanodes sit on 6 MiB file systems, written one 1 MiB
// file after another faster than heartbeats come: the namenode places
// blocks only where the space it knows of (last heartbeat, less what it
// placed and was told of since) holds a block, each datanode keeps its
// du_reserved free, and when the cluster is full the write fails with the
// namenode's clear refusal naming the file, never with a datanode's
// ENOSPC. Every acknowledged file reads back whole, and once files are
// deleted and the space is reported free, writes go through again.
func TestFullClusterRefusesWritesClearly(t *testing.T) {
	const dns = 3
	dirs := make([]string, dns)
	for i := range dirs {
		dirs[i] = testfs.Tmpfs(t, "6m")
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: dns, BlockSize: 1 << 20, Replication: 1,
		DataNodeFor: func(i int) map[string]any { return map[string]any{"data_dir": dirs[i], "du_reserved": "1MiB"} }})
	f := c.Client(t)
	ctx := context.Background()

	put := func(p string, b []byte) error {
		w, err := f.Create(ctx, p, client.CreateOptions{Replication: 1})
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	}
	// freshReports waits until every datanode has heartbeated since t:
	// the namenode's view of their space is then what their disks say.
	freshReports := func(since time.Time) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			rep, err := f.Namenode().GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
			if err != nil {
				t.Fatal(err)
			}
			fresh := len(rep.GetDatanodes()) == dns
			for _, d := range rep.GetDatanodes() {
				fresh = fresh && d.GetLastHeartbeatUnixMs() > since.UnixMilli()
			}
			if fresh {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no heartbeat from every datanode within 30 s of %v", since)
			}
			time.Sleep(50 * time.Millisecond) // poll the namenode
		}
	}
	var written []string
	var full error
	retried := false
	for i := range 40 {
		p := fmt.Sprintf("/full/f%02d", i)
		err := put(p, data(1<<20, uint64(i)))
		if err != nil && strings.Contains(err.Error(), "free space") && !retried {
			retried = true // once: a placement that refused at every stale view would still stop short
			// Refused on what the namenode knew: with every datanode's
			// next heartbeat in, a write that fits must go through (on
			// a loaded machine the first refusal can come from space
			// counted both as scheduled and as used, one heartbeat).
			freshReports(time.Now())
			p += "-again"
			err = put(p, data(1<<20, uint64(i)))
		}
		if err != nil {
			full = fmt.Errorf("%s: %w", p, err)
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "free space") {
				t.Fatalf("write %d into a filling cluster failed with %v; want the namenode's refusal naming %s and free space", i, err, p)
			}
			break
		}
		written = append(written, p)
	}
	if full == nil {
		t.Fatalf("40 MiB written to three 6 MiB file systems")
	}
	t.Logf("%d files written, then: %v", len(written), full)
	for i, d := range dirs {
		free := testfs.Free(t, d)
		t.Logf("dn%d: %d bytes free", i+1, free)
		if free < 1<<20 {
			t.Errorf("dn%d: %d bytes free, below its 1 MiB du_reserved", i+1, free)
		}
	}
	// Each 6 MiB volume keeps 1 MiB and fits four 1 MiB blocks with
	// their checksums; a placement that gave up at the first stale
	// heartbeat would have stopped short.
	if len(written) < 12 {
		t.Fatalf("only %d 1 MiB files fitted on three 6 MiB datanodes", len(written))
	}
	for i, p := range written {
		r, err := f.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data(1<<20, uint64(i))) {
			t.Fatalf("acknowledged %s: read %d bytes, err %v; want its 1 MiB back", p, len(got), err)
		}
	}

	for _, p := range written[:6] {
		if err := f.Delete(ctx, p, false); err != nil {
			t.Fatal(err)
		}
	}
	// Full, each datanode has 991,232 bytes above its reserve on this
	// tmpfs; each deleted block with its checksums gives back 1,056,768.
	c.WaitFor(t, "datanodes to report all six deleted files' space free", func() bool {
		nodes, err := f.Datanodes(ctx, dfspb.DatanodeState_LIVE)
		if err != nil {
			return false
		}
		var free int64
		for _, n := range nodes {
			free += n.GetRemaining()
		}
		return free >= 9_000_000
	})
	if err := put("/full/again", data(1<<20, 99)); err != nil {
		nodes, _ := f.Datanodes(ctx, dfspb.DatanodeState_LIVE)
		for _, n := range nodes {
			t.Logf("%s: remaining %d", n.GetHostname(), n.GetRemaining())
		}
		t.Fatalf("write after space was freed: %v", err)
	}
}
