package datanode

import (
	"strings"
	"testing"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/testfs"
)

// A datanode on a 4 MiB file system with 1 MiB reserved heartbeats the
// capacity and remaining space net of the reserve, and once the free space
// is down to the reserve it refuses a new block at pipeline setup with an
// error naming the block and du_reserved; as the last node of a pipeline
// it is named as the first bad link, so the client drops it. The block
// before takes the space above the reserve and is kept.
func TestFullVolumeRefusesNewBlocks(t *testing.T) {
	nn := startFakeNameNode(t)
	dir := testfs.Tmpfs(t, "4m")
	full, _ := startDataNode(t, nn, dir, func(c *Config) { c.DuReserved = "1MiB" })
	other, _ := startDataNode(t, nn, "", nil)

	hb, _ := nn.lastHeartbeat(full.ID())
	if hb.GetCapacity() != 3<<20 || hb.GetRemaining() > 3<<20 || hb.GetRemaining() < 2<<20 {
		t.Fatalf("empty 4 MiB volume with 1 MiB reserved: heartbeat capacity %d remaining %d, want 3 MiB and about 3 MiB",
			hb.GetCapacity(), hb.GetRemaining())
	}
	// One block takes the space above the reserve (its meta file a little
	// of the reserve: a write under way may finish into it).
	data := randomData(int(testfs.Free(t, dir))-(1<<20), 1)
	writeBlock(t, 1, 1001, data, full)
	mustRead(t, full, 1, 1001, data)
	waitFor(t, "a heartbeat reporting no remaining space", func() bool {
		hb, _ := nn.lastHeartbeat(full.ID())
		return hb.GetRemaining() == 0
	})

	for _, pipe := range [][]*DataNode{{full}, {other, full}} {
		p, resp := openPipeline(t, &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 2, GenerationStamp: 1001},
			Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, ClientName: "c"}, pipe...)
		_ = p
		msg := resp.GetMessage()
		if resp.GetStatus() == dfspb.OpStatus_OP_STATUS_SUCCESS || !strings.Contains(msg, "blk_2_1001") || !strings.Contains(msg, "du_reserved") {
			t.Fatalf("new block on a volume at its reserve (pipeline of %d): status %s %q, want a refusal naming blk_2_1001 and du_reserved",
				len(pipe), resp.GetStatus(), msg)
		}
		if len(pipe) == 2 && resp.GetFirstBadLink() != full.DataAddr() {
			t.Fatalf("refusal downstream names first bad link %q, want the full node %s", resp.GetFirstBadLink(), full.DataAddr())
		}
	}
	if free := testfs.Free(t, dir); free < 900<<10 {
		t.Fatalf("volume free space %d went well below the 1 MiB reserve", free)
	}
	mustRead(t, full, 1, 1001, data)
}

// A block whose expected size (the client's block size, sent with the
// request) does not fit above the reserve is refused at setup while the
// volume still has some room: the namenode may have placed it on a stale
// view of this node's space, and taking it would eat into the reserve.
// Downstream too: the forwarded request carries the size, and the full
// node is named as the first bad link. A block that fits is taken.
func TestDataNodeRefusesBlockWithoutRoomForIt(t *testing.T) {
	nn := startFakeNameNode(t)
	dir := testfs.Tmpfs(t, "4m")
	full, _ := startDataNode(t, nn, dir, func(c *Config) { c.DuReserved = "1MiB" })
	other, _ := startDataNode(t, nn, "", nil)
	// Leave about 512 KiB above the reserve.
	data := randomData(int(testfs.Free(t, dir))-(1<<20)-(512<<10), 1)
	writeBlock(t, 1, 1001, data, full)

	for _, pipe := range [][]*DataNode{{full}, {other, full}} {
		_, resp := openPipeline(t, &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 2, GenerationStamp: 1001},
			Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, ClientName: "c", ExpectedBytes: 1 << 20}, pipe...)
		msg := resp.GetMessage()
		if resp.GetStatus() == dfspb.OpStatus_OP_STATUS_SUCCESS || !strings.Contains(msg, "blk_2_1001") || !strings.Contains(msg, "no room for a") {
			t.Fatalf("1 MiB block with 512 KiB above the reserve (pipeline of %d): status %s %q, want a refusal naming blk_2_1001 and the room",
				len(pipe), resp.GetStatus(), msg)
		}
		if len(pipe) == 2 && resp.GetFirstBadLink() != full.DataAddr() {
			t.Fatalf("refusal downstream names first bad link %q, want the full node %s", resp.GetFirstBadLink(), full.DataAddr())
		}
	}
	small := randomData(256<<10, 3)
	p, resp := openPipeline(t, &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 3, GenerationStamp: 1001},
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, ClientName: "c", ExpectedBytes: uint64(len(small))}, other, full)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("256 KiB block with 512 KiB above the reserve: %s %q", resp.GetStatus(), resp.GetMessage())
	}
	if err := p.send(small); err != nil {
		t.Fatal(err)
	}
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 2)
	mustRead(t, full, 3, 1001, small)
	mustRead(t, full, 1, 1001, data)
}
