package namenode

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// writeFile creates path and writes blocks of the given lengths, every
// replica finalized on every target, and completes the file.
func writeFile(t *testing.T, c *rpcClient, fc *fakeCluster, path string, repl uint32, lengths ...int64) []*dfspb.LocatedBlock {
	t.Helper()
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: "w-" + path, Replication: repl, CreateParent: true})
	if err != nil {
		t.Fatal(err)
	}
	fid := cr.GetStatus().GetFileId()
	var prev *dfspb.ExtendedBlock
	var out []*dfspb.LocatedBlock
	for _, n := range lengths {
		ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: path, ClientName: "w-" + path, FileId: fid, Previous: prev})
		if err != nil {
			t.Fatal(err)
		}
		prev = &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: ab.Block.Block.GenerationStamp, NumBytes: n}
		for _, id := range ids(ab.GetBlock()) {
			fc.node(id).receive(prev, dfspb.ReplicaState_FINALIZED)
		}
		out = append(out, ab.GetBlock())
	}
	r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: path, ClientName: "w-" + path, FileId: fid, Last: prev})
	if err != nil || !r.GetCompleted() {
		t.Fatalf("complete %s: %v %v", path, r, err)
	}
	return out
}

// openFile starts a namenode with n fake datanodes on one rack and has
// client "c1" create /f and allocate its first block.
func openFile(t *testing.T, n int) (*NameNode, *fakeCluster, *rpcClient, uint64, *dfspb.AddBlockResponse) {
	t.Helper()
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for i := 1; i <= n; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	fid := cr.GetStatus().GetFileId()
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: fid})
	if err != nil {
		t.Fatal(err)
	}
	return nn, fc, c, fid, ab
}

// holders lists the fake datanodes holding block id.
func (fc *fakeCluster) holders(id uint64) []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var out []string
	for nid, d := range fc.nodes {
		if d.has(id) {
			out = append(out, nid)
		}
	}
	sort.Strings(out)
	return out
}

func TestDeadDatanodeIsReplaced(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 4; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	b := writeFile(t, c, fc, "/f", 3, 1000)[0]
	victim := ids(b)[0]
	fc.node(victim).kill()
	waitFor(t, victim+" declared dead", func() bool {
		rep, _ := c.cp.GetDatanodeReport(c.ctx(), &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_DEAD})
		return len(rep.GetDatanodes()) == 1 && rep.GetDatanodes()[0].GetId() == victim
	})
	waitFor(t, "the block back at 3 live replicas", func() bool {
		n := 0
		for _, id := range fc.holders(b.Block.BlockId) {
			if id != victim {
				n++
			}
		}
		return n == 3
	})
	// The new replica's holder reports it with its next incremental block
	// report, after the copy: the namenode lists it a moment later.
	waitFor(t, "the namenode to list 3 live locations", func() bool {
		lbs, _ := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f"})
		if len(lbs.GetLocations().GetBlocks()) == 0 {
			return false
		}
		got := ids(lbs.GetLocations().GetBlocks()[0])
		return len(got) == 3 && !slices.Contains(got, victim)
	})
	// The dead node comes back with its old replica: one replica too many,
	// and one of the four is deleted.
	d := fc.node(victim)
	d.mu.Lock()
	d.stopped = false
	d.mu.Unlock()
	waitFor(t, "the excess replica deleted after the dead node returned", func() bool {
		rep, _ := c.cp.GetDatanodeReport(c.ctx(), &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
		return len(rep.GetDatanodes()) == 4 && len(fc.holders(b.Block.BlockId)) == 3
	})
}

