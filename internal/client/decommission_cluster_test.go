package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// Issue 26's decommissioning: on 4 datanodes with replication 3, the
// datanode holding the most blocks is listed in hosts_exclude_file and
// refreshNodes is called; it ends DECOMMISSIONED with every block fully
// replicated on the other three, every file reads back, and a file
// written meanwhile has no replica on it. Only a superuser may refresh.
// (Control: counting the leaving node's replicas as in service makes it
// wait forever; the test then fails at its deadline.)
func TestDecommissionMovesEveryBlockOff(t *testing.T) {
	exclude := filepath.Join(t.TempDir(), "exclude")
	if err := os.WriteFile(exclude, []byte("# nothing excluded yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: 1 << 20, Replication: 3,
		NameNode: map[string]any{"hosts_exclude_file": exclude}})
	f := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	files := map[string][]byte{}
	for i := range 6 {
		p := fmt.Sprintf("/d/f%d", i)
		b := data(3<<20+1234, uint64(i))
		w, err := f.Create(ctx, p, client.CreateOptions{Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[p] = b
	}
	holds := map[string]int{}
	for p := range files {
		locs, err := f.BlockLocations(ctx, p, 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			for _, h := range l.Hosts {
				holds[h]++
			}
		}
	}
	victim := ""
	for h, n := range holds {
		if victim == "" || n > holds[victim] {
			victim = h
		}
	}
	t.Logf("block replicas per datanode: %v; decommissioning %s", holds, victim)

	nn := f.Namenode()
	if err := os.WriteFile(exclude, []byte(victim+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bob := c.Client(t, testcluster.WithUser("bob")).Namenode()
	if _, err := bob.RefreshNodes(ctx, &dfspb.RefreshNodesRequest{}); err == nil {
		t.Fatal("bob, no superuser, refreshed the nodes")
	}
	resp, err := nn.RefreshNodes(ctx, &dfspb.RefreshNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(resp.GetDecommissioning(), ",") != victim {
		t.Fatalf("refreshNodes began decommissioning %v, want [%s]", resp.GetDecommissioning(), victim)
	}
	// Written while it leaves: no replica may go to it.
	late := data(2<<20, 99)
	w, err := f.Create(ctx, "/d/late", client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(late)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files["/d/late"] = late

	state := func() dfspb.AdminState {
		rep, err := nn.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rep.GetDatanodes() {
			if d.GetHostname() == victim {
				return d.GetAdminState()
			}
		}
		t.Fatalf("%s missing from the datanode report", victim)
		return 0
	}
	deadline := time.Now().Add(90 * time.Second)
	for state() != dfspb.AdminState_DECOMMISSIONED {
		if time.Now().After(deadline) {
			t.Fatalf("%s still %v after 90 s", victim, state())
		}
		time.Sleep(100 * time.Millisecond) // poll; the monitor runs every replication_interval
	}
	for p, want := range files {
		locs, err := f.BlockLocations(ctx, p, 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			others := 0
			for _, h := range l.Hosts {
				if h != victim {
					others++
				}
			}
			if others < 3 {
				t.Errorf("%s block %d: %d replicas off %s (%v), want 3", p, l.BlockID, others, victim, l.Hosts)
			}
			if p == "/d/late" && strings.Contains(strings.Join(l.Hosts, ","), victim) {
				t.Errorf("a block written after decommissioning began was placed on %s: %v", victim, l.Hosts)
			}
			if len(l.Hosts) > 0 && l.Hosts[0] == victim {
				t.Errorf("%s block %d: the leaving node %s is offered first to readers", p, l.BlockID, victim)
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

	// Out of the file again: back in service.
	os.WriteFile(exclude, nil, 0o644)
	resp, err = nn.RefreshNodes(ctx, &dfspb.RefreshNodesRequest{})
	if err != nil || strings.Join(resp.GetRecommissioned(), ",") != victim || state() != dfspb.AdminState_NORMAL {
		t.Errorf("after removing %s from the file: %v %v, state %v", victim, resp, err, state())
	}
}
