package namenode

import (
	"time"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
)

// Maintenance, as HDFS's maintenance state (HDFS-7877): a datanode named
// in hosts_maintenance_file is going down for a while (a reboot, a disk
// swap) and will come back with its data. It takes no new replicas and is
// ENTERING_MAINTENANCE until every block it holds has
// maintenance_replication_min replicas (default 1, at most the block's
// replication) on in-service datanodes, copied there if need be; then it
// is IN_MAINTENANCE and may stop. Its replicas are then kept when it is
// declared dead and count as the block's maintenance replicas: a block
// needs max(replication - maintenance replicas, the minimum) live ones,
// so nothing is copied while the node is away, where a dead node's
// blocks would otherwise all be re-replicated. When the host leaves the
// file (refreshNodes) or its end time passes, it is back in service: if
// it is down then, its replicas are forgotten and copied as any dead
// node's.

func inMaintenanceState(s dfspb.AdminState) bool {
	return s == dfspb.AdminState_ENTERING_MAINTENANCE || s == dfspb.AdminState_IN_MAINTENANCE
}

// maintenanceAskedLocked reports whether the maintenance file names dn
// with an end time not yet passed.
func (nn *NameNode) maintenanceAskedLocked(dn *datanode, now time.Time) bool {
	until, ok := nn.maint.Until(dn.info.GetHostname(), dn.info.GetIpAddr())
	return ok && (until.IsZero() || now.Before(until))
}

// leaveMaintenanceLocked is a datanode leaving maintenance: down, its
// kept replicas are forgotten now, as at any datanode's death.
func (nn *NameNode) leaveMaintenanceLocked(id string, dn *datanode) {
	if inMaintenanceState(dn.admin) && !dn.live {
		lost := nn.state.Blocks().RemoveNode(id)
		nn.logger.Warn("datanode left maintenance while down: its replicas are copied elsewhere", "id", id, "host", dn.info.GetHostname(), "replicas_lost", len(lost))
	}
}

// maintenanceTickLocked ends the maintenance of datanodes whose end time
// has passed.
func (nn *NameNode) maintenanceTickLocked() {
	now := nn.clock()
	for id, dn := range nn.nodes {
		if inMaintenanceState(dn.admin) && !nn.maintenanceAskedLocked(dn, now) {
			nn.leaveMaintenanceLocked(id, dn)
			dn.admin, dn.decom = dfspb.AdminState_NORMAL, nil
			nn.dirty = true
			nn.logger.Info("datanode maintenance ended: back in service", "id", id, "host", dn.info.GetHostname())
		}
	}
}

// maintenanceMin is the in-service replicas b needs while some of its
// replicas are in maintenance.
func (nn *NameNode) maintenanceMin(b *blockmap.Block) int {
	return min(max(nn.cfg.MaintenanceReplicationMin, 1), b.Expected)
}

// wantLiveLocked is how many replicas of b must be on in-service
// datanodes: its replication, less the replicas on datanodes in
// maintenance (live or down), but at least maintenanceMin.
func (nn *NameNode) wantLiveLocked(b *blockmap.Block) int {
	m := 0
	for _, r := range b.ReplicaList() {
		if dn := nn.nodes[r.Node]; dn != nil && inMaintenanceState(dn.admin) && !r.Corrupt {
			m++
		}
	}
	if m == 0 {
		return b.Expected
	}
	return max(b.Expected-m, nn.maintenanceMin(b))
}

// anyInMaintenanceLocked reports whether some datanode is in maintenance,
// so the replication monitor counts maintenance replicas only then.
func (nn *NameNode) anyInMaintenanceLocked() bool {
	for _, dn := range nn.nodes {
		if inMaintenanceState(dn.admin) {
			return true
		}
	}
	return false
}