func TestCorruptReplicaIsReplaced(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 4; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	b := writeFile(t, c, fc, "/f", 3, 4096)[0]
	bad := b.GetLocations()[1]
	if _, err := c.cp.ReportBadBlocks(c.ctx(), &dfspb.ReportBadBlocksRequest{Blocks: []*dfspb.LocatedBlock{{Block: b.Block, Locations: []*dfspb.DatanodeInfo{bad}}}}); err != nil {
		t.Fatal(err)
	}
	// Never served while good ones exist.
	lbs, _ := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f"})
	if got := ids(lbs.GetLocations().GetBlocks()[0]); len(got) != 2 || slices.Contains(got, bad.GetId()) || lbs.GetLocations().GetBlocks()[0].GetCorrupt() {
		t.Fatalf("locations with a corrupt replica: %v", got)
	}
	waitFor(t, "corrupt replica deleted and a new good one made", func() bool {
		h := fc.holders(b.Block.BlockId)
		return len(h) == 3 && !slices.Contains(h, bad.GetId())
	})
	fs, _ := c.cp.Fsck(c.ctx(), &dfspb.FsckRequest{Path: "/f"})
	if !fs.GetHealthy() || len(fs.GetFiles()[0].GetBlocks()[0].GetLiveReplicas()) != 3 {
		t.Errorf("fsck after repair: %+v", fs)
	}
}

func TestCorruptReplicaWithNoSpareNode(t *testing.T) {
	// Three nodes, replication 3: the corrupt replica's node is the only
	// place for a new copy, so the corrupt one is deleted first.
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	b := writeFile(t, c, fc, "/f", 3, 4096)[0]
	bad := b.GetLocations()[0].GetId()
	if _, err := fc.node(bad).rpc.dp.ReportBadBlocks(c.ctx(), &dfspb.DatanodeReportBadBlocksRequest{DatanodeId: bad, Blocks: []*dfspb.ExtendedBlock{b.Block}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the corrupt replica deleted", func() bool {
		d := fc.node(bad)
		d.mu.Lock()
		defer d.mu.Unlock()
		return slices.ContainsFunc(d.commands, func(s string) bool { return strings.HasPrefix(s, "invalidate") })
	})
	waitFor(t, "three good replicas again", func() bool { return len(fc.holders(b.Block.BlockId)) == 3 })
}

func TestSetReplicationDownAndUp(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 4; i++ {
		fc.add(fmt.Sprintf("dn%d", i), fmt.Sprintf("/r%d", i%2))
	}
	c := dial(t, nn.Addr(), "hdfs")
	b := writeFile(t, c, fc, "/f", 3, 100)[0]
	if _, err := c.cp.SetReplication(c.ctx(), &dfspb.SetReplicationRequest{Path: "/f", Replication: 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two excess replicas deleted", func() bool { return len(fc.holders(b.Block.BlockId)) == 1 })
	if _, err := c.cp.SetReplication(c.ctx(), &dfspb.SetReplicationRequest{Path: "/f", Replication: 4}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replicated to all four", func() bool { return len(fc.holders(b.Block.BlockId)) == 4 })
}

// testLeaseConfig makes leases expire fast.
func testLeaseConfig(t *testing.T) Config {
	cfg := testConfig(t)
	cfg.LeaseSoftLimit = 200 * time.Millisecond
	cfg.LeaseHardLimit = 400 * time.Millisecond
	return cfg
}

func TestLeaseRecoveryClosesAtLastLength(t *testing.T) {
	nn := startNN(t, testLeaseConfig(t))
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "dying"})
	fid := cr.GetStatus().GetFileId()
	ab, _ := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "dying", FileId: fid})
	first := &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: ab.Block.Block.GenerationStamp, NumBytes: 1 << 20}
	for _, id := range ids(ab.GetBlock()) {
		fc.node(id).receive(first, dfspb.ReplicaState_FINALIZED)
	}
	ab2, _ := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "dying", FileId: fid, Previous: first})
	// The second block reached the replicas unevenly before the client died.
	for i, id := range ids(ab2.GetBlock()) {
		eb := &dfspb.ExtendedBlock{BlockId: ab2.Block.Block.BlockId, GenerationStamp: ab2.Block.Block.GenerationStamp, NumBytes: int64(3000 + 1000*i)}
		fc.node(id).receive(eb, dfspb.ReplicaState_RBW)
	}
	// Half-written file never looks complete.
	fi, _ := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/f"})
	if !fi.GetStatus().GetUnderConstruction() {
		t.Fatal("open file does not say under construction")
	}
	waitFor(t, "the file recovered and closed", func() bool {
		fi, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/f"})
		return err == nil && !fi.GetStatus().GetUnderConstruction()
	})
	fi, _ = c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/f"})
	if got := fi.GetStatus().GetLength(); got != 1<<20+3000 {
		t.Errorf("recovered length %d, want %d (first block + shortest replica)", got, 1<<20+3000)
	}
	// The writer is gone for good: its next calls are refused, and a late
	// complete is not taken for its own.
	_, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "dying", FileId: fid})
	wantErr(t, err, codes.FailedPrecondition, "file is not open for writing")
	late := &dfspb.ExtendedBlock{BlockId: ab2.Block.Block.BlockId, GenerationStamp: ab2.Block.Block.GenerationStamp, NumBytes: 5000}
	_, err = c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "dying", FileId: fid, Last: late})
	wantErr(t, err, codes.FailedPrecondition, "complete /f: file is not open for writing")
}

