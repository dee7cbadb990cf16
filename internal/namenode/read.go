package namenode

import (
	"context"
	mrand "math/rand/v2"
	"sort"

	"smarth/internal/blocktoken"
	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

func (nn *NameNode) blockLocations(ctx context.Context, req *dfspb.GetBlockLocationsRequest) (*dfspb.LocatedBlocks, error) {
	p, err := cleanPath("open", req.GetPath())
	if err != nil {
		return nil, err
	}
	if req.GetOffset() < 0 || req.GetLength() < 0 {
		return nil, errInvalid("open %s: negative offset or length", p)
	}
	place := nn.placeClient(ctx, req.GetClientHost())
	// Runs after the read lock is released (defers run last first): the
	// access time update needs the write lock.
	var accessed *int64
	defer func() {
		if accessed != nil {
			nn.recordAccess(p, *accessed)
		}
	}()
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	f, err := nn.state.Tree().Open(callerOf(ctx), p)
	if err != nil {
		return nil, statusOf(err)
	}
	snap := nn.state.Tree().InSnapshot(f) // a read-only snapshot copy: no access time, frozen lengths
	if !snap && namespace.AccessTimeDue(f.ATime, nn.nowMs(), nn.cfg.AccessTimePrecision.Milliseconds()) {
		atime := f.ATime
		accessed = &atime
	}
	client := nn.onDatanodeLocked(place).location()
	out := &dfspb.LocatedBlocks{FileLength: f.Length(), UnderConstruction: f.Writer() != nil}
	start, end := req.GetOffset(), int64(-1)
	if req.GetLength() > 0 {
		end = start + req.GetLength()
	}
	var off int64
	for _, b := range f.Blocks {
		bEnd := off + b.NumBytes
		inRange := (bEnd > start || b.NumBytes == 0 && off >= start || b.State == blockmap.UnderConstruction) && (end < 0 || off < end)
		if inRange && snap {
			out.Blocks = append(out.Blocks, nn.snapshotBlockLocked(b, off, client))
		} else if inRange {
			out.Blocks = append(out.Blocks, nn.locatedBlockLocked(b, off, client))
		}
		off = bEnd
	}
	if f.Writer() != nil && len(f.Blocks) > 0 {
		last := f.Blocks[len(f.Blocks)-1]
		out.LastBlock = nn.locatedBlockLocked(last, blockOffset(f, len(f.Blocks)-1), client)
		out.LastBlockComplete = last.State == blockmap.Complete
	}
	if !nn.isActive() { // an observer read (observer.go)
		// What a standby may not know yet: a finished block's replicas
		// (its datanodes' reports may trail the edit), and anything of a
		// file being written (the pipeline's targets are the active's).
		unknown := out.UnderConstruction
		for _, lb := range out.Blocks {
			unknown = unknown || len(lb.GetLocations()) == 0 && lb.GetBlock().GetNumBytes() > 0
		}
		if err := nn.observerBlocksRefusal(accessed != nil, unknown); err != nil {
			accessed = nil // the active records it
			return nil, err
		}
	}
	user := callerOf(ctx).User
	for _, lb := range out.Blocks {
		nn.token(lb, user, blocktoken.Read, nil)
	}
	nn.token(out.LastBlock, user, blocktoken.Read, nil)
	return out, nil
}

// clientLocationLocked places a client known by one name or address: on
// the rack of a datanode on the same host, else where the mapping puts it
// ("" when nowhere: an off-cluster client is equally far from every node).
func (nn *NameNode) clientLocationLocked(host string) topology.Location {
	loc := topology.Location{Host: host, IP: host}
	for _, dn := range nn.nodes {
		if topology.SameHost(loc, dn.location()) {
			loc.Rack = dn.info.Rack
			return loc
		}
	}
	loc.Rack, _ = nn.racks.Lookup(host)
	return loc
}

// locatedBlockLocked lists where a block can be read: good replicas on
// live nodes (for a block being written, the pipeline and what reported),
// nearest to the client first; corrupt replicas only when nothing else is
// left, flagged as corrupt.
func (nn *NameNode) locatedBlockLocked(b *blockmap.Block, off int64, client topology.Location) *dfspb.LocatedBlock {
	lb := &dfspb.LocatedBlock{Block: ext(b), Offset: off}
	var ids []string
	seen := map[string]bool{}
	addID := func(id string) {
		if !seen[id] && nn.isLive(id) {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	reps := b.ReplicaList()
	if b.State == blockmap.UnderConstruction {
		for _, id := range b.Targets() {
			addID(id)
		}
		for _, r := range reps {
			if !r.Corrupt {
				addID(r.Node)
			}
		}
	} else {
		for _, id := range b.Good(nn.isLive) {
			addID(id)
		}
		if len(ids) == 0 { // committed, still being finalized in the pipeline
			for _, r := range reps {
				if !r.Corrupt && r.GS >= b.GS {
					addID(r.Node)
				}
			}
			for _, id := range b.Targets() {
				addID(id)
			}
		}
		if len(ids) == 0 {
			for _, r := range reps {
				addID(r.Node)
			}
			lb.Corrupt = len(ids) > 0
		}
	}
	cached := map[string]bool{}
	if b.State == blockmap.Complete && !lb.Corrupt {
		for _, id := range nn.cache.CachedOnLocked(b.ID) {
			if seen[id] {
				cached[id] = true
				lb.CachedOn = append(lb.CachedOn, id)
			}
		}
	}
	nn.sortByDistanceLocked(ids, client, cached)
	lb.Locations = nn.datanodeInfos(ids)
	return lb
}

// sortByDistanceLocked orders datanode ids nearest first; among equally
// near ones those holding the block in memory come first (as HDFS puts
// cached replicas first), the rest are shuffled so that readers spread
// over the replicas.
func (nn *NameNode) sortByDistanceLocked(ids []string, client topology.Location, cached map[string]bool) {
	mrand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	dist := make(map[string]int, len(ids))
	for _, id := range ids {
		// Distances are even numbers of hops; +1 puts an uncached
		// replica after a cached one at the same distance.
		dist[id] = 2 * topology.Distance(client, nn.nodes[id].location())
		if !cached[id] {
			dist[id]++
		}
		if nn.nodes[id].admin != dfspb.AdminState_NORMAL {
			dist[id] += 1 << 20 // a leaving node's replica last, as HDFS sorts decommissioned ones
		}
	}
	sort.SliceStable(ids, func(i, j int) bool { return dist[ids[i]] < dist[ids[j]] })
}
