package namenode

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
)

// A datanode reports a replica to every member at once, and a standby can
// hear of it before it applies the edit that made the block (it applies an
// entry only once told it is committed). The standby holds the report and
// applies it with the edit; before, it refused the replica as an orphan
// and, once it took over, answered reads of the block with "no live
// replica" until the datanode's next full report. On taking over, a held
// report of a block the group never made is invalidated, as the active
// does with any orphan.
func TestHAStandbyHoldsReportsAheadOfItsLog(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	d := g.datanodeOnAll(t)
	info, dn := d.info, d.rpc
	c := g.cli[l]
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1", Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	add := func(prev *dfspb.ExtendedBlock) *dfspb.ExtendedBlock {
		t.Helper()
		r, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId(), Previous: prev})
		if err != nil {
			t.Fatalf("addBlock: %v", err)
		}
		return r.GetBlock().GetBlock()
	}
	b1 := add(nil)
	standbys := []int{(l + 1) % 3, (l + 2) % 3}
	for _, s := range standbys {
		waitFor(t, fmt.Sprintf("member %d to apply block %d", s, b1.GetBlockId()), func() bool {
			g.nns[s].mu.RLock()
			defer g.nns[s].mu.RUnlock()
			return g.nns[s].state.Blocks().Get(b1.GetBlockId()) != nil
		})
	}
	// The active hands out ids and stamps one after another: the next
	// block is predictable, and reported to the standbys before it exists.
	next := &dfspb.ExtendedBlock{BlockId: b1.GetBlockId() + 1, GenerationStamp: b1.GetGenerationStamp() + 1}
	bogus := &dfspb.ExtendedBlock{BlockId: 1 << 41, GenerationStamp: 1}
	for _, s := range standbys {
		if _, err := dn[s].dp.BlockReceivedAndDeleted(dn[s].ctx(), &dfspb.BlockReceivedAndDeletedRequest{DatanodeId: info.Id, Blocks: []*dfspb.ReceivedDeletedBlock{
			{Block: next, Status: dfspb.ReceivedStatus_RECEIVING},
			{Block: bogus, Status: dfspb.ReceivedStatus_RECEIVED},
		}}); err != nil {
			t.Fatalf("incremental report to standby %d: %v", s, err)
		}
		g.nns[s].mu.RLock()
		held := g.nns[s].early.n
		g.nns[s].mu.RUnlock()
		if held != 2 {
			t.Fatalf("standby %d holds %d reports of blocks it does not know yet, want 2", s, held)
		}
	}
	b1.NumBytes = 0
	if b2 := add(b1); b2.GetBlockId() != next.GetBlockId() || b2.GetGenerationStamp() != next.GetGenerationStamp() {
		t.Fatalf("the active handed out block %d at stamp %d; the test predicted %d at %d", b2.GetBlockId(), b2.GetGenerationStamp(), next.GetBlockId(), next.GetGenerationStamp())
	}
	// standbysKnow waits until every standby knows that dn1 holds b.
	standbysKnow := func(b *dfspb.ExtendedBlock, why string) {
		t.Helper()
		for _, s := range standbys {
			waitFor(t, fmt.Sprintf("standby %d to know that dn1 holds block %d, %s", s, b.GetBlockId(), why), func() bool {
				nn := g.nns[s]
				nn.mu.RLock()
				defer nn.mu.RUnlock()
				got := nn.state.Blocks().Get(b.GetBlockId())
				return got != nil && slices.ContainsFunc(got.ReplicaList(), func(r blockmap.Replica) bool { return r.Node == info.Id })
			})
		}
	}
	standbysKnow(next, "reported before its edit")

	// A full report can come early too (a member restarted after a kill
	// catches up on the log while its datanodes report to it).
	next2 := &dfspb.ExtendedBlock{BlockId: next.GetBlockId() + 1, GenerationStamp: next.GetGenerationStamp() + 1}
	for _, s := range standbys {
		if _, err := dn[s].dp.BlockReport(dn[s].ctx(), &dfspb.BlockReportRequest{DatanodeId: info.Id, Blocks: []*dfspb.ReportedBlock{
			{Block: next, State: dfspb.ReplicaState_RBW}, {Block: next2, State: dfspb.ReplicaState_RBW}, {Block: bogus, State: dfspb.ReplicaState_FINALIZED},
		}}); err != nil {
			t.Fatalf("full report to standby %d: %v", s, err)
		}
	}
	if b3 := add(&dfspb.ExtendedBlock{BlockId: next.GetBlockId(), GenerationStamp: next.GetGenerationStamp()}); b3.GetBlockId() != next2.GetBlockId() {
		t.Fatalf("the active handed out block %d; the test predicted %d", b3.GetBlockId(), next2.GetBlockId())
	}
	standbysKnow(next2, "named in a full report before its edit")

	// The active goes; the member that takes over invalidates the block
	// nobody made and holds nothing.
	g.nns[l].Close()
	nl := g.active(map[int]bool{l: true})
	g.nns[nl].mu.RLock()
	held := g.nns[nl].early.n
	g.nns[nl].mu.RUnlock()
	if held != 0 {
		t.Fatalf("the new active still holds %d early reports", held)
	}
	waitFor(t, fmt.Sprintf("the new active to tell dn1 to delete block %d, which nobody made", bogus.GetBlockId()), func() bool {
		return slices.Contains(d.invalidated(nl), bogus.GetBlockId())
	})
	for i := range g.nns {
		ids := d.invalidated(i)
		if slices.Contains(ids, next.GetBlockId()) {
			t.Fatalf("member %d told dn1 to delete block %d, a block of /f", i, next.GetBlockId())
		}
	}
}

