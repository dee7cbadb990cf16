package datanode

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/blocktoken"
	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

const pkt = datatransfer.DefaultPacketDataLen

// killMidWrite writes through dns, kills dns[victim] after some packets are
// acked and returns the pipeline, the data and the bytes acked by everyone.
func killMidWrite(t *testing.T, id uint64, victim int, dns ...*DataNode) (*pipeline, []byte, int64) {
	t.Helper()
	data := randomData(40*pkt, id)
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE}
	p, resp := openPipeline(t, op, dns...)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	if err := p.send(data[:16*pkt]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first 16 packets acked by the whole pipeline", func() bool { return p.ackedThrough() == 15 })
	dns[victim].Kill()
	_ = p.send(data[16*pkt:]) // may fail once the first node gives up
	acks, _ := p.result()
	last := acks[len(acks)-1]
	if got := last.FirstFailed(); got != victim {
		t.Fatalf("error ack %+v names pipeline position %d, want %d (the killed node)", last, got, victim)
	}
	return p, data, (p.ackedThrough() + 1) * pkt
}

func TestNodeKilledMidWrite(t *testing.T) {
	for _, victim := range []int{1, 2} {
		nn := startFakeNameNode(t)
		dn1, _ := startDataNode(t, nn, "", nil)
		dn2, _ := startDataNode(t, nn, "", nil)
		dn3, _ := startDataNode(t, nn, "", nil)
		dns := []*DataNode{dn1, dn2, dn3}
		_, _, acked := killMidWrite(t, uint64(100+victim), victim, dns...)
		// The survivors keep what they stored as replicas being written.
		for i, dn := range dns {
			if i == victim {
				continue
			}
			waitFor(t, "survivor's writer closed", func() bool {
				r, ok := dn.store.Get(uint64(100 + victim))
				return ok && r.State == store.RBW && r.Length >= acked
			})
		}
	}
}

// TestPipelineRecoveryWithReplacement plays the client's side of HDFS
// pipeline recovery (seed 000 Alg. 3): after the middle node dies, copy the
// acknowledged prefix from a survivor to a replacement (TRANSFER_BLOCK →
// TRANSFER_RBW), reopen the pipeline with PIPELINE_SETUP_STREAMING_RECOVERY
// under a new generation stamp, and resend the unacknowledged packets.
func TestPipelineRecoveryWithReplacement(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	dn4, log4 := startDataNode(t, nn, "", nil)
	const id = 110
	_, data, acked := killMidWrite(t, id, 1, dn1, dn2, dn3)

	// Copy the acked prefix from dn1 to the replacement dn4.
	c, err := dialRaw(dn1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = datatransfer.WriteOp(c, &dfspb.TransferBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1, NumBytes: acked},
		Targets: []*dfspb.DatanodeInfo{dn4.Info()}, ClientName: "test-client", Token: testToken(id, 1, blocktoken.Copy, dn4.Info())})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := datatransfer.ReadResponse(c)
	if err != nil || datatransfer.ResponseError(resp) != nil {
		t.Fatalf("TRANSFER_BLOCK: %v %v", resp, err)
	}
	if r, ok := dn4.store.Get(id); !ok || r.State != store.RBW || r.Length != acked {
		t.Fatalf("replacement replica %+v, want RBW of %d bytes", r, acked)
	}
	if line := findLogLine(t, log4.String(), "block received"); line["stage"] != "TRANSFER_RBW" {
		t.Fatalf("replacement's receive line: %v", line)
	}

	// Resume dn1 → dn4 → dn3 under gs 2 from the acked length.
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1, NumBytes: acked},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, LatestGs: 2}
	p, resp := openPipeline(t, op, dn1, dn4, dn3)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatalf("recovery pipeline refused: %v", err)
	}
	if err := p.send(data[acked:]); err != nil {
		t.Fatal(err)
	}
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 3)
	for _, dn := range []*DataNode{dn1, dn4, dn3} {
		mustRead(t, dn, id, 2, data)
		waitFor(t, "RECEIVED with the new generation stamp", func() bool {
			return nn.hasReceived(dn.ID(), id, 2, dfspb.ReceivedStatus_RECEIVED)
		})
	}
	// The old generation stamp is gone.
	if _, err := readBlock(dn1.DataAddr(), id, 3, 0, 1); err == nil {
		t.Fatal("read with a future generation stamp succeeded")
	}
}

