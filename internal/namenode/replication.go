package namenode

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/placement"
	"smarth/internal/rpc/dfspb"
)

// pendingTransfer is a re-replication sent to a datanode and not yet
// confirmed by the targets' received reports.
type pendingTransfer struct {
	source   string
	targets  map[string]bool // targets still to report the replica
	deadline time.Time       // after it the transfer is assumed lost and retried
}

// replStats is what the last replication scan found.
type replStats struct {
	blocks          int  // complete blocks scanned
	underReplicated int  // fewer good live replicas than expected
	missing         int  // no good live replica at all
	corrupt         int  // at least one corrupt replica
	scheduled       int  // transfers queued by the scan
	unsettled       bool // something still needs work (or could not be done yet)
}

// need is a block that wants more replicas.
type need struct {
	b        *blockmap.Block
	good     []string // in-service holders of a good replica
	sources  []string // good's and decommissioning holders: any may send a copy
	priority int      // 0: one replica left; 1: fewer than a third; 2: others
	want     int      // live replicas it needs: its replication, less maintenance replicas
}

// pendingTimeout is how long a transfer may take before it is retried
// (HDFS: dfs.namenode.reconstruction.pending.timeout-sec, 5 minutes; we
// scale with the configured intervals so tests stay fast).
func (nn *NameNode) pendingTimeout() time.Duration {
	return 10 * max(nn.cfg.ReplicationInterval, nn.cfg.HeartbeatInterval)
}

func (nn *NameNode) cancelPendingLocked(id uint64) {
	p := nn.pending[id]
	if p == nil {
		return
	}
	if dn := nn.nodes[p.source]; dn != nil && dn.streams > 0 {
		dn.streams--
	}
	delete(nn.pending, id)
}

// replicationTick is the replication monitor: it expires lost transfers,
// then scans the complete blocks for too few, too many and corrupt
// replicas and queues transfer and invalidate commands.
func (nn *NameNode) replicationTick() {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	now := nn.clock()
	nn.deleting.sweep(now, nn.pendingTimeout())
	for id, p := range nn.pending {
		if now.After(p.deadline) {
			nn.logger.Warn("re-replication timed out; will retry", "block", id, "source", p.source)
			nn.cancelPendingLocked(id)
			delete(nn.moves, id) // a balancer move: the balancer picks again
		}
	}
	// A full scan costs time under the lock; skip it while nothing changed
	// and the last one left nothing to do.
	nn.decommissionTickLocked()
	if !nn.dirty && len(nn.pending) == 0 && !nn.stats.unsettled {
		return
	}
	nn.scanLocked(now, !nn.safe.on)
	nn.dirty = false
}

