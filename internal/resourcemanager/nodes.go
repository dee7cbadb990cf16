package resourcemanager

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"time"

	"smarth/internal/rpc/mrpb"
)

// Node states, as YARN's NodeState names them.
const (
	NodeRunning = "RUNNING"
	NodeLost    = "LOST"
)

// maxLost bounds the lost nodes remembered: node ids are chosen by node
// managers, so churned ids must not grow the map without end.
const maxLost = 1024

// ListNodes reports the node managers for `smarth job nodes` (YARN's
// getClusterNodes, `yarn node -list`): the live ones, and with all the
// lost ones too. Who may call is authz.go's (any authenticated user, as
// in YARN: a node list names hosts and slots, not anyone's jobs).
func (rm *ResourceManager) ListNodes(ctx context.Context, req *mrpb.ListNodesRequest) (*mrpb.ListNodesResponse, error) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return &mrpb.ListNodesResponse{Nodes: rm.nodeReports(req.GetAll())}, nil
}

// nodeReports lists the live nodes with the attempts running on each,
// and with all the lost ones, by node id. rm.mu must be held.
func (rm *ResourceManager) nodeReports(all bool) []*mrpb.NodeReport {
	used := rm.runningByNode()
	out := make([]*mrpb.NodeReport, 0, len(rm.nodes))
	for _, n := range rm.nodes {
		u := used[n.id]
		out = append(out, &mrpb.NodeReport{NodeId: n.id, State: cmp.Or(n.admin, NodeRunning), Hostname: n.host, Rack: n.rack, HttpAddr: n.httpAddr,
			MapSlots: int32(n.mapSlots), ReduceSlots: int32(n.reduceSlots), RunningMaps: int32(u[0]), RunningReduces: int32(u[1]),
			LastHeartbeatMs: n.lastSeen.UnixMilli(), HealthReport: rm.healthOf(n, u)})
	}
	if all {
		for _, r := range rm.lost {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NodeId < out[j].NodeId })
	return out
}

// runningByNode counts the running map and reduce attempts per node.
// rm.mu must be held.
func (rm *ResourceManager) runningByNode() map[string][2]int {
	used := map[string][2]int{}
	for _, j := range rm.order {
		for _, ts := range [][]*task{j.maps, j.reduces} {
			for _, t := range ts {
				for _, a := range t.running {
					u := used[a.node]
					if t.isMap {
						u[0]++
					} else {
						u[1]++
					}
					used[a.node] = u
				}
			}
		}
	}
	return used
}

// rememberLost keeps a node being lost as a LOST report, its slots
// empty (its attempts are killed), dropping the longest-lost one when
// full. rm.mu must be held.
func (rm *ResourceManager) rememberLost(id string) {
	n := rm.nodes[id]
	if n == nil {
		return
	}
	if len(rm.lost) >= maxLost {
		var oldest string
		for k, r := range rm.lost {
			if oldest == "" || r.GetLastHeartbeatMs() < rm.lost[oldest].GetLastHeartbeatMs() {
				oldest = k
			}
		}
		delete(rm.lost, oldest)
	}
	rm.lost[id] = &mrpb.NodeReport{NodeId: id, State: NodeLost, Hostname: n.host, Rack: n.rack, HttpAddr: n.httpAddr,
		MapSlots: int32(n.mapSlots), ReduceSlots: int32(n.reduceSlots), LastHeartbeatMs: n.lastSeen.UnixMilli(),
		HealthReport: fmt.Sprintf("no heartbeat for %v (node_timeout)", time.Since(n.lastSeen).Round(time.Second))}
}