func TestReReplicationAndInvalidate(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	data := randomData(2*pkt+100, 9)
	writeBlock(t, 200, 3, data, dn1)
	blk := &dfspb.ExtendedBlock{BlockId: 200, GenerationStamp: 3, NumBytes: int64(len(data))}
	nn.command(dn1.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Transfer{Transfer: &dfspb.TransferCommand{
		Items: []*dfspb.TransferCommand_Item{{Block: blk, Targets: []*dfspb.DatanodeInfo{dn2.Info(), dn3.Info()}}}}}})
	for _, dn := range []*DataNode{dn2, dn3} {
		waitFor(t, "re-replicated block reported RECEIVED", func() bool {
			return nn.hasReceived(dn.ID(), 200, 3, dfspb.ReceivedStatus_RECEIVED)
		})
		mustRead(t, dn, 200, 3, data)
	}
	nn.command(dn2.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{Invalidate: &dfspb.InvalidateCommand{Blocks: []*dfspb.ExtendedBlock{blk}}}})
	waitFor(t, "deleted block reported DELETED", func() bool {
		return nn.hasReceived(dn2.ID(), 200, 3, dfspb.ReceivedStatus_DELETED)
	})
	if _, err := readBlock(dn2.DataAddr(), 200, 3, 0, 1); err == nil {
		t.Fatal("deleted replica still served")
	}
	if _, err := os.Stat(filepath.Join(dn2.cfg.DataDir, "current", "finalized", "blk_200")); !os.IsNotExist(err) {
		t.Fatalf("block file still on disk: %v", err)
	}
}

// A datanode may keep a finalized replica of an older generation stamp: it
// finalized the block just as the node upstream died, and the client's
// recovery went on without it. The namenode's copy at the new stamp must
// replace that stale replica, as in HDFS, not be refused for good.
func TestReReplicationReplacesStaleFinalizedReplica(t *testing.T) {
	nn := startFakeNameNode(t)
	src, _ := startDataNode(t, nn, "", nil)
	stale, _ := startDataNode(t, nn, "", nil)
	old := randomData(pkt+10, 21)
	writeBlock(t, 210, 1000, old, stale)
	data := randomData(2*pkt+100, 22)
	writeBlock(t, 210, 1002, data, src)
	blk := &dfspb.ExtendedBlock{BlockId: 210, GenerationStamp: 1002, NumBytes: int64(len(data))}
	nn.command(src.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Transfer{Transfer: &dfspb.TransferCommand{
		Items: []*dfspb.TransferCommand_Item{{Block: blk, Targets: []*dfspb.DatanodeInfo{stale.Info()}}}}}})
	waitFor(t, "the copy at the new stamp reported RECEIVED", func() bool {
		return nn.hasReceived(stale.ID(), 210, 1002, dfspb.ReceivedStatus_RECEIVED)
	})
	mustRead(t, stale, 210, 1002, data) // the whole new block, not the stale bytes
}

func flipByte(t *testing.T, dn *DataNode, id uint64, off int64) {
	t.Helper()
	path := filepath.Join(dn.cfg.DataDir, "current", "finalized", "blk_"+itoa(id))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	f.ReadAt(b, off)
	b[0] ^= 0x20
	f.WriteAt(b, off)
}

