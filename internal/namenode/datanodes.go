package namenode

import (
	"smarth/internal/blocktoken"

	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// maxInvalidatePerHeartbeat bounds one heartbeat reply, so a node with a
// big backlog deletes in steady steps (HDFS blockInvalidateLimit).
const maxInvalidatePerHeartbeat = 1000

// datanode is the namenode's record of one datanode. All fields are
// guarded by NameNode.mu.
type datanode struct {
	info       *dfspb.DatanodeInfo // as registered (rack resolved), counters from heartbeats
	peer       string              // the IP its registration came from (WebHDFS redirect tokens: redirectFrom)
	live       bool
	lastSeen   time.Time
	reported   bool // a full block report arrived since it (re)registered
	invalidate []*dfspb.ExtendedBlock
	transfers  []*dfspb.TransferCommand_Item
	recoveries []*dfspb.RecoverBlockCommand
	streams    int              // re-replications it is sending now
	admin      dfspb.AdminState // decommissioning (decommission.go)
	decom      *decomScan       // the decommission monitor's progress on it (decomscan.go)
	space      spaceEstimate
}

func (dn *datanode) location() topology.Location {
	return topology.Location{Host: dn.info.Hostname, IP: dn.info.IpAddr, Rack: dn.info.Rack}
}

// snapshot is a copy of the datanode's info with its current state.
func (dn *datanode) snapshot() *dfspb.DatanodeInfo {
	info := proto.Clone(dn.info).(*dfspb.DatanodeInfo)
	info.State = dfspb.DatanodeState_DEAD
	if dn.live {
		info.State = dfspb.DatanodeState_LIVE
	}
	info.LastHeartbeatUnixMs = dn.lastSeen.UnixMilli()
	info.AdminState = dn.admin
	return info
}

// datanodeIPs are the addresses datanode id's calls may come from: the IP
// it advertises and the one it registered from (they differ behind NAT
// or on a host with several interfaces).
func (nn *NameNode) datanodeIPs(id string) []string {
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	dn := nn.nodes[id]
	if dn == nil || dn.info == nil {
		return nil
	}
	return []string{dn.info.GetIpAddr(), dn.peer}
}

func (nn *NameNode) registerDatanode(req *dfspb.RegisterDatanodeRequest, peer string) (*dfspb.DatanodeInfo, error) {
	in := req.GetDatanode()
	switch {
	case in.GetId() == "":
		return nil, errInvalid("registerDatanode: the datanode has no id")
	case in.GetIpAddr() == "" || in.GetDataPort() == 0:
		return nil, errInvalid("registerDatanode %s: ip_addr and data_port are required", in.GetId())
	}
	now := nn.clock()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	for id, other := range nn.nodes {
		if id != in.GetId() && other.info.IpAddr == in.GetIpAddr() && other.info.DataPort == in.GetDataPort() {
			// A new datanode where another one was: the old one is gone
			// (its data directory was wiped or replaced).
			nn.logger.Warn("datanode replaced by another at the same address", "old", id, "new", in.GetId(), "addr", fmt.Sprintf("%s:%d", in.GetIpAddr(), in.GetDataPort()))
			nn.markDeadLocked(other, "replaced")
			delete(nn.nodes, id)
		}
	}
	dn := nn.nodes[in.GetId()]
	switch {
	case dn == nil:
		dn = &datanode{}
		nn.nodes[in.GetId()] = dn
		nn.logger.Info("datanode registered", "id", in.GetId(), "host", in.GetHostname(), "ip", in.GetIpAddr())
	case dn.live:
		// Restarted: what it holds now comes with its next full report;
		// commands queued for the old process are stale.
		dn.invalidate, dn.transfers, dn.recoveries = nil, nil, nil
		nn.deleting.forgetNode(in.GetId())
		nn.logger.Info("datanode re-registered", "id", in.GetId(), "host", in.GetHostname())
	default:
		nn.logger.Info("dead datanode is back", "id", in.GetId(), "host", in.GetHostname())
	}
	// A (re)registering datanode process starts with an empty cache.
	nn.cache.NodeRegisteredLocked(in.GetId(), in.GetCacheCapacity())
	info := proto.Clone(in).(*dfspb.DatanodeInfo)
	info.Rack = nn.racks.Rack(info.Hostname, info.IpAddr, in.GetRack())
	dn.info, dn.live, dn.lastSeen, dn.reported, dn.peer = info, true, now, false, peer
	// Writes scheduled on the old process died with it; what they left
	// on disk is in the space it registers with.
	dn.space = spaceEstimate{}
	if dn.admin == dfspb.AdminState_NORMAL && nn.excludedLocked(dn) {
		dn.admin = dfspb.AdminState_DECOMMISSION_IN_PROGRESS
		nn.logger.Info("datanode decommissioning (it is in hosts_exclude_file)", "id", in.GetId(), "host", in.GetHostname())
	} else if dn.admin == dfspb.AdminState_NORMAL && nn.maintenanceAskedLocked(dn, now) {
		dn.admin = dfspb.AdminState_ENTERING_MAINTENANCE
		nn.logger.Info("datanode entering maintenance (it is in hosts_maintenance_file)", "id", in.GetId(), "host", in.GetHostname())
	}
	nn.dirty = true
	return dn.snapshot(), nil
}

// heartbeat records a datanode's state and hands it its queued commands. A
// recovery command carries a generation stamp that was only appended to
// the edit log; it is made durable before the reply leaves, so that a
// namenode crash cannot hand the same stamp out again after a datanode
// has already stamped its replica with it.
func (nn *NameNode) heartbeat(req *dfspb.HeartbeatRequest) *dfspb.HeartbeatResponse {
	resp, tx := nn.heartbeatLocked(req)
	if err := nn.sync(tx); err != nil {
		nn.logger.Error("recovery commands withheld: their stamps are not durable", "datanode", req.GetDatanodeId(), "error", err)
		kept := resp.Commands[:0]
		for _, c := range resp.Commands {
			if c.GetRecover() == nil {
				kept = append(kept, c)
			}
		}
		resp.Commands = kept
	}
	return resp
}

// heartbeatLocked is heartbeat under nn.mu; tx is the txid that must be
// durable before the reply is sent (0: none).
func (nn *NameNode) heartbeatLocked(req *dfspb.HeartbeatRequest) (*dfspb.HeartbeatResponse, uint64) {
	now := nn.clock()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	dn := nn.nodes[req.GetDatanodeId()]
	if dn == nil || !dn.live {
		// Any member asks a datanode it does not know to register.
		resp := &dfspb.HeartbeatResponse{}
		nn.haHeartbeatLocked(resp)
		resp.Commands = []*dfspb.DatanodeCommand{{Command: &dfspb.DatanodeCommand_Reregister{Reregister: true}}}
		return resp, 0
	}
	dn.lastSeen = now
	dn.info.Capacity, dn.info.DfsUsed, dn.info.Remaining = req.GetCapacity(), req.GetDfsUsed(), req.GetRemaining()
	dn.space.heartbeat(now)
	dn.info.XceiverCount = req.GetXceiverCount()
	dn.info.CacheCapacity, dn.info.CacheUsed = req.GetCacheCapacity(), req.GetCacheUsed()
	dn.info.NumBlocks = int64(nn.state.Blocks().NodeBlockCount(dn.info.Id))
	resp := &dfspb.HeartbeatResponse{FullBlockReportRequested: !dn.reported}
	if len(dn.invalidate) > 0 {
		n := min(len(dn.invalidate), maxInvalidatePerHeartbeat)
		resp.Commands = append(resp.Commands, &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{
			Invalidate: &dfspb.InvalidateCommand{Blocks: dn.invalidate[:n]}}})
		dn.invalidate = dn.invalidate[n:]
	}
	nn.keysForHeartbeat(req, resp)
	if len(dn.transfers) > 0 {
		for _, it := range dn.transfers {
			// Signed as the command leaves, so that a transfer queued for
			// a while still gets a full token lifetime.
			it.Token = nn.blockToken(it.GetBlock(), nn.cfg.Superuser, blocktoken.Copy, it.GetTargets())
		}
		resp.Commands = append(resp.Commands, &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Transfer{
			Transfer: &dfspb.TransferCommand{Items: dn.transfers}}})
		dn.transfers = nil
	}
	var tx uint64
	if len(dn.recoveries) > 0 {
		tx = nn.journal.LastTxID()
	}
	for _, r := range dn.recoveries {
		resp.Commands = append(resp.Commands, &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Recover{Recover: r}})
	}
	dn.recoveries = nil
	nn.cache.HeartbeatLocked(dn.info.Id, req, resp)
	nn.haHeartbeatLocked(resp)
	return resp, tx
}

