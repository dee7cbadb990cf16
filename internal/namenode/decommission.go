package namenode

import (
	"context"
	"sort"

	"smarth/internal/hostsfile"
	"smarth/internal/rpc/dfspb"
)

// Decommissioning, as HDFS's DatanodeAdminManager: a datanode named in
// hosts_exclude_file takes no new replicas, its replicas stop counting
// towards their blocks' replication, so the replication monitor copies
// them elsewhere (the leaving node may be the source), and once every
// block it holds has its full replication on in-service nodes it is
// DECOMMISSIONED. Its replicas still serve reads, last among a block's
// locations. The admin state is each namenode's own, from its file, as in
// HDFS; it is not in the edit log.

// excludedLocked reports whether dn is named in the exclude set.
func (nn *NameNode) excludedLocked(dn *datanode) bool {
	return nn.excluded.Has(dn.info.GetHostname(), dn.info.GetIpAddr())
}

// applyExcludesLocked moves every datanode to the admin state the
// exclude set asks for and returns the hostnames that changed.
func (nn *NameNode) applyExcludesLocked() (started, back []string) {
	for id, dn := range nn.nodes {
		switch ex := nn.excludedLocked(dn); {
		case ex && dn.admin == dfspb.AdminState_NORMAL:
			dn.admin, dn.decom = dfspb.AdminState_DECOMMISSION_IN_PROGRESS, nil
			started = append(started, dn.info.GetHostname())
			nn.logger.Info("datanode decommissioning", "id", id, "host", dn.info.GetHostname(), "blocks", nn.state.Blocks().NodeBlockCount(id))
		case !ex && dn.admin != dfspb.AdminState_NORMAL:
			dn.admin, dn.decom = dfspb.AdminState_NORMAL, nil
			back = append(back, dn.info.GetHostname())
			nn.logger.Info("datanode back in service", "id", id, "host", dn.info.GetHostname())
		}
	}
	sort.Strings(started)
	sort.Strings(back)
	nn.dirty = true
	return started, back
}

// refreshNodes re-reads the exclude file.
func (nn *NameNode) refreshNodes() (*dfspb.RefreshNodesResponse, error) {
	ex, err := hostsfile.Read("hosts_exclude_file", nn.cfg.HostsExcludeFile)
	if err != nil {
		return nil, errUnavailable("refreshNodes: %v", err)
	}
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.excluded = ex
	started, back := nn.applyExcludesLocked()
	return &dfspb.RefreshNodesResponse{Decommissioning: started, Recommissioned: back}, nil
}

// RefreshNodes is HDFS's dfsadmin -refreshNodes; the superuser rule is
// authz.go's.
func (s *clientRPC) RefreshNodes(ctx context.Context, _ *dfspb.RefreshNodesRequest) (*dfspb.RefreshNodesResponse, error) {
	if s.nn.cfg.HostsExcludeFile == "" {
		return nil, errPrecondition("refreshNodes: the namenode has no hosts_exclude_file configured")
	}
	return s.nn.refreshNodes()
}

// inService reports whether id's replicas count towards replication: a
// live datanode that is not leaving.
func (nn *NameNode) inService(id string) bool {
	dn := nn.nodes[id]
	return dn != nil && dn.live && dn.admin == dfspb.AdminState_NORMAL
}

// decommissionTickLocked marks DECOMMISSIONED each decommissioning
// datanode all of whose blocks are fully replicated on in-service nodes,
// checking at most decommission_blocks_per_interval blocks per tick over
// all such nodes (decomscan.go). A block being written waits for its file
// to close; a block whose expected replication cannot be met (too few
// in-service nodes) keeps the node in progress, as HDFS does.
func (nn *NameNode) decommissionTickLocked() {
	budget := nn.cfg.DecommissionBlocksPerInterval
	if budget <= 0 {
		budget = defaultDecommissionBlocksPerInterval
	}
	ids := make([]string, 0, len(nn.nodes))
	for id, dn := range nn.nodes {
		if dn.admin == dfspb.AdminState_DECOMMISSION_IN_PROGRESS && dn.live && dn.reported {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	// Start after the node the last tick's budget ran out on, so every
	// node progresses when the budget is smaller than their blocks.
	if i := sort.SearchStrings(ids, nn.decomNext); i < len(ids) {
		ids = append(ids[i:], ids[:i]...)
	}
	short := func(bid uint64) bool {
		b := nn.state.Blocks().Get(bid)
		return b != nil && b.Count(nn.inService).Live < b.Expected
	}
	for _, id := range ids {
		if budget <= 0 {
			nn.decomNext = id
			return
		}
		dn := nn.nodes[id]
		if dn.decom == nil {
			dn.decom = &decomScan{full: true, todo: nn.state.Blocks().NodeBlocks(id)}
		}
		used, done := dn.decom.step(budget, func() []uint64 { return nn.state.Blocks().NodeBlocks(id) }, short)
		budget -= used
		if done {
			dn.admin, dn.decom = dfspb.AdminState_DECOMMISSIONED, nil
			nn.logger.Info("datanode decommissioned: every block it holds is fully replicated elsewhere", "id", id, "host", dn.info.GetHostname())
		}
	}
	nn.decomNext = ""
}