// scanLocked classifies every complete block; with act it also queues the
// work (never in safe mode, when replicas are still being reported).
func (nn *NameNode) scanLocked(now time.Time, act bool) {
	var st replStats
	var needs []need
	// The walk over every block is unordered and allocates nothing; only
	// the few blocks with something to do are then sorted, by id, and
	// handled in that order, which keeps the monitor's choices
	// reproducible without sorting millions of ids under the lock at every
	// tick (the sorted walk was 0.24 s of CPU at 1M blocks).
	var todo []*blockmap.Block
	maint := nn.anyInMaintenanceLocked()
	want := func(b *blockmap.Block) int {
		if maint {
			return nn.wantLiveLocked(b)
		}
		return b.Expected
	}
	nn.state.Blocks().Range(func(b *blockmap.Block) bool {
		if b.State != blockmap.Complete {
			return true // being written: its pipeline is in charge
		}
		st.blocks++
		// Replicas on decommissioning nodes do not count (inService), but
		// a block they alone hold is not missing: they are its source.
		c := b.Count(nn.inService)
		if c.Corrupt > 0 {
			st.corrupt++
		}
		if c.Live == 0 && b.Count(nn.isLive).Live == 0 {
			st.missing++
			return true
		}
		w := want(b)
		if c.Live < w {
			st.underReplicated++
		}
		if c.Live < w || c.Live > b.Expected || c.Corrupt > 0 || c.Writing > 0 {
			st.unsettled = true
			if act {
				todo = append(todo, b)
			}
		}
		return true
	})
	slices.SortFunc(todo, func(x, y *blockmap.Block) int { return cmp.Compare(x.ID, y.ID) })
	for _, b := range todo {
		c := b.Count(nn.inService)
		if c.Writing > 0 && nn.fileClosedLocked(b) {
			// Leftovers of a pipeline that failed before it finalized them:
			// nothing will finish them now. Delete them, and place new
			// copies next round (the nodes are free then).
			nn.dropRemnantsLocked(b)
			continue
		}
		pend := 0
		if p := nn.pending[b.ID]; p != nil {
			pend = len(p.targets)
		}
		// Replicas still being written on live nodes belong to an open
		// file (a closed file's were dropped above), and finishing them is
		// its pipelines' work. A multi-pipeline writer's earlier blocks are
		// complete (the first datanode has finalized them) while their
		// pipelines still forward; copying them now would double their
		// traffic on the very links the pipelines use. HDFS likewise
		// leaves the replication of an open file's blocks until it is
		// closed.
		coming := pend + c.Writing
		good := b.Good(nn.inService)
		switch {
		case c.Live+coming < want(b) && pend == 0:
			needs = append(needs, need{b: b, good: good, sources: b.Good(nn.isLive), priority: priorityOf(c.Live, want(b)), want: want(b)})
		case c.Live > b.Expected && pend == 0:
			if victim, ok := nn.moveVictimLocked(b.ID, good); ok {
				nn.removeMovedLocked(victim, fsstate.BlockRef{ID: b.ID, GS: b.GS, Len: b.NumBytes})
				if c.Live-1 > b.Expected {
					nn.removeExcessLocked(b, slices.DeleteFunc(good, func(id string) bool { return id == victim }), c.Live-1-b.Expected)
				}
				break
			}
			nn.removeExcessLocked(b, good, c.Live-b.Expected)
		}
		if c.Corrupt > 0 && c.Live >= b.Expected {
			nn.invalidateCorruptLocked(b) // enough good copies again
		}
	}
	sort.SliceStable(needs, func(i, j int) bool { return needs[i].priority < needs[j].priority })
	// Like HDFS's work multiplier: a bounded amount of work per round.
	budget := max(2*nn.liveCount(), 4)
	for _, n := range needs {
		if st.scheduled >= budget {
			break
		}
		if nn.scheduleLocked(n, now) {
			st.scheduled++
		}
	}
	nn.stats = st
}

func priorityOf(live, expected int) int {
	switch {
	case live == 1:
		return 0
	case live*3 < expected:
		return 1
	}
	return 2
}

// scheduleLocked queues one re-replication of n.b.
func (nn *NameNode) scheduleLocked(n need, now time.Time) bool {
	b := n.b
	var sources []string
	for _, id := range n.sources {
		if nn.nodes[id].streams < nn.cfg.MaxReplicationStreams {
			sources = append(sources, id)
		}
	}
	if len(sources) == 0 {
		return false // every holder is busy; next round
	}
	src := sources[nn.rng.Intn(len(sources))]
	exclude := map[string]bool{}
	for _, r := range b.ReplicaList() {
		exclude[r.Node] = true
	}
	nn.deleting.exclude(exclude, b.ID, now, nn.pendingTimeout())
	targets := nn.policy.ChooseTargets(nn.placementViewLocked(), placement.Request{
		Replicas: n.want - len(n.good), Replication: b.Expected, Chosen: n.good,
		Exclude: exclude, BlockSize: b.NumBytes,
	}, nn.rng)
	if len(targets) == 0 {
		// Nowhere to put a copy. If corrupt replicas hold the only free
		// nodes, delete them now so those nodes can take a good copy.
		if b.Count(nn.isLive).Corrupt > 0 {
			nn.invalidateCorruptLocked(b)
		}
		return false
	}
	item := &dfspb.TransferCommand_Item{Block: ext(b)}
	p := &pendingTransfer{source: src, targets: map[string]bool{}, deadline: now.Add(nn.pendingTimeout())}
	for _, t := range targets {
		item.Targets = append(item.Targets, nn.nodes[t.ID].snapshot())
		p.targets[t.ID] = true
		nn.scheduleSpaceLocked([]string{t.ID}, b.ID, b.NumBytes)
	}
	dn := nn.nodes[src]
	dn.transfers = append(dn.transfers, item)
	dn.streams++
	nn.pending[b.ID] = p
	nn.metrics.transfers.Inc()
	nn.logger.Info("re-replication scheduled", "block", b.ID, "live", len(n.good), "expected", b.Expected,
		"source", src, "targets", len(targets))
	return true
}