// liveNodeLocked returns a registered, live datanode or an error telling
// it to register again.
func (nn *NameNode) liveNodeLocked(op, id string) (*datanode, error) {
	dn := nn.nodes[id]
	if dn == nil || !dn.live {
		return nil, errPrecondition("%s: datanode %s is not registered (or was declared dead); register again", op, id)
	}
	return dn, nil
}

func replicaState(s dfspb.ReplicaState) blockmap.ReplicaState {
	switch s {
	case dfspb.ReplicaState_RBW:
		return blockmap.BeingWritten
	case dfspb.ReplicaState_RUR:
		return blockmap.UnderRecovery
	}
	return blockmap.Finalized
}

func (nn *NameNode) blockReport(req *dfspb.BlockReportRequest) error {
	start := time.Now()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	dn, err := nn.liveNodeLocked("blockReport", req.GetDatanodeId())
	if err != nil {
		return err
	}
	reps := make([]blockmap.Reported, len(req.GetBlocks()))
	for i, rb := range req.GetBlocks() {
		reps[i] = blockmap.Reported{ID: rb.GetBlock().GetBlockId(), GS: rb.GetBlock().GetGenerationStamp(),
			NumBytes: rb.GetBlock().GetNumBytes(), State: replicaState(rb.GetState())}
	}
	id := dn.info.Id
	res := nn.state.Blocks().ProcessReport(id, reps)
	nn.deleting.reported(id, reps)
	for _, r := range res.Invalidate {
		// A standby's full report can come before the edits of the newest
		// blocks too: a member restarted after a kill catches up on the
		// log while its datanodes re-register and report (early.go).
		if !nn.holdEarlyLocked(id, r) {
			nn.invalidateLocked(id, fsstate.BlockRef{ID: r.ID, GS: r.GS, Len: r.NumBytes})
		}
	}
	for _, bid := range res.Added {
		nn.replicaAddedLocked(id, nn.state.Blocks().Get(bid))
	}
	// An HA member in automatic safe mode that finds replicas of blocks
	// it does not know is most likely still applying its log after a
	// restart (a snapshot restored, then the entries after it): those
	// blocks come with later entries, and replicas reported before them
	// count for nothing. Left unreported, the datanode is asked for
	// another full report at its next heartbeat, which finds them;
	// otherwise safe mode lasted until the datanode re-registered, which
	// came only after this member had become the active (a 30-minute
	// chaos run: writes refused in safe mode for 2.2 s after a failover).
	dn.reported = !(nn.ha != nil && nn.safe.on && !nn.safe.manual && len(res.Invalidate) > 0)
	nn.dirty = true
	nn.checkSafeMode(nn.clock())
	nn.logger.Info("full block report", "datanode", id, "replicas", len(reps), "unknown", len(res.Invalidate),
		"corrupt", len(res.Corrupt), "gone", len(res.Removed), "took", time.Since(start).String())
	return nil
}

