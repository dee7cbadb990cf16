package main

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

// Issue 26's balancer: three datanodes hold 120 MiB of single-replica
// blocks on 64 MiB disks; a fourth joins empty. `smarth balancer
// --threshold 10` moves replicas until every datanode's use is within 10
// points of the cluster's, each block still has exactly one replica, and
// every file reads back. Before it runs the same plan says unbalanced
// (the control), and a non-superuser is refused.
func TestBalancerEvensAnEmptyNewDatanode(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 120 MiB through a 4-datanode cluster; skipped with -short")
	}
	dirs := make([]string, 4)
	for i := range dirs {
		dirs[i] = testfs.Tmpfs(t, "64m")
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: 1 << 20, Replication: 1,
		DataNodeFor: func(i int) map[string]any { return map[string]any{"data_dir": dirs[i], "du_reserved": "1MiB"} }})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f := c.Client(t)
	nn := f.Namenode()
	report := func() []*dfspb.DatanodeInfo {
		rep, err := nn.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return rep.GetDatanodes()
	}
	stateOf := func(host string) dfspb.DatanodeState {
		for _, d := range report() {
			if d.GetHostname() == host {
				return d.GetState()
			}
		}
		return dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waited 60 s for %s", what)
			}
			time.Sleep(100 * time.Millisecond) // poll the namenode
		}
	}
	// dn4 is away while the data is written, so it holds none of it.
	c.StopDataNode(3)
	waitUntil("dn4 to be dead", func() bool { return stateOf("dn4") == dfspb.DatanodeState_DEAD })
	files := map[string][]byte{}
	for i := range 60 {
		p := fmt.Sprintf("/b/f%02d", i)
		b := bytes.Repeat([]byte(fmt.Sprintf("%s-", p)), (2<<20)/7)
		w, err := f.Create(ctx, p, client.CreateOptions{Replication: 1})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files[p] = b
	}
	c.RestartDataNode(3)
	waitUntil("dn4 to be live and to report its use", func() bool {
		for _, d := range report() {
			if d.GetHostname() == "dn4" {
				return d.GetState() == dfspb.DatanodeState_LIVE && d.GetCapacity() > 0
			}
		}
		return false
	})
	// The control: unbalanced before.
	if _, src, tgt := balancePlan(report(), 10); len(src) == 0 || len(tgt) == 0 {
		t.Fatalf("the cluster counts as balanced before the balancer ran: %v", report())
	}

	su := f.User()
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, "mallory"))
	if code, _, msg := runSmarth("balancer", "--namenode", c.NameNodeAddr(), "--user", "mallory"); code == 0 {
		t.Fatalf("mallory ran the balancer: %s", msg)
	}
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, su))
	code, out, msg := runSmarth("balancer", "--namenode", c.NameNodeAddr(), "--user", su, "--threshold", "10")
	t.Logf("balancer (exit %d):\n%s%s", code, out, msg)
	if code != 0 || !strings.Contains(out, "The cluster is balanced") {
		t.Fatalf("balancer exit %d: %s %s", code, out, msg)
	}
	waitUntil("the datanodes' reported use to be within 10 points", func() bool {
		_, src, tgt := balancePlan(report(), 10)
		return len(src) == 0 || len(tgt) == 0
	})
	// The moves were the balancer's: their sources paced them through
	// their balance_bandwidth throttles.
	var paced int64
	for i := range 4 {
		paced += c.DataNode(i).BalanceBytes()
	}
	if paced == 0 {
		t.Errorf("no datanode sent a byte through its balance_bandwidth throttle: moves are not marked as the balancer's")
	}
	avg, _, _ := balancePlan(report(), 10)
	for _, d := range report() {
		t.Logf("%s: %.1f%% used (cluster %.1f%%)", d.GetHostname(), 100*float64(d.GetDfsUsed())/float64(d.GetCapacity()), avg)
	}
	for p, want := range files {
		locs, err := f.BlockLocations(ctx, p, 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			if len(l.Hosts) != 1 {
				t.Errorf("%s block %d has replicas on %v after balancing, want exactly one", p, l.BlockID, l.Hosts)
			}
		}
		r, err := f.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s reads back %d bytes (%v), want %d", p, len(got), err, len(want))
		}
	}
}
