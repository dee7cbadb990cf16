package datanode

import (
	"bytes"
	"testing"

	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// sendCorrupt sends data as one packet at p's position with one data byte
// flipped on the wire (the checksums are those of the good data).
func (p *pipeline) sendCorrupt(data []byte) error {
	pkt := datatransfer.NewPacket(datatransfer.DefaultPacketDataLen, 512)
	n := pkt.Append(data)
	pkt.Seal(p.off, p.seq, 0)
	wire := bytes.Clone(pkt.Wire())
	pkt.Release()
	wire[len(wire)-n/2] ^= 0x40
	p.off += int64(n)
	p.seq++
	_, err := p.conn.Write(wire)
	return err
}

// A client's packet corrupted before the first datanode goes down the
// pipeline unverified and is refused by the last node alone, as in HDFS:
// the ack names the last node (ERROR_CHECKSUM at position 3), only its
// replica is discarded, and the client's recovery through the other two
// (which truncates their unverified tail to the acknowledged length)
// ends with the good bytes on both. Nothing of the corrupt packet is ever
// readable.
func TestCorruptPacketRefusedByLastNodeAndRecovered(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	const id = 130
	data := randomData(5*datatransfer.DefaultPacketDataLen+300, 13)
	good := 3 * datatransfer.DefaultPacketDataLen

	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC}
	p, resp := openPipeline(t, op, dn1, dn2, dn3)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	if err := p.send(data[:good]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the three good packets acked by the whole pipeline", func() bool { return p.ackedThrough() == 2 })
	if err := p.sendCorrupt(data[good : good+datatransfer.DefaultPacketDataLen]); err != nil {
		t.Fatal(err)
	}
	acks, _ := p.result()
	last := acks[len(acks)-1]
	want := []dfspb.OpStatus{ok, ok, dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM}
	if last.Seqno != 3 || !equalStatuses(last.Statuses, want) {
		t.Fatalf("ack of the corrupt packet: seqno %d statuses %v, want seqno 3 statuses %v (the last node refuses it)", last.Seqno, last.Statuses, want)
	}
	waitFor(t, "the last node to discard its replica", func() bool { _, ok := dn3.store.Get(id); return !ok })
	for _, dn := range []*DataNode{dn1, dn2} {
		if r, ok := dn.store.Get(id); !ok || r.State != store.RBW {
			t.Fatalf("%s: replica %+v, want it kept being written for recovery", dn.ID(), r)
		}
		if r, _ := dn.store.Get(id); r.Visible > int64(good) {
			t.Fatalf("%s: %d bytes visible, only %d were acknowledged", dn.ID(), r.Visible, good)
		}
	}

	// The client drops the last node and resumes dn1 → dn2 from the
	// acknowledged length under generation stamp 2.
	op = &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1, NumBytes: int64(good)},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, LatestGs: 2}
	p, resp = openPipeline(t, op, dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatalf("recovery pipeline refused: %v", err)
	}
	p.seq = 0
	if err := p.send(data[good:]); err != nil {
		t.Fatal(err)
	}
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 2)
	for _, dn := range []*DataNode{dn1, dn2} {
		mustRead(t, dn, id, 2, data)
	}
}

// After a recovery at a length inside a chunk, the first packet starts
// mid-chunk and the store recomputes its checksums from its data: a middle
// node verifies such a packet itself (else it would store a corrupt chunk
// with a matching checksum), so the corrupt one is refused at position 1.
func TestUnalignedPacketVerifiedByMiddleNode(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	const id = 131
	data := randomData(3*datatransfer.DefaultPacketDataLen, 14)
	head := datatransfer.DefaultPacketDataLen + 100 // not a multiple of 512

	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC}
	p, resp := openPipeline(t, op, dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	if err := p.send(data[:head]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both packets acked", func() bool { return p.ackedThrough() == 1 })
	p.conn.Close() // the recovery below stops the writers still attached

	op = &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1, NumBytes: int64(head)},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, LatestGs: 2}
	p, resp = openPipeline(t, op, dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatalf("recovery pipeline refused: %v", err)
	}
	p.seq = 0
	if err := p.sendCorrupt(data[head : head+4096]); err != nil {
		t.Fatal(err)
	}
	acks, _ := p.result()
	if len(acks) != 1 || acks[0].FirstFailed() != 0 || acks[0].Statuses[0] != dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM {
		t.Fatalf("acks of a corrupt packet starting mid-chunk: %+v, want ERROR_CHECKSUM from the first node", acks)
	}
}

func equalStatuses(a, b []dfspb.OpStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The nodes that verify although they forward: a multi-pipeline first node
// (it tells the client the block is stored, FNFA, before its downstream
// has checked anything) and any node of a datanode-to-datanode copy (no
// client name: its source cannot resend). Each refuses a corrupt packet
// itself: the ack's first status.
func TestForwardingNodesThatVerify(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	for i, op := range []*dfspb.WriteBlockOp{
		multiOp(150, "smarth-client-a"),
		{Block: &dfspb.ExtendedBlock{BlockId: 151, GenerationStamp: 1}, Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC},
	} {
		p, resp := openPipeline(t, op, dn1, dn2)
		if err := datatransfer.ResponseError(resp); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if err := p.send(randomData(datatransfer.DefaultPacketDataLen, 16)); err != nil {
			t.Fatal(err)
		}
		if err := p.sendCorrupt(randomData(datatransfer.DefaultPacketDataLen, 17)); err != nil {
			t.Fatal(err)
		}
		acks, _ := p.result()
		last := acks[len(acks)-1]
		if last.Seqno != 1 || last.FirstFailed() != 0 || last.Statuses[0] != dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM {
			t.Fatalf("case %d (mode %s, client %q): ack of the corrupt packet %+v, want ERROR_CHECKSUM from the first node",
				i, op.GetMode(), op.GetClientName(), last)
		}
	}
}