func TestLeaseRecoveryDropsBlockNobodyHas(t *testing.T) {
	nn := startNN(t, testLeaseConfig(t))
	fc := newFakeCluster(t, nn)
	fc.add("dn1", "/r")
	c := dial(t, nn.Addr(), "hdfs")
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "dying", Replication: 1})
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "dying", FileId: cr.GetStatus().GetFileId()})
	if err != nil {
		t.Fatal(err)
	}
	// The only target dies before receiving anything.
	fc.node(ids(ab.GetBlock())[0]).kill()
	waitFor(t, "the file closed without its unwritten block", func() bool {
		fi, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/f"})
		return err == nil && !fi.GetStatus().GetUnderConstruction()
	})
	lbs, _ := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f"})
	if n := len(lbs.GetLocations().GetBlocks()); n != 0 || lbs.GetLocations().GetFileLength() != 0 {
		t.Errorf("recovered file has %d blocks, length %d", n, lbs.GetLocations().GetFileLength())
	}
}

func TestSoftLimitLetsAnotherWriterTakeOver(t *testing.T) {
	cfg := testLeaseConfig(t)
	cfg.LeaseHardLimit = time.Hour // only the soft limit matters here
	// The two refusals below must come before the soft limit: 200 ms
	// was not always enough under -race.
	cfg.LeaseSoftLimit = time.Second
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "first"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "second", Overwrite: true})
	wantErr(t, err, codes.FailedPrecondition, "create /f: file is being written by client first")
	_, err = c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "first", Overwrite: true})
	wantErr(t, err, codes.FailedPrecondition, "this client (first) is already writing the file")
	waitFor(t, "second writer takes over after the soft limit", func() bool {
		_, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "second", Overwrite: true})
		return err == nil
	})
	_, err = c.cp.RenewLease(c.ctx(), &dfspb.RenewLeaseRequest{ClientName: "second"})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRetriedAddBlockAndAbandon(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	fc.add("dn1", "/r")
	c := dial(t, nn.Addr(), "hdfs")
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1", Replication: 1})
	req := &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()}
	a1, err := c.cp.AddBlock(c.ctx(), req)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := c.cp.AddBlock(c.ctx(), req) // the answer was lost; same block again
	if err != nil || a2.Block.Block.BlockId != a1.Block.Block.BlockId {
		t.Fatalf("retried addBlock: %v %v", a2, err)
	}
	if _, err := c.cp.AbandonBlock(c.ctx(), &dfspb.AbandonBlockRequest{Block: a1.Block.Block, Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()}); err != nil {
		t.Fatal(err)
	}
	a3, err := c.cp.AddBlock(c.ctx(), req)
	if err != nil || a3.Block.Block.BlockId == a1.Block.Block.BlockId {
		t.Fatalf("addBlock after abandon: %v %v", a3, err)
	}
	_, err = c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c2", FileId: cr.GetStatus().GetFileId()})
	wantErr(t, err, codes.FailedPrecondition, "lease is held by client c1, not c2")
}