func (nn *NameNode) blockReceivedAndDeleted(req *dfspb.BlockReceivedAndDeletedRequest) error {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	dn, err := nn.liveNodeLocked("blockReceivedAndDeleted", req.GetDatanodeId())
	if err != nil {
		return err
	}
	id := dn.info.Id
	for _, r := range req.GetBlocks() {
		eb := r.GetBlock()
		rep := blockmap.Reported{ID: eb.GetBlockId(), GS: eb.GetGenerationStamp(), NumBytes: eb.GetNumBytes(), State: blockmap.Finalized}
		switch r.GetStatus() {
		case dfspb.ReceivedStatus_DELETED:
			nn.state.Blocks().RemoveReplica(id, rep.ID)
			nn.cache.UncacheOnLocked(id, rep.ID)
			nn.dropEarlyLocked(id, rep.ID)
			nn.deleting.done(id, rep.ID)
			continue
		case dfspb.ReceivedStatus_RECEIVING:
			rep.State = blockmap.BeingWritten
		default:
			// On its disk now, whatever the block map makes of it.
			dn.space.receivedReplica(rep.ID, rep.NumBytes)
		}
		if nn.holdEarlyLocked(id, rep) {
			continue // a standby ahead of its log: applied with the block's edit
		}
		nn.addReportedLocked(id, rep)
	}
	nn.dirty = true
	if nn.safe.on {
		nn.checkSafeMode(nn.clock())
	}
	return nil
}

// replicaAddedLocked notes a finalized replica: a re-replication target
// delivered, a committed block may be complete.
func (nn *NameNode) replicaAddedLocked(node string, b *blockmap.Block) {
	if b == nil {
		return
	}
	nn.tryCompleteLocked(b)
	if p := nn.pending[b.ID]; p != nil && p.targets[node] {
		delete(p.targets, node)
		if len(p.targets) == 0 {
			nn.cancelPendingLocked(b.ID)
		}
	}
}

// markBadLocked records a corrupt replica reported by a reader or a
// datanode's scanner.
func (nn *NameNode) markBadLocked(blockID uint64, node, reason string) {
	nn.cache.UncacheOnLocked(node, blockID) // never serve a bad replica from memory
	if nn.state.Blocks().MarkCorrupt(blockID, node, reason) {
		nn.logger.Warn("corrupt replica reported", "block", blockID, "datanode", node, "reason", reason)
		nn.metrics.corruptReports.Inc()
		nn.dirty = true
	}
}