func TestCorruptReplicaDetectedReportedNotServed(t *testing.T) {
	nn := startFakeNameNode(t)
	verifying, _ := startDataNode(t, nn, "", func(c *Config) { c.VerifyReads = true })
	data := randomData(3*pkt, 11)
	writeBlock(t, 300, 1, data, verifying)
	flipByte(t, verifying, 300, pkt+1000)

	_, err := readBlock(verifying.DataAddr(), 300, 1, 0, int64(len(data)))
	var ce *datatransfer.ChecksumError
	if !errors.As(err, &ce) || ce.Offset != pkt+512 {
		t.Fatalf("read of a corrupt replica: %v, want a checksum mismatch at %d", err, pkt+512)
	}
	waitFor(t, "corrupt replica reported to the namenode", func() bool { return len(nn.badBlocks()) == 1 })
	if b := nn.badBlocks()[0]; b.GetBlockId() != 300 || b.GetGenerationStamp() != 1 {
		t.Fatalf("reported %v", b)
	}
	_, err = readBlock(verifying.DataAddr(), 300, 1, 0, 10)
	var se *datatransfer.StatusError
	if !errors.As(err, &se) || se.Status != dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM {
		t.Fatalf("second read of a corrupt replica: %v, want ERROR_CHECKSUM", err)
	}

	// With sendfile (no datanode verification) the reader still catches it,
	// and the block scanner finds and reports it.
	scanning, _ := startDataNode(t, nn, "", func(c *Config) { c.ScanInterval = 20 * 1e6 })
	writeBlock(t, 301, 1, data, scanning)
	writeBlock(t, 302, 1, data, scanning)
	flipByte(t, scanning, 301, 5)
	// The scanner may have got there first; either way the data is refused.
	if _, err := readBlock(scanning.DataAddr(), 301, 1, 0, 100); !errors.As(err, &ce) &&
		!(errors.As(err, &se) && se.Status == dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM) {
		t.Fatalf("read of a corrupt replica without datanode verification: %v", err)
	}
	waitFor(t, "block scanner reports the corrupt replica", func() bool {
		for _, b := range nn.badBlocks() {
			if b.GetBlockId() == 301 {
				return true
			}
		}
		return false
	})
	mustRead(t, scanning, 302, 1, data) // the healthy one is still served
	for _, b := range nn.badBlocks() {
		if b.GetBlockId() == 302 {
			t.Fatal("healthy replica reported bad")
		}
	}
}

// TestReadStatusTriggersVerification: a reader that finds a mismatch in
// data sent with sendfile tells the datanode, which verifies the replica at
// once (no scan pass due for a day) and reports it.
func TestReadStatusTriggersVerification(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(2*pkt, 14)
	writeBlock(t, 310, 1, data, dn)
	flipByte(t, dn, 310, 3)
	c, err := dialRaw(dn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	datatransfer.WriteOp(c, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 310, GenerationStamp: 1}, Length: int64(len(data)), Token: testToken(310, 1, blocktoken.Read)})
	br := bufio.NewReader(c)
	if _, err := datatransfer.ReadResponse(br); err != nil {
		t.Fatal(err)
	}
	p, err := datatransfer.NewPacketReader(br).Next()
	if err != nil {
		t.Fatal(err)
	}
	var ce *datatransfer.ChecksumError
	if err := p.Verify(); !errors.As(err, &ce) {
		t.Fatalf("first packet: %v, want a checksum mismatch", err)
	}
	datatransfer.WriteReadStatus(c, dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM)
	waitFor(t, "the replica reported bad after the reader's status", func() bool { return len(nn.badBlocks()) == 1 })
	if _, err := readBlock(dn.DataAddr(), 310, 1, 0, 10); err == nil {
		t.Fatal("corrupt replica served after verification")
	}
}

func TestRegistrationRetriesAndReregisters(t *testing.T) {
	nn := startFakeNameNode(t)
	nn.failRegister = 3 // the namenode refuses three times first
	dn, _ := startDataNode(t, nn, "", nil)
	if n := nn.registered(dn.ID()); n != 1 {
		t.Fatalf("registrations %d", n)
	}
	nn.command(dn.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Reregister{Reregister: true}})
	waitFor(t, "registration again after the reregister command", func() bool { return nn.registered(dn.ID()) == 2 })
	waitFor(t, "a full block report after re-registering", func() bool {
		nn.mu.Lock()
		defer nn.mu.Unlock()
		return nn.reportCount[dn.ID()] >= 2
	})
	info := nn.registrations[0]
	if info.GetIpAddr() != "127.0.0.1" || info.GetDataPort() == 0 || info.GetIpcPort() == 0 || info.GetHostname() != "localhost" || info.GetCapacity() <= 0 {
		t.Fatalf("registration info %v", info)
	}
	if !strings.HasSuffix(dn.DataAddr(), ":"+itoa(uint64(info.GetDataPort()))) {
		t.Fatalf("data port %d vs %s", info.GetDataPort(), dn.DataAddr())
	}
}