func TestPipelineRecoveryStamps(t *testing.T) {
	_, fc, c, fid, ab := openFile(t, 4)
	pipe := ids(ab.GetBlock())
	// The middle node fails: new stamp, a replacement, new pipeline.
	up, err := c.cp.UpdateBlockForPipeline(c.ctx(), &dfspb.UpdateBlockForPipelineRequest{Block: ab.Block.Block, ClientName: "c1"})
	if err != nil || up.Block.Block.GenerationStamp <= ab.Block.Block.GenerationStamp {
		t.Fatalf("updateBlockForPipeline: %v %v", up, err)
	}
	add, err := c.cp.GetAdditionalDatanode(c.ctx(), &dfspb.GetAdditionalDatanodeRequest{Path: "/f", Block: ab.Block.Block,
		Existing: []string{pipe[0], pipe[2]}, Exclude: []string{pipe[1]}, NumAdditional: 1, ClientName: "c1", FileId: fid})
	if err != nil {
		t.Fatal(err)
	}
	newPipe := ids(add.GetBlock())
	if len(newPipe) != 3 || slices.Contains(newPipe, pipe[1]) {
		t.Fatalf("additional datanode: %v (failed %s)", newPipe, pipe[1])
	}
	nb := &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: up.Block.Block.GenerationStamp, NumBytes: 512}
	_, err = c.cp.UpdatePipeline(c.ctx(), &dfspb.UpdatePipelineRequest{ClientName: "c1", OldBlock: ab.Block.Block,
		NewBlock: &dfspb.ExtendedBlock{BlockId: nb.BlockId, GenerationStamp: nb.GenerationStamp + 100}, NewNodes: newPipe})
	wantErr(t, err, codes.FailedPrecondition, "was not issued")
	if _, err := c.cp.UpdatePipeline(c.ctx(), &dfspb.UpdatePipelineRequest{ClientName: "c1", OldBlock: ab.Block.Block, NewBlock: nb, NewNodes: newPipe}); err != nil {
		t.Fatal(err)
	}
	// Replicas with the old stamp (the failed node's) do not count.
	final := &dfspb.ExtendedBlock{BlockId: nb.BlockId, GenerationStamp: nb.GenerationStamp, NumBytes: 2048}
	fc.node(pipe[1]).receive(&dfspb.ExtendedBlock{BlockId: nb.BlockId, GenerationStamp: ab.Block.Block.GenerationStamp, NumBytes: 2048}, dfspb.ReplicaState_FINALIZED)
	r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: final})
	if err != nil || r.GetCompleted() {
		t.Fatalf("complete with only a stale replica: %v %v", r, err)
	}
	for _, id := range newPipe {
		fc.node(id).receive(final, dfspb.ReplicaState_FINALIZED)
	}
	r, err = c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: final})
	if err != nil || !r.GetCompleted() {
		t.Fatalf("complete: %v %v", r, err)
	}
	waitFor(t, "the stale replica deleted", func() bool { return !fc.node(pipe[1]).has(nb.BlockId) })
}

