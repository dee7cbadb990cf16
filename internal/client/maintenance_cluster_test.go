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

// Issue 26's maintenance state (HDFS's IN_MAINTENANCE): on 4 datanodes,
// the one holding the most replicas is listed in hosts_maintenance_file
// and refreshNodes is called. It is ENTERING_MAINTENANCE until every
// block of replication 1 it held has a replica elsewhere (the maintenance
// minimum), then IN_MAINTENANCE. Stopped (the real fault) and declared
// dead, its replicas are kept: over ten replication rounds no block of
// replication 3 gets a new copy and nothing is missing, where a dead
// datanode's blocks are otherwise copied at once. Taken out of the file
// while still down, it is back in service and its blocks are copied until
// each has its full replication on the other three; every file reads back.
// (Control: dropping the replicas of a dead node in maintenance makes the
// copies come during the window; the test then fails there.)
func TestMaintenanceKeepsReplicasWhileDown(t *testing.T) {
	maint := filepath.Join(t.TempDir(), "maintenance")
	if err := os.WriteFile(maint, []byte("# nobody in maintenance yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: 4, BlockSize: 1 << 20, Replication: 3,
		NameNode: map[string]any{"hosts_maintenance_file": maint}})
	f := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	files := map[string][]byte{}
	repl := map[string]int{}
	for i := range 6 {
		p := fmt.Sprintf("/m/f%d", i)
		r := 3
		if i >= 4 {
			r = 1
		}
		b := data(2<<20+777, uint64(100+i))
		w, err := f.Create(ctx, p, client.CreateOptions{Replication: r})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[p], repl[p] = b, r
	}
	hostsOf := func(p string) [][]string {
		t.Helper()
		locs, err := f.BlockLocations(ctx, p, 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, l := range locs {
			out = append(out, l.Hosts)
		}
		return out
	}
	holds, single := map[string]int{}, map[string]int{}
	for p := range files {
		for _, hs := range hostsOf(p) {
			for _, h := range hs {
				holds[h]++
				if repl[p] == 1 {
					single[h]++
				}
			}
		}
	}
	// The victim holds a block of replication 1, so the maintenance
	// minimum has something to copy.
	victim := ""
	for h, n := range holds {
		if single[h] > 0 && (victim == "" || n > holds[victim] || (n == holds[victim] && h < victim)) {
			victim = h
		}
	}
	t.Logf("block replicas per datanode: %v; maintenance for %s", holds, victim)

	nn := f.Namenode()
	if err := os.WriteFile(maint, []byte(victim+" 2099-01-01T00:00:00Z # a reboot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := nn.RefreshNodes(ctx, &dfspb.RefreshNodesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(resp.GetEnteringMaintenance(), ",") != victim {
		t.Fatalf("refreshNodes put %v into maintenance, want [%s]", resp.GetEnteringMaintenance(), victim)
	}
	report := func() map[string]*dfspb.DatanodeInfo {
		rep, err := nn.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*dfspb.DatanodeInfo{}
		for _, d := range rep.GetDatanodes() {
			m[d.GetHostname()] = d
		}
		return m
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("waited 90 s for %s", what)
			}
			time.Sleep(100 * time.Millisecond) // poll; the monitor runs every replication_interval
		}
	}
	waitFor(victim+" to be IN_MAINTENANCE", func() bool { return report()[victim].GetAdminState() == dfspb.AdminState_IN_MAINTENANCE })
	// The maintenance minimum: every block has a replica off the victim.
	for p := range files {
		for i, hs := range hostsOf(p) {
			off := 0
			for _, h := range hs {
				if h != victim {
					off++
				}
			}
			if off == 0 {
				t.Fatalf("%s block %d is only on %s, which is IN_MAINTENANCE", p, i, victim)
			}
		}
	}

	// The fault: stop it, and let it be declared dead.
	idx := -1
	for i := range 4 {
		if fmt.Sprintf("dn%d", i+1) == victim {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no datanode index for %s", victim)
	}
	c.StopDataNode(idx)
	waitFor(victim+" to be declared dead", func() bool { return report()[victim].GetState() == dfspb.DatanodeState_DEAD })
	// Ten replication rounds: no copy of a block of replication 3 that
	// it held, none missing, and it stays IN_MAINTENANCE.
	liveCopies := func(p string) []int {
		var n []int
		for _, hs := range hostsOf(p) {
			k := 0
			for _, h := range hs {
				if h != victim {
					k++
				}
			}
			n = append(n, k)
		}
		return n
	}
	before := map[string]string{}
	for p := range files {
		before[p] = fmt.Sprint(liveCopies(p))
	}
	for end := time.Now().Add(10 * 300 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		for p := range files {
			if now := fmt.Sprint(liveCopies(p)); now != before[p] {
				t.Fatalf("%s: live replicas off %s went %s -> %s while it was in maintenance", p, victim, before[p], now)
			}
		}
	}
	if st := report()[victim].GetAdminState(); st != dfspb.AdminState_IN_MAINTENANCE {
		t.Fatalf("%s is %v while down in maintenance", victim, st)
	}
	for p, want := range files {
		r, err := f.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s read back while %s is down in maintenance: %d bytes, %v", p, victim, len(got), err)
		}
	}

	// Out of the file while still down: back in service, and its blocks
	// get their full replication on the other three.
	if err := os.WriteFile(maint, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nn.RefreshNodes(ctx, &dfspb.RefreshNodesRequest{}); err != nil {
		t.Fatal(err)
	}
	waitFor("every block at full replication without "+victim, func() bool {
		for p := range files {
			for _, k := range liveCopies(p) {
				if k < repl[p] {
					return false
				}
			}
		}
		return true
	})
	if st := report()[victim].GetAdminState(); st != dfspb.AdminState_NORMAL {
		t.Fatalf("%s is %v after leaving the maintenance file", victim, st)
	}
}
