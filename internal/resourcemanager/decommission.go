package resourcemanager

import (
	"context"
	"fmt"
	"os/user"
	"slices"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/hostsfile"
	"smarth/internal/rpc/mrpb"
)

// Node-manager decommissioning, as YARN's graceful decommission: a node
// manager named in hosts_exclude_file (yarn.resourcemanager.nodes.
// exclude-path), read at start and on `smarth job refreshNodes` (`yarn
// rmadmin -refreshNodes`), is DECOMMISSIONING: it is offered no new
// containers, and what runs on it runs to its end. It is DECOMMISSIONED
// once nothing runs on it and no unfinished job still needs a map output
// it holds (its reduces fetch from it), so draining loses no work. A
// DECOMMISSIONED node manager may keep heartbeating; it gets nothing to
// run. Taken out of the file and refreshed, it is RUNNING again.

// Node admin states, as YARN's NodeState names them.
const (
	NodeDecommissioning = "DECOMMISSIONING"
	NodeDecommissioned  = "DECOMMISSIONED"
)

// excludedNode reports whether the exclude set names n (its hostname or
// its node id). rm.mu must be held.
func (rm *ResourceManager) excludedNode(n *node) bool {
	return rm.excluded.Has(n.host, n.id)
}

// applyExcludes moves every node to the admin state the exclude set asks
// for and returns the node ids that changed. rm.mu must be held.
func (rm *ResourceManager) applyExcludes() (started, back []string) {
	for id, n := range rm.nodes {
		switch ex := rm.excludedNode(n); {
		case ex && n.admin == "":
			n.admin = NodeDecommissioning
			started = append(started, id)
			rm.log.Info("node manager decommissioning: no new containers, running ones finish", "node", id, "host", n.host)
		case !ex && n.admin != "":
			n.admin = ""
			back = append(back, id)
			rm.log.Info("node manager back in service", "node", id, "host", n.host)
		}
	}
	sort.Strings(started)
	sort.Strings(back)
	rm.decommissionTick()
	return started, back
}

// decommissionTick marks DECOMMISSIONED each decommissioning node that
// has drained. rm.mu must be held.
func (rm *ResourceManager) decommissionTick() {
	var draining []*node
	for _, n := range rm.nodes {
		if n.admin == NodeDecommissioning {
			draining = append(draining, n)
		}
	}
	if len(draining) == 0 {
		return
	}
	running := rm.runningByNode()
	for _, n := range draining {
		u := running[n.id]
		if u[0]+u[1] > 0 || rm.holdsNeededOutput(n.id) {
			continue
		}
		n.admin = NodeDecommissioned
		rm.log.Info("node manager decommissioned: nothing runs on it and no job needs its map output", "node", n.id, "host", n.host)
	}
}

// holdsNeededOutput: an unfinished job with reduces still to finish has
// a map output on node id. rm.mu must be held.
func (rm *ResourceManager) holdsNeededOutput(id string) bool {
	for _, j := range rm.order {
		if j.terminal() || len(j.reduces) == 0 || j.reducesDone == len(j.reduces) {
			continue
		}
		if slices.ContainsFunc(j.maps, func(t *task) bool { return t.state == taskDone && t.done.node == id }) {
			return true
		}
	}
	return false
}

// healthOf says why a node in an admin state is not RUNNING.
func (rm *ResourceManager) healthOf(n *node, running [2]int) string {
	switch n.admin {
	case NodeDecommissioning:
		return fmt.Sprintf("decommissioning (hosts_exclude_file): %d running containers to finish", running[0]+running[1])
	case NodeDecommissioned:
		return "decommissioned (hosts_exclude_file)"
	}
	return ""
}

// RefreshNodes re-reads hosts_exclude_file (`yarn rmadmin
// -refreshNodes`). Only an admin (admin_users, admin_group) or the OS
// user running the resource manager may, as only YARN's admin ACL may.
func (rm *ResourceManager) RefreshNodes(ctx context.Context, _ *mrpb.RefreshNodesRequest) (*mrpb.RefreshNodesResponse, error) {
	caller, err := rm.caller(ctx)
	if err != nil {
		return nil, err
	}
	if !rm.isAdmin(caller) && caller != processUser() {
		return nil, status.Errorf(codes.PermissionDenied, "refreshNodes: user %s is not a resource manager admin (admin_users, admin_group)", caller)
	}
	if rm.cfg.HostsExcludeFile == "" {
		return nil, status.Error(codes.FailedPrecondition, "refreshNodes: the resource manager has no hosts_exclude_file configured")
	}
	ex, err := hostsfile.Read("hosts_exclude_file", rm.cfg.HostsExcludeFile)
	if err != nil {
		// The old set stays: a file half-written by an editor must not
		// put every node back in service.
		return nil, status.Errorf(codes.FailedPrecondition, "refreshNodes: %v", err)
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.excluded = ex
	started, back := rm.applyExcludes()
	return &mrpb.RefreshNodesResponse{Decommissioning: started, Recommissioned: back}, nil
}

// processUser is the OS user running this process.
func processUser() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}
