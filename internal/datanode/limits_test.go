package datanode

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

func createOp(id uint64, bpc uint32) *dfspb.WriteBlockOp {
	return &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1}, ClientName: "test-client",
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC, BytesPerChecksum: bpc}
}

// TestWriteRefusesTinyChecksumChunks: a write asking for 1-byte checksum
// chunks (64 MiB of checksums per 16 MiB packet) is refused at setup with
// a message naming the limit; 512-byte chunks (control) are accepted.
func TestWriteRefusesTinyChecksumChunks(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	_, resp := openPipeline(t, createOp(1, 1), dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_INVALID || !strings.Contains(resp.GetMessage(), "bytes_per_checksum 1 not in 64..") {
		t.Fatalf("1-byte chunks: %v, want invalid naming bytes_per_checksum", datatransfer.ResponseError(resp))
	}
	if _, ok := dn.store.Get(1); ok {
		t.Fatal("a replica was created for the refused write")
	}
	writeBlock(t, 2, 1, randomData(100_000, 2), dn)
}

// TestWriteRefusesOversizedPacket: a packet header announcing more than 16
// MiB of data gets an error ack (invalid) for its seqno, not a dropped
// connection, and no buffer is taken for it.
func TestWriteRefusesOversizedPacket(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, logs := startDataNode(t, nn, "", nil)
	p, resp := openPipeline(t, createOp(3, 512), dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatal(datatransfer.ResponseError(resp))
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var hdr [datatransfer.PacketHeaderLen]byte
	datatransfer.PacketHeader{DataLen: datatransfer.MaxPacketDataLen + 1, BytesPerChecksum: 512}.Put(hdr[:])
	if _, err := p.conn.Write(hdr[:]); err != nil {
		t.Fatal(err)
	}
	acks, _ := p.result()
	if len(acks) != 1 || acks[0].Seqno != 0 || acks[0].FirstFailed() != 0 || acks[0].Statuses[0] != dfspb.OpStatus_OP_STATUS_ERROR_INVALID {
		t.Fatalf("acks %+v (read error %v), want one invalid ack of seqno 0", acks, p.err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("refusing the packet allocated %d bytes", grew)
	}
	if dn.recv.inUse() != 0 {
		t.Fatalf("%d receive-buffer bytes held after the refusal", dn.recv.inUse())
	}
	waitFor(t, "the refusal logged with its reason", func() bool { return strings.Contains(logs.String(), "exceeds 16777216") })
}

// TestReceiveBudget: with the datanode's receive buffers used up, a new
// write is refused at setup (busy), and a write in progress whose next
// packet finds no room within io_timeout gets a busy ack; once memory is
// free again writes go through (control) and leave nothing claimed.
func TestReceiveBudget(t *testing.T) {
	const budget = 256 << 10
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", func(c *Config) {
		c.PerClientBuffer, c.ReceiveBufferBudget = 64<<10, budget
		c.IOTimeout = 500 * time.Millisecond
	})
	hold := func() func() {
		t.Helper()
		release, err := dn.recv.claim(budget, time.Second, nil)
		if err != nil {
			t.Fatalf("test could not take the whole budget: %v", err)
		}
		return release
	}

	release := hold()
	_, resp := openPipeline(t, createOp(10, 512), dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_BUSY || !strings.Contains(resp.GetMessage(), "receive buffers are full") {
		t.Fatalf("write with the budget used up: %v, want busy", datatransfer.ResponseError(resp))
	}
	release()

	p, resp := openPipeline(t, createOp(11, 512), dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatal(datatransfer.ResponseError(resp))
	}
	release = hold()
	start := time.Now()
	if err := p.send(randomData(1000, 11)); err != nil {
		t.Fatal(err)
	}
	acks, _ := p.result()
	if len(acks) != 1 || acks[0].Statuses[0] != dfspb.OpStatus_OP_STATUS_ERROR_BUSY {
		t.Fatalf("acks %+v (read error %v), want one busy ack", acks, p.err)
	}
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Fatalf("refused after %v, want a wait of io_timeout first", waited)
	}
	release()

	writeBlock(t, 12, 1, randomData(1<<20, 12), dn)
	waitFor(t, "every receive buffer given back", func() bool { return dn.recv.inUse() == 0 })
}

// TestRecvBudgetBound: claims never exceed the capacity; a waiter gets
// room as soon as bytes are given back, and a stop ends its wait.
func TestRecvBudgetBound(t *testing.T) {
	var used, high int64
	b := newRecvBudget(100, func(d int64) { used += d; high = max(high, used) })
	r1, err := b.claim(60, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.claim(50, 10*time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "60 of receive_buffer_budget 100") {
		t.Fatalf("over-budget claim = %v, want a refusal naming the use", err)
	}
	go func() { time.Sleep(20 * time.Millisecond); r1(); r1() }()
	r2, err := b.claim(50, 5*time.Second, nil)
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	stop := make(chan struct{})
	close(stop)
	if _, err := b.claim(60, 5*time.Second, stop); err != errStopped {
		t.Fatalf("stopped claim = %v", err)
	}
	r2()
	if high > 100 || b.inUse() != 0 {
		t.Fatalf("high-water %d (capacity 100), %d still held", high, b.inUse())
	}
}
