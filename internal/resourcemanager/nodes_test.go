package resourcemanager

import (
	"context"
	"strings"
	"testing"

	"smarth/internal/rpc/mrpb"
)

// TestListNodesReportsSlotsStateAndLost: ListNodes gives each live node
// its slots and the attempts running in them; a lost node leaves the
// default list and shows as LOST with a health report under all, until
// it heartbeats again.
func TestListNodesReportsSlotsStateAndLost(t *testing.T) {
	rm := newTestRM(t, 1)
	submit(t, rm, 3, 1)
	a := &fakeNode{t: t, rm: rm, id: "nodeA"}
	b := &fakeNode{t: t, rm: rm, id: "nodeB"}
	if got := kinds(a.heartbeat(2, 0)); got != "m0 m1" {
		t.Fatalf("nodeA launched %q, want two maps", got)
	}
	b.heartbeat(0, 0)
	list := func(all bool) map[string]*mrpb.NodeReport {
		t.Helper()
		resp, err := rm.ListNodes(context.Background(), &mrpb.ListNodesRequest{All: all})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*mrpb.NodeReport{}
		for _, n := range resp.GetNodes() {
			m[n.GetNodeId()] = n
		}
		return m
	}
	got := list(false)
	if len(got) != 2 {
		t.Fatalf("ListNodes = %v, want nodeA and nodeB", got)
	}
	na := got["nodeA"]
	if na.GetState() != NodeRunning || na.GetRunningMaps() != 2 || na.GetMapSlots() != 4 || na.GetRunningReduces() != 0 ||
		na.GetReduceSlots() != 1 || na.GetLastHeartbeatMs() == 0 || na.GetHostname() != "nodeA" {
		t.Errorf("nodeA = %v, want RUNNING with 2 of 4 map slots and 0 of 1 reduce slots, a heartbeat time", na)
	}
	if nb := got["nodeB"]; nb.GetRunningMaps() != 0 || nb.GetState() != NodeRunning {
		t.Errorf("nodeB = %v, want RUNNING and idle", nb)
	}

	rm.mu.Lock()
	rm.loseNode("nodeB") // what the monitor does after node_timeout
	rm.mu.Unlock()
	if got := list(false); len(got) != 1 || got["nodeA"] == nil {
		t.Errorf("after nodeB is lost, ListNodes = %v, want nodeA only", got)
	}
	nb := list(true)["nodeB"]
	if nb.GetState() != NodeLost || !strings.Contains(nb.GetHealthReport(), "no heartbeat for") {
		t.Errorf("ListNodes(all) nodeB = %v, want LOST with a health report", nb)
	}

	b.heartbeat(0, 0)
	resp, _ := rm.ListNodes(context.Background(), &mrpb.ListNodesRequest{All: true})
	if len(resp.GetNodes()) != 2 {
		t.Errorf("after nodeB heartbeats again ListNodes(all) = %v, want nodeA and nodeB once each", resp.GetNodes())
	}
	if nb := list(true)["nodeB"]; nb.GetState() != NodeRunning {
		t.Errorf("after nodeB heartbeats again it is %v, want RUNNING and no longer LOST", nb)
	}
}

// TestLostNodesAreBounded: node managers choose their ids, so churned ids
// cannot grow the lost list past maxLost.
func TestLostNodesAreBounded(t *testing.T) {
	rm := newTestRM(t, 1)
	for i := range maxLost + 10 {
		n := &fakeNode{t: t, rm: rm, id: "churn" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}
		n.heartbeat(0, 0)
		rm.mu.Lock()
		rm.loseNode(n.id)
		rm.mu.Unlock()
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if len(rm.lost) != maxLost {
		t.Errorf("%d lost nodes remembered, want at most %d", len(rm.lost), maxLost)
	}
}