func (nn *NameNode) datanodeBadBlocks(req *dfspb.DatanodeReportBadBlocksRequest) error {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	for _, eb := range req.GetBlocks() {
		nn.markBadLocked(eb.GetBlockId(), req.GetDatanodeId(), "checksum error found by its datanode")
	}
	return nil
}

func (nn *NameNode) clientBadBlocks(ctx context.Context, req *dfspb.ReportBadBlocksRequest) error {
	c := callerOf(ctx)
	nn.mu.Lock()
	defer nn.mu.Unlock()
	for _, lb := range req.GetBlocks() {
		for _, loc := range lb.GetLocations() {
			nn.markBadLocked(lb.GetBlock().GetBlockId(), loc.GetId(), "checksum error found by a reader ("+c.User+")")
		}
	}
	return nil
}

// invalidateLocked asks node to delete its replica of a block that is no
// longer wanted. In safe mode deletions wait: the namespace may not be
// complete yet.
func (nn *NameNode) invalidateLocked(node string, b fsstate.BlockRef) {
	nn.cache.UncacheOnLocked(node, b.ID)
	if nn.safe.on {
		nn.postponed = append(nn.postponed, fsstate.Orphan{Node: node, Block: b})
		return
	}
	dn := nn.nodes[node]
	if dn == nil || !dn.live {
		return // it reports the replica again when it comes back
	}
	dn.invalidate = append(dn.invalidate, &dfspb.ExtendedBlock{BlockId: b.ID, GenerationStamp: b.GS, NumBytes: b.Len})
	nn.metrics.invalidations.Inc()
	if nn.state.Blocks().Get(b.ID) != nil {
		nn.deleting.add(node, b.ID, nn.clock()) // no new copy there until it is gone
	}
}

// checkDatanodes declares silent datanodes dead.
func (nn *NameNode) checkDatanodes(now time.Time) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	for _, dn := range nn.nodes {
		if dn.live && now.Sub(dn.lastSeen) > nn.cfg.DeadNodeTimeout {
			nn.markDeadLocked(dn, fmt.Sprintf("no heartbeat for %v", now.Sub(dn.lastSeen).Round(time.Millisecond)))
		}
	}
}

// markDeadLocked forgets a datanode's replicas and pending work; its
// blocks become under-replicated and the replication monitor copies them.
func (nn *NameNode) markDeadLocked(dn *datanode, why string) {
	id := dn.info.Id
	var affected []uint64
	if dn.admin == dfspb.AdminState_IN_MAINTENANCE {
		// Down for maintenance, as its operator said: its replicas are
		// kept and count as maintenance replicas (maintenance.go).
		nn.logger.Info("datanode in maintenance is down: its replicas are kept", "id", id, "host", dn.info.Hostname, "why", why)
	} else {
		affected = nn.state.Blocks().RemoveNode(id)
	}
	dn.live, dn.reported = false, false
	dn.invalidate, dn.transfers, dn.recoveries, dn.streams = nil, nil, nil, 0
	nn.deleting.forgetNode(id)
	nn.cache.NodeGoneLocked(id)
	for bid, p := range nn.pending {
		if p.source == id {
			nn.cancelPendingLocked(bid)
		} else if p.targets[id] {
			delete(p.targets, id)
			if len(p.targets) == 0 {
				nn.cancelPendingLocked(bid)
			}
		}
	}
	nn.dirty = true
	nn.logger.Warn("datanode declared dead", "id", id, "host", dn.info.Hostname, "why", why, "replicas_lost", len(affected))
}

// datanodeReport lists datanodes, optionally only those in one state.
func (nn *NameNode) datanodeReport(state dfspb.DatanodeState) []*dfspb.DatanodeInfo {
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	var out []*dfspb.DatanodeInfo
	for _, dn := range nn.nodes {
		info := dn.snapshot()
		info.NumBlocks = int64(nn.state.Blocks().NodeBlockCount(dn.info.Id))
		if state == dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED || info.State == state {
			out = append(out, info)
		}
	}
	sortInfos(out)
	return out
}

func sortInfos(infos []*dfspb.DatanodeInfo) {
	less := func(a, b *dfspb.DatanodeInfo) bool {
		if a.Rack != b.Rack {
			return a.Rack < b.Rack
		}
		if a.Hostname != b.Hostname {
			return a.Hostname < b.Hostname
		}
		return a.Id < b.Id
	}
	for i := 1; i < len(infos); i++ {
		for j := i; j > 0 && less(infos[j], infos[j-1]); j-- {
			infos[j], infos[j-1] = infos[j-1], infos[j]
		}
	}
}
