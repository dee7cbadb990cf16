package datanode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/datanode/store"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// interDatanode serves InterDatanodeProtocol on ipc_addr: the replica side
// of lease recovery.
type interDatanode struct {
	dfspb.UnimplementedInterDatanodeProtocolServer
	d *DataNode
}

func (s *interDatanode) InitReplicaRecovery(_ context.Context, req *dfspb.InitReplicaRecoveryRequest) (*dfspb.InitReplicaRecoveryResponse, error) {
	return s.d.initReplicaRecovery(req)
}

func (s *interDatanode) UpdateReplicaUnderRecovery(_ context.Context, req *dfspb.UpdateReplicaUnderRecoveryRequest) (*dfspb.UpdateReplicaUnderRecoveryResponse, error) {
	return s.d.updateReplicaUnderRecovery(req)
}

func (d *DataNode) initReplicaRecovery(req *dfspb.InitReplicaRecoveryRequest) (*dfspb.InitReplicaRecoveryResponse, error) {
	r, orig, err := d.store.InitRecovery(req.GetBlock().GetBlockId(), req.GetRecoveryId())
	if errors.Is(err, store.ErrNotFound) {
		return &dfspb.InitReplicaRecoveryResponse{Exists: false}, nil
	}
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &dfspb.InitReplicaRecoveryResponse{Exists: true, Block: extended(r), OriginalState: replicaState(orig)}, nil
}