// removeExcessLocked deletes surplus replicas, keeping rack diversity:
// it takes from racks that hold two or more, preferring the datanode with
// the most blocks, then the one with the least free space.
func (nn *NameNode) removeExcessLocked(b *blockmap.Block, good []string, excess int) {
	holders := append([]string(nil), good...)
	for ; excess > 0 && len(holders) > 1; excess-- {
		perRack := map[string]int{}
		for _, id := range holders {
			perRack[nn.nodes[id].info.Rack]++
		}
		var pool []string
		for _, id := range holders {
			if perRack[nn.nodes[id].info.Rack] >= 2 {
				pool = append(pool, id)
			}
		}
		if len(pool) == 0 {
			pool = holders
		}
		sort.Slice(pool, func(i, j int) bool {
			bi, bj := nn.state.Blocks().NodeBlockCount(pool[i]), nn.state.Blocks().NodeBlockCount(pool[j])
			if bi != bj {
				return bi > bj
			}
			ri, rj := nn.nodes[pool[i]].info.Remaining, nn.nodes[pool[j]].info.Remaining
			if ri != rj {
				return ri < rj
			}
			return pool[i] < pool[j]
		})
		victim := pool[0]
		nn.state.Blocks().RemoveReplica(victim, b.ID)
		nn.invalidateLocked(victim, fsstate.BlockRef{ID: b.ID, GS: b.GS, Len: b.NumBytes})
		nn.logger.Info("excess replica deleted", "block", b.ID, "datanode", victim, "expected", b.Expected)
		for i, id := range holders {
			if id == victim {
				holders = append(holders[:i], holders[i+1:]...)
				break
			}
		}
	}
}

// invalidateCorruptLocked deletes the corrupt replicas of b.
func (nn *NameNode) invalidateCorruptLocked(b *blockmap.Block) {
	for _, r := range b.ReplicaList() {
		if r.Corrupt && nn.isLive(r.Node) {
			nn.state.Blocks().RemoveReplica(r.Node, b.ID)
			nn.invalidateLocked(r.Node, fsstate.BlockRef{ID: b.ID, GS: r.GS, Len: r.NumBytes})
			nn.logger.Info("corrupt replica deleted", "block", b.ID, "datanode", r.Node, "reason", r.Reason)
		}
	}
}

// fileClosedLocked reports whether b's file is closed (no writer).
func (nn *NameNode) fileClosedLocked(b *blockmap.Block) bool {
	f := nn.state.Tree().ByID(b.FileID)
	return f != nil && f.Writer() == nil
}

// dropRemnantsLocked deletes the unfinalized replicas of a complete block
// of a closed file.
func (nn *NameNode) dropRemnantsLocked(b *blockmap.Block) {
	for _, r := range b.ReplicaList() {
		if !r.Corrupt && r.State != blockmap.Finalized && nn.isLive(r.Node) {
			nn.state.Blocks().RemoveReplica(r.Node, b.ID)
			nn.invalidateLocked(r.Node, fsstate.BlockRef{ID: b.ID, GS: r.GS, Len: r.NumBytes})
			nn.logger.Info("unfinished replica of a closed file deleted", "block", b.ID, "datanode", r.Node, "length", r.NumBytes)
		}
	}
}
