package datanode

import (
	"strings"
	"testing"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/testenv"
)

// A datanode of an HA group reports to every namenode and obeys only the
// one that says ACTIVE at the highest term: a standby's commands are
// dropped, and so are a deposed active's once another namenode claimed a
// higher term (fencing), even while the deposed one still says ACTIVE.
func TestHAObeysOnlyTheActiveOfTheHighestTerm(t *testing.T) {
	a, b := startFakeNameNode(t), startFakeNameNode(t)
	a.setHA(dfspb.HAState_ACTIVE, 2)
	b.setHA(dfspb.HAState_STANDBY, 2)
	dn, logs := startDataNode(t, a, "", func(c *Config) { c.NameNode = a.addr + "," + b.addr })
	waitFor(t, "the datanode registered with and heartbeating the standby too", func() bool {
		_, beats := b.lastHeartbeat(dn.ID())
		return b.registered(dn.ID()) > 0 && beats > 0
	})

	data := randomData(pkt+10, 28)
	blk := func(id uint64) *dfspb.ExtendedBlock {
		return &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1, NumBytes: int64(len(data))}
	}
	for id := uint64(1); id <= 3; id++ {
		writeBlock(t, id, 1, data, dn)
	}
	// Block reports go to both: the full one at registration and the
	// incremental ones of every replica.
	for _, nn := range []*fakeNameNode{a, b} {
		for id := uint64(1); id <= 3; id++ {
			waitFor(t, "RECEIVED of each block reported to both namenodes", func() bool {
				return nn.hasReceived(dn.ID(), id, 1, dfspb.ReceivedStatus_RECEIVED)
			})
		}
		nn.mu.Lock()
		reports := nn.reportCount[dn.ID()]
		nn.mu.Unlock()
		if reports == 0 {
			t.Errorf("namenode %s got no full block report", nn.addr)
		}
	}

	// invalidate gives nn an invalidate of block id and waits until the
	// datanode has handled the reply that carried it (the heartbeat after
	// it was taken: commands run before the next heartbeat is sent).
	invalidate := func(nn *fakeNameNode, id uint64) {
		t.Helper()
		nn.command(dn.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{Invalidate: &dfspb.InvalidateCommand{Blocks: []*dfspb.ExtendedBlock{blk(id)}}}})
		waitFor(t, "the command taken by a heartbeat", func() bool { return nn.pendingFor(dn.ID()) == 0 })
		_, beats := nn.lastHeartbeat(dn.ID())
		waitFor(t, "the next heartbeat, after the command was handled", func() bool {
			_, now := nn.lastHeartbeat(dn.ID())
			return now > beats
		})
	}
	readable := func(id uint64) bool {
		_, err := readBlock(dn.DataAddr(), id, 1, 0, 1)
		return err == nil
	}

	invalidate(b, 1) // the standby's order: dropped
	invalidate(b, 1) // again: dropped, and not logged again
	if !readable(1) {
		t.Fatal("block 1 deleted on the order of a STANDBY namenode")
	}
	if n := strings.Count(logs.String(), "STANDBY at term 2"); n != 1 {
		t.Errorf("the standby's dropped commands were logged %d times, want once:\n%s", n, logs.String())
	}
	a.command(dn.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{Invalidate: &dfspb.InvalidateCommand{Blocks: []*dfspb.ExtendedBlock{blk(2)}}}})
	for _, nn := range []*fakeNameNode{a, b} {
		waitFor(t, "block 2 deleted on the active's order, reported DELETED to both", func() bool {
			return nn.hasReceived(dn.ID(), 2, 1, dfspb.ReceivedStatus_DELETED)
		})
	}

	// b wins an election at term 3; a has not noticed and still says
	// ACTIVE at term 2.
	b.setHA(dfspb.HAState_ACTIVE, 3)
	_, beats := b.lastHeartbeat(dn.ID())
	waitFor(t, "two heartbeats of b after its term 3 (the datanode has seen it)", func() bool {
		_, now := b.lastHeartbeat(dn.ID())
		return now >= beats+2
	})
	invalidate(a, 3) // the deposed active's order: dropped
	if !readable(3) {
		t.Fatal("block 3 deleted on the order of a namenode ACTIVE at term 2 after another said ACTIVE at term 3")
	}
	b.command(dn.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{Invalidate: &dfspb.InvalidateCommand{Blocks: []*dfspb.ExtendedBlock{blk(1)}}}})
	waitFor(t, "block 1 deleted on the order of the term-3 active", func() bool {
		return a.hasReceived(dn.ID(), 1, 1, dfspb.ReceivedStatus_DELETED) && b.hasReceived(dn.ID(), 1, 1, dfspb.ReceivedStatus_DELETED)
	})
}

// A namenode list with a repeat or a malformed entry is refused, naming it.
func TestHANameNodeListChecked(t *testing.T) {
	for list, want := range map[string]string{
		"127.0.0.1:1,127.0.0.1:1": "127.0.0.1:1 is named twice",
		"127.0.0.1:1,,":           `"" is not host:port`,
	} {
		cfg := DefaultConfig()
		cfg.NameNode, cfg.DataDir = list, t.TempDir()
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("namenode %q: %v, want an error saying %s", list, err, want)
		}
	}
}

// A namenode of the list that is down holds up nothing: the datanode
// reports to the other, and obeys it, a namenode without HA (no status in
// its replies) being obeyed as always.
func TestHADeadNameNodeHoldsNothingUp(t *testing.T) {
	nn := startFakeNameNode(t)
	dead := testenv.DeadAddr(t)
	dn, _ := startDataNode(t, nn, "", func(c *Config) { c.NameNode = dead + "," + nn.addr })
	data := randomData(pkt, 29)
	writeBlock(t, 7, 1, data, dn)
	waitFor(t, "RECEIVED reported to the live namenode", func() bool {
		return nn.hasReceived(dn.ID(), 7, 1, dfspb.ReceivedStatus_RECEIVED)
	})
	nn.command(dn.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{Invalidate: &dfspb.InvalidateCommand{
		Blocks: []*dfspb.ExtendedBlock{{BlockId: 7, GenerationStamp: 1, NumBytes: int64(len(data))}}}}})
	waitFor(t, "block 7 deleted on the order of the live namenode without HA", func() bool {
		return nn.hasReceived(dn.ID(), 7, 1, dfspb.ReceivedStatus_DELETED)
	})
}