func (d *DataNode) updateReplicaUnderRecovery(req *dfspb.UpdateReplicaUnderRecoveryRequest) (*dfspb.UpdateReplicaUnderRecoveryResponse, error) {
	update := d.store.UpdateRecovery
	switch {
	case req.GetTruncate() && req.GetNewBlockId() != 0:
		// Copy-on-truncate: a new replica of the prefix; the one named
		// stays as it is, for the snapshot that holds it.
		b := req.GetBlock()
		update = func(id, recoveryID uint64, newLength int64) (store.Replica, error) {
			return d.store.CopyRecovery(id, b.GetGenerationStamp(), recoveryID, req.GetNewBlockId(), newLength)
		}
	case req.GetTruncate():
		update = d.store.CutRecovery
	}
	r, err := update(req.GetBlock().GetBlockId(), req.GetRecoveryId(), req.GetNewLength())
	if errors.Is(err, store.ErrNotFound) {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	d.log.Info("replica recovered", "block", r.Name(), "length", r.Length)
	d.reportBlock(r, dfspb.ReceivedStatus_RECEIVED)
	return &dfspb.UpdateReplicaUnderRecoveryResponse{Block: extended(r)}, nil
}

// recoveryPeer is one replica holder in a lease recovery.
type recoveryPeer struct {
	info  *dfspb.DatanodeInfo
	block *dfspb.ExtendedBlock // as stored there
	state dfspb.ReplicaState   // before recovery
}

// recoverBlock runs lease recovery as the primary datanode (HDFS's
// BlockRecoveryWorker): ask every replica holder for its replica, choose
// the length — a finalized replica's if there is one, else the shortest
// replica being written — truncate and finalize every replica that has that
// many bytes under the new generation stamp, and commit the result to the
// namenode. When every holder answered and none has a byte of the block
// (the client died before writing to it), the commit deletes the block.
func (d *DataNode) recoverBlock(cmd *dfspb.RecoverBlockCommand) {
	if cmd.GetTruncate() {
		d.recoverTruncate(cmd)
		return
	}
	b, newGS := cmd.GetBlock(), cmd.GetNewGs()
	name := store.BlockName(b.GetBlockId(), b.GetGenerationStamp())
	var peers []recoveryPeer
	failed := 0
	for _, dn := range cmd.GetReplicas() {
		resp, err := d.callInit(dn, &dfspb.InitReplicaRecoveryRequest{Block: b, RecoveryId: newGS})
		if err != nil {
			failed++
			d.log.Warn("lease recovery: replica unavailable", "block", name, "datanode", dn.GetId(), "err", err)
			continue
		}
		// A replica with an older generation stamp missed writes; an
		// empty one has nothing to keep.
		if !resp.GetExists() || resp.GetBlock().GetGenerationStamp() < b.GetGenerationStamp() || resp.GetBlock().GetNumBytes() == 0 {
			continue
		}
		peers = append(peers, recoveryPeer{info: dn, block: resp.GetBlock(), state: resp.GetOriginalState()})
	}
	newLen, ok := chooseRecoveryLength(peers)
	switch {
	case !ok && failed > 0:
		d.log.Error("lease recovery failed: no usable replica reachable; the namenode will retry", "block", name, "asked", len(cmd.GetReplicas()), "unreachable", failed)
		return
	case !ok:
		d.commitRecovery(&dfspb.CommitBlockSynchronizationRequest{Block: b, NewGs: newGS, CloseFile: true, DeleteBlock: true})
		return
	}
	var synced []string
	for _, p := range peers {
		if p.block.GetNumBytes() < newLen {
			continue
		}
		_, err := d.callUpdate(p.info, &dfspb.UpdateReplicaUnderRecoveryRequest{Block: p.block, RecoveryId: newGS, NewLength: newLen})
		if err != nil {
			d.log.Warn("lease recovery: cannot update replica", "block", name, "datanode", p.info.GetId(), "err", err)
			continue
		}
		synced = append(synced, p.info.GetId())
	}
	if len(synced) == 0 {
		d.log.Error("lease recovery failed: no replica could be updated", "block", name)
		return
	}
	d.commitRecovery(&dfspb.CommitBlockSynchronizationRequest{Block: b, NewGs: newGS, NewLength: newLen, CloseFile: true, NewTargets: synced})
}

func (d *DataNode) commitRecovery(req *dfspb.CommitBlockSynchronizationRequest) {
	name := store.BlockName(req.GetBlock().GetBlockId(), req.GetBlock().GetGenerationStamp())
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	if _, err := d.activeNN().CommitBlockSynchronization(ctx, req); err != nil {
		d.log.Error("lease recovery: commit failed", "block", name, "err", rpcError("commit block synchronization", err))
		return
	}
	d.log.Info("lease recovery done", "block", name, "new_gs", req.GetNewGs(), "length", req.GetNewLength(),
		"replicas", len(req.GetNewTargets()), "deleted", req.GetDeleteBlock())
}

// chooseRecoveryLength picks the recovered length: a finalized replica's
// length if any replica is finalized, else the minimum over the replicas
// being written (every byte up to it is on every replica).
func chooseRecoveryLength(peers []recoveryPeer) (int64, bool) {
	if len(peers) == 0 {
		return 0, false
	}
	for _, p := range peers {
		if p.state == dfspb.ReplicaState_FINALIZED {
			return p.block.GetNumBytes(), true
		}
	}
	n := peers[0].block.GetNumBytes()
	for _, p := range peers[1:] {
		n = min(n, p.block.GetNumBytes())
	}
	return n, true
}

func (d *DataNode) callInit(dn *dfspb.DatanodeInfo, req *dfspb.InitReplicaRecoveryRequest) (*dfspb.InitReplicaRecoveryResponse, error) {
	if dn.GetId() == d.ID() {
		return d.initReplicaRecovery(req)
	}
	var resp *dfspb.InitReplicaRecoveryResponse
	err := d.withPeer(dn, func(ctx context.Context, c dfspb.InterDatanodeProtocolClient) (err error) {
		resp, err = c.InitReplicaRecovery(ctx, req)
		return err
	})
	return resp, err
}

func (d *DataNode) callUpdate(dn *dfspb.DatanodeInfo, req *dfspb.UpdateReplicaUnderRecoveryRequest) (*dfspb.UpdateReplicaUnderRecoveryResponse, error) {
	if dn.GetId() == d.ID() {
		return d.updateReplicaUnderRecovery(req)
	}
	var resp *dfspb.UpdateReplicaUnderRecoveryResponse
	err := d.withPeer(dn, func(ctx context.Context, c dfspb.InterDatanodeProtocolClient) (err error) {
		resp, err = c.UpdateReplicaUnderRecovery(ctx, req)
		return err
	})
	return resp, err
}

// withPeer calls another datanode's InterDatanodeProtocol.
func (d *DataNode) withPeer(dn *dfspb.DatanodeInfo, call func(context.Context, dfspb.InterDatanodeProtocolClient) error) error {
	addr := net.JoinHostPort(dn.GetIpAddr(), strconv.Itoa(int(dn.GetIpcPort())))
	conn, err := grpc.NewClient(addr, pki.DialOption(d.cliTLS))
	if err != nil {
		return fmt.Errorf("datanode %s at %s: %w", dn.GetId(), addr, err)
	}
	defer conn.Close()
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	if err := call(ctx, dfspb.NewInterDatanodeProtocolClient(conn)); err != nil {
		return fmt.Errorf("datanode %s at %s: %w", dn.GetId(), addr, rpcError("inter-datanode call", err))
	}
	return nil
}

func cloneInfo(i *dfspb.DatanodeInfo) *dfspb.DatanodeInfo {
	if i == nil {
		return nil
	}
	return proto.Clone(i).(*dfspb.DatanodeInfo)
}
