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
// exclude and maintenance sets ask for and returns the hostnames that
// changed. Decommissioning wins over maintenance for a host in both.
func (nn *NameNode) applyExcludesLocked() (started, back, maint []string) {
	now := nn.clock()
	for id, dn := range nn.nodes {
		ex := nn.excludedLocked(dn)
		inMaint := !ex && nn.maintenanceAskedLocked(dn, now)
		switch {
		case ex && (dn.admin == dfspb.AdminState_NORMAL || inMaintenanceState(dn.admin)):
			nn.leaveMaintenanceLocked(id, dn)
			dn.admin, dn.decom = dfspb.AdminState_DECOMMISSION_IN_PROGRESS, nil
			started = append(started, dn.info.GetHostname())
			nn.logger.Info("datanode decommissioning", "id", id, "host", dn.info.GetHostname(), "blocks", nn.state.Blocks().NodeBlockCount(id))
		case inMaint && dn.admin == dfspb.AdminState_NORMAL:
			dn.admin, dn.decom = dfspb.AdminState_ENTERING_MAINTENANCE, nil
			maint = append(maint, dn.info.GetHostname())
			nn.logger.Info("datanode entering maintenance", "id", id, "host", dn.info.GetHostname(), "blocks", nn.state.Blocks().NodeBlockCount(id))
		case !ex && !inMaint && dn.admin != dfspb.AdminState_NORMAL:
			nn.leaveMaintenanceLocked(id, dn)
			dn.admin, dn.decom = dfspb.AdminState_NORMAL, nil
			back = append(back, dn.info.GetHostname())
			nn.logger.Info("datanode back in service", "id", id, "host", dn.info.GetHostname())
		}
	}
	sort.Strings(started)
	sort.Strings(back)
	sort.Strings(maint)
	nn.dirty = true
	return started, back, maint
}

// refreshNodes re-reads the exclude and maintenance files.
func (nn *NameNode) refreshNodes() (*dfspb.RefreshNodesResponse, error) {
	ex, err := hostsfile.Read("hosts_exclude_file", nn.cfg.HostsExcludeFile)
	if err != nil {
		return nil, errUnavailable("refreshNodes: %v", err)
	}
	maint, err := hostsfile.ReadMaintenance("hosts_maintenance_file", nn.cfg.HostsMaintenanceFile)
	if err != nil {
		return nil, errUnavailable("refreshNodes: %v", err)
	}
	nn.mu.Lock()
	defer nn.mu.Unlock()
	nn.excluded, nn.maint = ex, maint
	started, back, entering := nn.applyExcludesLocked()
	return &dfspb.RefreshNodesResponse{Decommissioning: started, Recommissioned: back, EnteringMaintenance: entering}, nil
}

// RefreshNodes is HDFS's dfsadmin -refreshNodes; the superuser rule is
// authz.go's.
func (s *clientRPC) RefreshNodes(ctx context.Context, _ *dfspb.RefreshNodesRequest) (*dfspb.RefreshNodesResponse, error) {
	if s.nn.cfg.HostsExcludeFile == "" && s.nn.cfg.HostsMaintenanceFile == "" {
		return nil, errPrecondition("refreshNodes: the namenode has no hosts_exclude_file or hosts_maintenance_file configured")
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
	nn.maintenanceTickLocked()
	// Nodes entering maintenance are scanned the same way, for the
	// maintenance minimum instead of full replication (maintenance.go).
	ids := make([]string, 0, len(nn.nodes))
	for id, dn := range nn.nodes {
		if (dn.admin == dfspb.AdminState_DECOMMISSION_IN_PROGRESS || dn.admin == dfspb.AdminState_ENTERING_MAINTENANCE) && dn.live && dn.reported {
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
	shortOfMin := func(bid uint64) bool {
		b := nn.state.Blocks().Get(bid)
		return b != nil && b.Count(nn.inService).Live < nn.maintenanceMin(b)
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
		check := short
		if dn.admin == dfspb.AdminState_ENTERING_MAINTENANCE {
			check = shortOfMin
		}
		used, done := dn.decom.step(budget, func() []uint64 { return nn.state.Blocks().NodeBlocks(id) }, check)
		budget -= used
		if done && dn.admin == dfspb.AdminState_ENTERING_MAINTENANCE {
			dn.admin, dn.decom = dfspb.AdminState_IN_MAINTENANCE, nil
			nn.logger.Info("datanode in maintenance: every block it holds has its maintenance minimum elsewhere", "id", id, "host", dn.info.GetHostname())
			continue
		}
		if done {
			dn.admin, dn.decom = dfspb.AdminState_DECOMMISSIONED, nil
			nn.logger.Info("datanode decommissioned: every block it holds is fully replicated elsewhere", "id", id, "host", dn.info.GetHostname())
		}
	}
	nn.decomNext = ""
}