func TestSpeedRecordsDrivePlacement(t *testing.T) {
	cfg := testConfig(t)
	cfg.Placement = "speedaware"
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 6; i++ {
		fc.add(fmt.Sprintf("dn%d", i), fmt.Sprintf("/rack-%d", i%2))
	}
	c := dial(t, nn.Addr(), "hdfs")
	// Six nodes, replication 3: n = 2; dn5 and dn2 are the fastest.
	_, err := c.cp.ClientHeartbeat(c.ctx(), &dfspb.ClientHeartbeatRequest{ClientName: "fast", Samples: []*dfspb.SpeedSample{
		{DatanodeId: "id-dn5", Bytes: 100 << 20, Nanos: 1e9}, {DatanodeId: "id-dn2", Bytes: 90 << 20, Nanos: 1e9},
		{DatanodeId: "id-dn1", Bytes: 10 << 20, Nanos: 1e9}, {DatanodeId: "id-dn3", Bytes: 1 << 20, Nanos: 1e9},
		{DatanodeId: "id-dn4", Bytes: 2 << 20, Nanos: 1e9}, {DatanodeId: "id-dn6", Bytes: 3 << 20, Nanos: 1e9},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := c.cp.GetSpeeds(c.ctx(), &dfspb.GetSpeedsRequest{ClientName: "fast"})
	if err != nil || len(sp.GetRecords()) != 6 || sp.GetRecords()[0].GetDatanodeId() != "id-dn5" {
		t.Fatalf("speeds %v %v", sp, err)
	}
	firsts := map[string]int{}
	for i := 0; i < 20; i++ {
		path := fmt.Sprintf("/f%d", i)
		cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: "fast"})
		ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: path, ClientName: "fast", FileId: cr.GetStatus().GetFileId()})
		if err != nil {
			t.Fatal(err)
		}
		firsts[ids(ab.GetBlock())[0]]++
		if l := ab.GetBlock().GetLocations(); l[0].GetRack() == l[1].GetRack() || l[1].GetRack() != l[2].GetRack() {
			t.Errorf("racks of %v: second must be off the first's rack, third on the second's", ids(ab.GetBlock()))
		}
	}
	for dn := range firsts {
		if dn != "id-dn5" && dn != "id-dn2" {
			t.Errorf("first targets %v; only the top two (dn5, dn2) allowed", firsts)
		}
	}
	// With dn5 busy in another of the client's pipelines, dn2 and the next
	// fastest take its place.
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/busy", ClientName: "fast"})
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/busy", ClientName: "fast", FileId: cr.GetStatus().GetFileId(), BusyNodes: []string{"id-dn5"}})
	if err != nil || slices.Contains(ids(ab.GetBlock()), "id-dn5") {
		t.Fatalf("addBlock with dn5 busy: %v %v", ids(ab.GetBlock()), err)
	}
}

func TestUnfinishedReplicaOfClosedFileIsReplaced(t *testing.T) {
	_, fc, c, fid, ab := openFile(t, 3)
	pipe := ids(ab.GetBlock())
	final := &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: ab.Block.Block.GenerationStamp, NumBytes: 4096}
	// The last node failed mid-block: it holds a partial replica being
	// written forever; the client finished on the other two.
	fc.node(pipe[2]).receive(&dfspb.ExtendedBlock{BlockId: final.BlockId, GenerationStamp: final.GenerationStamp, NumBytes: 1024}, dfspb.ReplicaState_RBW)
	fc.node(pipe[0]).receive(final, dfspb.ReplicaState_FINALIZED)
	fc.node(pipe[1]).receive(final, dfspb.ReplicaState_FINALIZED)
	if r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: final}); err != nil || !r.GetCompleted() {
		t.Fatalf("complete: %v %v", r, err)
	}
	waitFor(t, "a finalized copy on the node that had the partial one", func() bool {
		d := fc.node(pipe[2])
		d.mu.Lock()
		defer d.mu.Unlock()
		r := d.replicas[final.BlockId]
		return r != nil && r.GetState() == dfspb.ReplicaState_FINALIZED && r.GetBlock().GetNumBytes() == 4096
	})
}

// A node asked to delete a block's remnant gets no new copy of that block
// until it has reported the remnant deleted: the deletion names the block
// as the copy would be named, and would delete the copy too.
func TestNoCopyWhereADeletionIsPending(t *testing.T) {
	nn, fc, c, fid, ab := openFile(t, 3)
	pipe := ids(ab.GetBlock())
	final := &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: ab.Block.Block.GenerationStamp, NumBytes: 4096}
	slow := fc.node(pipe[2])
	slow.mu.Lock()
	slow.holdDeletes = true
	slow.mu.Unlock()
	slow.receive(&dfspb.ExtendedBlock{BlockId: final.BlockId, GenerationStamp: final.GenerationStamp, NumBytes: 1024}, dfspb.ReplicaState_RBW)
	fc.node(pipe[0]).receive(final, dfspb.ReplicaState_FINALIZED)
	fc.node(pipe[1]).receive(final, dfspb.ReplicaState_FINALIZED)
	if r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: final}); err != nil || !r.GetCompleted() {
		t.Fatalf("complete: %v %v", r, err)
	}
	waitFor(t, "the remnant's deletion to reach its node", func() bool {
		slow.mu.Lock()
		defer slow.mu.Unlock()
		return len(slow.held) > 0
	})
	// Scans (the monitor's own every 100 ms, and these) must leave the
	// block alone: its only free node is still deleting it.
	for range 5 {
		nn.replicationTick()
		nn.mu.RLock()
		p := nn.pending[final.BlockId]
		targeted := p != nil && p.targets[pipe[2]]
		nn.mu.RUnlock()
		slow.mu.Lock()
		r := slow.replicas[final.BlockId]
		slow.mu.Unlock()
		if targeted || r.GetState() == dfspb.ReplicaState_FINALIZED {
			t.Fatalf("a copy was sent to %s while its deletion of the remnant was in flight (pending target %v, its replica %v)", pipe[2], targeted, r)
		}
	}
	slow.releaseDeletes()
	waitFor(t, "a finalized copy on the node once its remnant was deleted", func() bool {
		slow.mu.Lock()
		defer slow.mu.Unlock()
		r := slow.replicas[final.BlockId]
		return r != nil && r.GetState() == dfspb.ReplicaState_FINALIZED && r.GetBlock().GetNumBytes() == 4096
	})
}

