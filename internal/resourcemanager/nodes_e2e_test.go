package resourcemanager_test

import (
	"context"
	"testing"

	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

// TestJobNodesOverRPC: the job client's Nodes (behind `smarth job nodes`)
// goes through the resource manager's gRPC and its authorization rule,
// lists every registered node manager RUNNING with its slots, and a
// node manager that stops heartbeating turns LOST after node_timeout.
func TestJobNodesOverRPC(t *testing.T) {
	c := startCluster(t, "fifo")
	ctx := context.Background()
	nodes, err := c.jc.Nodes(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 {
		t.Fatalf("Nodes = %v, want the 3 node managers", nodes)
	}
	for _, n := range nodes {
		if n.GetState() != resourcemanager.NodeRunning || n.GetMapSlots() == 0 || n.GetHttpAddr() == "" {
			t.Errorf("node %v: want RUNNING with map slots and a console address", n)
		}
	}
	lostID := nodes[0].GetNodeId()
	byID := func(all bool) map[string]*mrpb.NodeReport {
		ns, err := c.jc.Nodes(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*mrpb.NodeReport{}
		for _, n := range ns {
			m[n.GetNodeId()] = n
		}
		return m
	}
	for i := range 3 {
		if nm := c.NodeManager(i); nm != nil && nm.ID() == lostID {
			c.StopNodeManager(i)
		}
	}
	c.WaitFor(t, "node "+lostID+" to be LOST", func() bool { return byID(true)[lostID].GetState() == resourcemanager.NodeLost })
	if running := byID(false); len(running) != 2 || running[lostID] != nil {
		t.Errorf("running nodes after %s stopped: %v, want the other two", lostID, running)
	}
}