// haDatanode is one datanode registered with every member of a group and
// heartbeating to each, as a datanode of an HA group does; it notes the
// blocks each member tells it to delete.
type haDatanode struct {
	info *dfspb.DatanodeInfo
	rpc  map[int]*rpcClient
	mu   sync.Mutex
	inv  map[int][]uint64
}

func (g *haGroup) datanodeOnAll(t *testing.T) *haDatanode {
	t.Helper()
	d := &haDatanode{info: &dfspb.DatanodeInfo{Id: "id-dn1", Hostname: "dn1", IpAddr: "10.0.0.1", DataPort: 20000, IpcPort: 20001, Capacity: 100 << 30, Remaining: 90 << 30},
		rpc: map[int]*rpcClient{}, inv: map[int][]uint64{}}
	for i := range g.nns {
		d.rpc[i] = g.dial(g.cfgs[i].RPCAddr, "dn")
		if _, err := d.rpc[i].dp.RegisterDatanode(d.rpc[i].ctx(), &dfspb.RegisterDatanodeRequest{Datanode: d.info}); err != nil {
			t.Fatalf("register with member %d: %v", i, err)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for i, c := range d.rpc {
				resp, err := c.dp.SendHeartbeat(c.ctx(), &dfspb.HeartbeatRequest{DatanodeId: d.info.Id, Capacity: d.info.Capacity, Remaining: d.info.Remaining})
				if err != nil {
					continue
				}
				for _, cmd := range resp.GetCommands() {
					d.mu.Lock()
					for _, b := range cmd.GetInvalidate().GetBlocks() {
						d.inv[i] = append(d.inv[i], b.GetBlockId())
					}
					d.mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return d
}

func (d *haDatanode) invalidated(member int) []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]uint64(nil), d.inv[member]...)
}

// The write path's calls repeated on a new active after the one that
// applied them died with the answer (the client's failover repeats
// them): addBlock hands out the same block with targets of its own
// choice (the edit log does not carry them), and updatePipeline to the
// stamp the block already has succeeds; a stamp nobody issued is still
// refused.
func TestHAWriteCallsRepeatOnTheNewActive(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	g.datanodeOnAll(t)
	c := g.cli[l]
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1", Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	addReq := &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()}
	a1, err := c.cp.AddBlock(c.ctx(), addReq)
	if err != nil || len(a1.GetBlock().GetLocations()) != 1 {
		t.Fatalf("addBlock on the active: %v, %v", a1, err)
	}
	b := a1.GetBlock().GetBlock()
	ub, err := c.cp.UpdateBlockForPipeline(c.ctx(), &dfspb.UpdateBlockForPipelineRequest{Block: b, ClientName: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	nb := &dfspb.ExtendedBlock{BlockId: b.GetBlockId(), GenerationStamp: ub.GetBlock().GetBlock().GetGenerationStamp()}
	upReq := &dfspb.UpdatePipelineRequest{ClientName: "c1", OldBlock: b, NewBlock: nb, NewNodes: []string{"id-dn1"}}
	if _, err := c.cp.UpdatePipeline(c.ctx(), upReq); err != nil {
		t.Fatal(err)
	}
	for i := range g.nns {
		waitFor(t, fmt.Sprintf("member %d to apply the pipeline update", i), func() bool {
			g.nns[i].mu.RLock()
			defer g.nns[i].mu.RUnlock()
			got := g.nns[i].state.Blocks().Get(b.GetBlockId())
			return got != nil && got.GS == nb.GetGenerationStamp()
		})
	}
	g.nns[l].Close()
	nl := g.active(map[int]bool{l: true})
	c = g.cli[nl]
	a2, err := c.cp.AddBlock(c.ctx(), addReq)
	if err != nil || a2.GetBlock().GetBlock().GetBlockId() != b.GetBlockId() || len(a2.GetBlock().GetLocations()) != 1 {
		t.Fatalf("the addBlock repeated on the new active: %v, %v; want block %d again with a target", a2, err, b.GetBlockId())
	}
	if _, err := c.cp.UpdatePipeline(c.ctx(), upReq); err != nil {
		t.Fatalf("the updatePipeline repeated on the new active: %v", err)
	}
	bad := &dfspb.UpdatePipelineRequest{ClientName: "c1", OldBlock: nb, NewNodes: []string{"id-dn1"},
		NewBlock: &dfspb.ExtendedBlock{BlockId: b.GetBlockId(), GenerationStamp: nb.GetGenerationStamp() + 100}}
	if _, err := c.cp.UpdatePipeline(c.ctx(), bad); err == nil {
		t.Fatal("updatePipeline to a stamp never issued succeeded on the new active")
	}
}
