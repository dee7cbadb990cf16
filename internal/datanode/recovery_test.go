package datanode

import (
	"slices"
	"strings"
	"testing"

	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

// leaveRBW writes data to dn as an unfinished single-node write (a client
// that died), leaving an RBW replica.
func leaveRBW(t *testing.T, dn *DataNode, id uint64, data []byte) {
	t.Helper()
	p, resp := openPipeline(t, &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1},
		ClientName: "dead-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE}, dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatal(resp)
	}
	p.send(data)
	waitFor(t, "all packets acked", func() bool { return p.ackedThrough() == p.seq-1 })
	p.conn.Close()
}

func recoverCmd(id uint64, newGS uint64, dns ...*DataNode) *dfspb.DatanodeCommand {
	rc := &dfspb.RecoverBlockCommand{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1}, NewGs: newGS}
	for _, dn := range dns {
		rc.Replicas = append(rc.Replicas, dn.Info())
	}
	return &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Recover{Recover: rc}}
}

func (f *fakeNameNode) commit(id uint64) *dfspb.CommitBlockSynchronizationRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.commits {
		if c.GetBlock().GetBlockId() == id {
			return c
		}
	}
	return nil
}

func TestLeaseRecoveryThreeLengths(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	data := randomData(5*pkt, 31)
	lengths := []int{3*pkt + 100, 5 * pkt, 4*pkt + 7}
	for i, dn := range []*DataNode{dn1, dn2, dn3} {
		leaveRBW(t, dn, 500, data[:lengths[i]])
	}
	nn.command(dn1.ID(), recoverCmd(500, 9, dn1, dn2, dn3))
	waitFor(t, "CommitBlockSynchronization from the primary", func() bool { return nn.commit(500) != nil })
	c := nn.commit(500)
	want := []string{dn1.ID(), dn2.ID(), dn3.ID()}
	got := slices.Clone(c.GetNewTargets())
	slices.Sort(got)
	slices.Sort(want)
	if c.GetNewGs() != 9 || c.GetNewLength() != int64(lengths[0]) || !c.GetCloseFile() || !slices.Equal(got, want) {
		t.Fatalf("commit %v, want gs 9, length %d, all three", c, lengths[0])
	}
	for _, dn := range []*DataNode{dn1, dn2, dn3} {
		r, _ := dn.store.Get(500)
		if r.State != store.Finalized || r.GS != 9 || r.Length != int64(lengths[0]) {
			t.Fatalf("%s: replica %+v", dn.ID(), r)
		}
		mustRead(t, dn, 500, 9, data[:lengths[0]])
		waitFor(t, "RECEIVED under the new gs", func() bool { return nn.hasReceived(dn.ID(), 500, 9, dfspb.ReceivedStatus_RECEIVED) })
	}
}

func TestLeaseRecoveryPrefersFinalized(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	data := randomData(5*pkt, 32)
	writeBlock(t, 510, 1, data[:4*pkt], dn1) // finalized, 4 packets
	leaveRBW(t, dn2, 510, data)              // longer
	leaveRBW(t, dn3, 510, data[:2*pkt])      // shorter: left out
	nn.command(dn2.ID(), recoverCmd(510, 4, dn1, dn2, dn3))
	waitFor(t, "CommitBlockSynchronization", func() bool { return nn.commit(510) != nil })
	c := nn.commit(510)
	if c.GetNewLength() != 4*pkt || len(c.GetNewTargets()) != 2 || slices.Contains(c.GetNewTargets(), dn3.ID()) {
		t.Fatalf("commit %v, want the finalized length on dn1 and dn2", c)
	}
	mustRead(t, dn2, 510, 4, data[:4*pkt])
	mustRead(t, dn1, 510, 4, data[:4*pkt])
}

func TestChooseRecoveryLength(t *testing.T) {
	peer := func(st dfspb.ReplicaState, n int64) recoveryPeer {
		return recoveryPeer{block: &dfspb.ExtendedBlock{NumBytes: n}, state: st}
	}
	rbw, fin := dfspb.ReplicaState_RBW, dfspb.ReplicaState_FINALIZED
	cases := []struct {
		peers []recoveryPeer
		want  int64
		ok    bool
	}{
		{nil, 0, false},
		{[]recoveryPeer{peer(rbw, 10), peer(rbw, 7), peer(rbw, 9)}, 7, true},
		{[]recoveryPeer{peer(rbw, 10), peer(fin, 8), peer(rbw, 3)}, 8, true},
		{[]recoveryPeer{peer(rbw, 0)}, 0, true},
	}
	for i, c := range cases {
		if got, ok := chooseRecoveryLength(c.peers); got != c.want || ok != c.ok {
			t.Errorf("case %d: %d %v, want %d %v", i, got, ok, c.want, c.ok)
		}
	}
}

// TestLeaseRecoveryOfUnwrittenBlock: the client died after the namenode
// allocated the block but before any datanode got a byte; the primary
// commits the block's deletion so the file can close.
func TestLeaseRecoveryOfUnwrittenBlock(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	leaveRBW(t, dn2, 521, nil) // pipeline opened, nothing written
	nn.command(dn1.ID(), recoverCmd(520, 3, dn1, dn2))
	nn.command(dn2.ID(), recoverCmd(521, 3, dn1, dn2))
	waitFor(t, "commits for both blocks", func() bool { return nn.commit(520) != nil && nn.commit(521) != nil })
	for _, id := range []uint64{520, 521} {
		if c := nn.commit(id); !c.GetDeleteBlock() || !c.GetCloseFile() || c.GetNewLength() != 0 {
			t.Fatalf("commit %v, want the empty block deleted", c)
		}
	}
}

// TestLeaseRecoveryWithUnreachableHolder: a holder that cannot be asked
// might have the data, so nothing is deleted; the namenode retries later.
func TestLeaseRecoveryWithUnreachableHolder(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, logs := startDataNode(t, nn, "", nil)
	gone := &dfspb.DatanodeInfo{Id: "gone", IpAddr: "127.0.0.1", IpcPort: 1}
	rc := recoverCmd(530, 3, dn1)
	rc.GetRecover().Replicas = append(rc.GetRecover().Replicas, gone)
	nn.command(dn1.ID(), rc)
	waitFor(t, "the primary gives up", func() bool { return strings.Contains(logs.String(), "no usable replica reachable") })
	if c := nn.commit(530); c != nil {
		t.Fatalf("committed %v with a holder unreachable", c)
	}
}