func TestLostTransferIsRetried(t *testing.T) {
	cfg := testConfig(t)
	cfg.ReplicationInterval = 20 * time.Millisecond // pending timeout 10 x 100ms heartbeat
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 2; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	b := writeFile(t, c, fc, "/f", 1, 100)[0]
	src := ids(b)[0]
	fc.node(src).mu.Lock()
	fc.node(src).lose = 1
	fc.node(src).mu.Unlock()
	if _, err := c.cp.SetReplication(c.ctx(), &dfspb.SetReplicationRequest{Path: "/f", Replication: 2}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the block on both nodes after a lost transfer", func() bool { return len(fc.holders(b.Block.BlockId)) == 2 })
	d := fc.node(src)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.commands, "transfer lost") || !slices.ContainsFunc(d.commands, func(s string) bool { return strings.HasPrefix(s, "transfer 1") }) {
		t.Errorf("commands on the source: %v; want a lost transfer and a retried one", d.commands)
	}
}

// A multi-pipeline writer's earlier block is complete as soon as its first
// datanode finalized it, while the rest of its pipeline still receives it.
// The replication monitor must leave it to the pipeline, and step in only
// when a node of that pipeline dies.
func TestOpenFilesPipelineReplicasAreNotCopied(t *testing.T) {
	nn, fc, c, fid, ab := openFile(t, 6)
	pipe := ids(ab.GetBlock())
	b1 := &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: ab.Block.Block.GenerationStamp, NumBytes: 4096}
	fc.node(pipe[0]).receive(b1, dfspb.ReplicaState_FINALIZED) // FNFA: the first node has it all
	fc.node(pipe[1]).receive(&dfspb.ExtendedBlock{BlockId: b1.BlockId, GenerationStamp: b1.GenerationStamp, NumBytes: 1024}, dfspb.ReplicaState_RBW)
	fc.node(pipe[2]).receive(&dfspb.ExtendedBlock{BlockId: b1.BlockId, GenerationStamp: b1.GenerationStamp, NumBytes: 512}, dfspb.ReplicaState_RBW)
	// The next block commits block 1, which is then complete with one
	// finalized replica of three.
	if _, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: fid, Previous: b1, BusyNodes: pipe}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a replication scan that saw block 1 complete and under-replicated", func() bool {
		nn.mu.Lock()
		defer nn.mu.Unlock()
		return nn.stats.blocks >= 1 && nn.stats.underReplicated >= 1
	})
	nn.mu.Lock()
	scheduled := nn.stats.scheduled + len(nn.pending)
	nn.mu.Unlock()
	if scheduled > 0 || len(fc.holders(b1.BlockId)) != 3 {
		t.Fatalf("block 1 copied while its pipeline still writes it: %d scheduled, holders %v", scheduled, fc.holders(b1.BlockId))
	}
	// A node of the pipeline dies: now the namenode makes up for it.
	fc.node(pipe[1]).kill()
	waitFor(t, "block 1 copied to a fourth node after "+pipe[1]+" died", func() bool {
		for _, id := range fc.holders(b1.BlockId) {
			if !slices.Contains(pipe, id) {
				return true
			}
		}
		return false
	})
}
