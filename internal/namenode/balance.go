package namenode

import (
	"context"
	"math/rand/v2"
	"slices"

	"smarth/internal/namenode/blockmap"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/rpc/dfspb"
)

// The balancer's two calls (HDFS's NamenodeProtocol.getBlocks and the
// datanodes' replaceBlock, here one namenode call): the balancer, a
// client run by a superuser (`smarth balancer`), picks which replicas to
// move from over- to under-used datanodes; the namenode checks each move
// and carries it out with the machinery of re-replication (a transfer
// command to the source, bounded by max_replication_streams) and, once
// the target has reported the copy, deletes the source's replica.

// maxGetBlocks bounds one GetBlocks answer.
const maxGetBlocks = 10_000

// GetBlocks lists complete blocks datanode_id holds a good replica of,
// from a random start, up to max_bytes of them.
func (s *clientRPC) GetBlocks(ctx context.Context, req *dfspb.GetBlocksRequest) (*dfspb.GetBlocksResponse, error) {
	nn := s.nn
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	if nn.nodes[req.GetDatanodeId()] == nil {
		return nil, errNotFound("getBlocks: no datanode %q", req.GetDatanodeId())
	}
	ids := nn.state.Blocks().NodeBlocks(req.GetDatanodeId())
	if only := req.GetOnly(); len(only) > 0 {
		// Asked by id: every listed block is looked at, not a random
		// window of the node's (which could miss one it still holds).
		ids = only[:min(len(only), maxGetBlocks)]
	}
	resp := &dfspb.GetBlocksResponse{}
	if len(ids) == 0 {
		return resp, nil
	}
	start := rand.IntN(len(ids))
	var total int64
	for i := range ids {
		b := nn.state.Blocks().Get(ids[(start+i)%len(ids)])
		if b == nil || b.State != blockmap.Complete {
			continue
		}
		good := b.Good(nn.isLive)
		if !slices.Contains(good, req.GetDatanodeId()) {
			continue
		}
		resp.Blocks = append(resp.Blocks, &dfspb.BalancerBlock{BlockId: b.ID, NumBytes: b.NumBytes, Holders: good})
		total += b.NumBytes
		if total >= req.GetMaxBytes() || len(resp.Blocks) >= maxGetBlocks {
			break
		}
	}
	return resp, nil
}

// MoveReplica schedules one move.
func (s *clientRPC) MoveReplica(ctx context.Context, req *dfspb.MoveReplicaRequest) (*dfspb.MoveReplicaResponse, error) {
	return &dfspb.MoveReplicaResponse{}, s.nn.moveReplica(req.GetBlockId(), req.GetSourceId(), req.GetTargetId())
}

func (nn *NameNode) moveReplica(id uint64, source, target string) error {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	b := nn.state.Blocks().Get(id)
	switch {
	case b == nil:
		return errNotFound("moveReplica: no block %d", id)
	case b.State != blockmap.Complete:
		return errPrecondition("moveReplica: block %d is being written", id)
	case nn.pending[id] != nil:
		return errPrecondition("moveReplica: block %d already has a transfer in flight", id)
	}
	src, tgt := nn.nodes[source], nn.nodes[target]
	switch {
	case src == nil || !src.live:
		return errPrecondition("moveReplica: source datanode %q is not live", source)
	case tgt == nil || !nn.inService(target):
		return errPrecondition("moveReplica: target datanode %q is not live and in service", target)
	case !slices.Contains(b.Good(nn.isLive), source):
		return errPrecondition("moveReplica: datanode %s holds no good replica of block %d", src.info.GetHostname(), id)
	}
	for _, r := range b.ReplicaList() {
		if r.Node == target {
			return errPrecondition("moveReplica: datanode %s already holds block %d", tgt.info.GetHostname(), id)
		}
	}
	// A move must not put the block on fewer racks (HDFS's balancer
	// keeps the placement policy's rack spread).
	before, after := map[string]bool{}, map[string]bool{tgt.info.GetRack(): true}
	for _, h := range b.Good(nn.inService) {
		before[nn.nodes[h].info.GetRack()] = true
		if h != source {
			after[nn.nodes[h].info.GetRack()] = true
		}
	}
	if len(after) < len(before) {
		return errPrecondition("moveReplica: moving block %d from %s to %s would leave it on fewer racks", id, src.info.GetHostname(), tgt.info.GetHostname())
	}
	if src.streams >= nn.cfg.MaxReplicationStreams {
		return errUnavailable("moveReplica: datanode %s is already sending %d copies; try again", src.info.GetHostname(), src.streams)
	}
	now := nn.clock()
	item := &dfspb.TransferCommand_Item{Block: ext(b), Targets: []*dfspb.DatanodeInfo{tgt.snapshot()}, Balance: true}
	nn.pending[id] = &pendingTransfer{source: source, targets: map[string]bool{target: true}, deadline: now.Add(nn.pendingTimeout())}
	nn.scheduleSpaceLocked([]string{target}, id, b.NumBytes)
	src.transfers = append(src.transfers, item)
	src.streams++
	if nn.moves == nil {
		nn.moves = map[uint64]string{}
	}
	nn.moves[id] = source
	nn.dirty = true
	nn.logger.Info("balancer move scheduled", "block", id, "source", source, "target", target)
	return nil
}

// moveVictimLocked is the replica a finished move leaves to delete: the
// move's source, when it still holds one of good.
func (nn *NameNode) moveVictimLocked(id uint64, good []string) (string, bool) {
	src, ok := nn.moves[id]
	if !ok {
		return "", false
	}
	delete(nn.moves, id)
	return src, slices.Contains(good, src)
}

// removeMovedLocked deletes the source replica of a finished move.
func (nn *NameNode) removeMovedLocked(victim string, ref fsstate.BlockRef) {
	nn.state.Blocks().RemoveReplica(victim, ref.ID)
	nn.invalidateLocked(victim, ref)
	nn.logger.Info("balancer move done: source replica deleted", "block", ref.ID, "datanode", victim)
}
