package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// transferBlockOp serves TRANSFER_BLOCK: during pipeline recovery a client
// asks a surviving datanode to copy the acknowledged prefix of its replica
// to a replacement node (stage TRANSFER_RBW), and waits for the answer.
func (d *DataNode) transferBlockOp(c net.Conn, op *dfspb.TransferBlockOp) {
	b := op.GetBlock()
	if b == nil || len(op.GetTargets()) == 0 {
		_ = d.writeResponse(c, errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, "transfer request needs a block and a target"))
		return
	}
	err := d.pushReplica(d.ctx, b, b.GetNumBytes(), op.GetTargets()[:1], dfspb.WriteStage_TRANSFER_RBW, op.GetClientName(), op.GetToken(), nil)
	if err != nil {
		d.log.Warn("transfer failed", "block", store.BlockName(b.GetBlockId(), b.GetGenerationStamp()),
			"target", dataAddr(op.GetTargets()[0]), "client", op.GetClientName(), "err", err)
		resp := errResponse(statusError, err.Error())
		var se *datatransfer.StatusError
		switch {
		case errors.As(err, &se):
			resp.Status, resp.FirstBadLink = se.Status, se.FirstBadLink
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrCorrupt):
			resp.Status = storeStatus(err)
		}
		_ = d.writeResponse(c, resp)
		return
	}
	_ = d.writeResponse(c, &dfspb.OpResponse{})
}

// transferBlocks runs a TransferCommand: re-replication of finalized
// replicas, each to its targets as a pipeline (stage TRANSFER_FINALIZED).
func (d *DataNode) transferBlocks(items []*dfspb.TransferCommand_Item) {
	for _, it := range items {
		b := it.GetBlock()
		name := store.BlockName(b.GetBlockId(), b.GetGenerationStamp())
		if len(it.GetTargets()) == 0 {
			continue
		}
		r, found := d.store.Get(b.GetBlockId())
		if !found || r.State != store.Finalized {
			d.log.Warn("cannot re-replicate: no finalized replica here", "block", name)
			continue
		}
		start := time.Now()
		var pace *throttle
		if it.GetBalance() {
			pace = d.balance // a balancer move: within balance_bandwidth
		}
		err := d.pushReplica(d.ctx, b, -1, it.GetTargets(), dfspb.WriteStage_TRANSFER_FINALIZED, "", it.GetToken(), pace)
		if err != nil {
			d.log.Warn("re-replication failed", "block", name, "target", dataAddr(it.GetTargets()[0]), "err", err)
			continue
		}
		d.metrics.blocksReplicated.Inc()
		d.log.Info("block replicated", "block", r.Name(), "bytes", r.Length, "targets", len(it.GetTargets()),
			"target", dataAddr(it.GetTargets()[0]), "duration", time.Since(start).Seconds())
	}
}

// pushReplica streams the first length bytes (all if length < 0) of this
// node's replica of b to targets[0], with targets[1:] as the rest of the
// pipeline, and waits until every node has acknowledged the last packet.
// Stored checksums are verified on the way: a corrupt replica is reported
// and not propagated. token is the namenode's (a transfer command's, or the
// client's that asked for the copy): the receivers check it. pace, if
// set, paces the packets (a balancer move's throttle).
func (d *DataNode) pushReplica(ctx context.Context, b *dfspb.ExtendedBlock, length int64, targets []*dfspb.DatanodeInfo, stage dfspb.WriteStage, client string, token *dfspb.BlockToken, pace *throttle) error {
	h, err := d.store.Open(b.GetBlockId(), b.GetGenerationStamp())
	if err != nil {
		return err
	}
	defer h.Close()
	if length < 0 {
		length = h.Visible
	}
	if length > h.Length {
		return fmt.Errorf("%w: %s has %d bytes, fewer than the %d to transfer", store.ErrNotFound, h.Name(), h.Length, length)
	}
	addr := dataAddr(targets[0])
	c, err := d.dial(ctx, addr)
	if err != nil {
		return &datatransfer.StatusError{Status: statusError, Message: fmt.Sprintf("connecting to %s: %v", addr, err), FirstBadLink: addr}
	}
	defer d.closeTracked(c)
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	op := &dfspb.WriteBlockOp{
		Block:            &dfspb.ExtendedBlock{BlockId: h.BlockID, GenerationStamp: h.GS},
		Targets:          targets[1:],
		ClientName:       client,
		Stage:            stage,
		Mode:             dfspb.WriteMode_CLASSIC,
		Token:            token,
		BytesPerChecksum: uint32(h.BytesPerChecksum),
		Source:           d.Info(),
		ExpectedBytes:    uint64(length),
	}
	_ = c.SetDeadline(time.Now().Add(d.cfg.IOTimeout))
	if err := datatransfer.WriteOp(c, op); err != nil {
		return fmt.Errorf("sending transfer request to %s: %w", addr, err)
	}
	br := bufio.NewReaderSize(c, ackBufSize)
	resp, err := datatransfer.ReadResponse(br)
	if err != nil {
		return fmt.Errorf("reading transfer response from %s: %w", addr, err)
	}
	if err := datatransfer.ResponseError(resp); err != nil {
		return err
	}
	_ = c.SetDeadline(time.Time{})
	src, err := newPacketSource(h, 0, length)
	if err != nil {
		return err
	}
	acked := make(chan error, 1)
	last := src.lastSeqno()
	go func() { acked <- d.awaitAcks(c, br, targets, last) }()
	var out net.Conn = c
	if pace != nil {
		out = &throttledConn{Conn: c, ctx: ctx, t: pace}
	}
	if _, err := d.streamPackets(out, src, true); err != nil {
		c.Close()
		<-acked
		var ce *datatransfer.ChecksumError
		if errors.As(err, &ce) || errors.Is(err, store.ErrCorrupt) {
			d.metrics.checksumFailures.Inc()
			d.scanner.corrupt(h.Replica, err)
			return fmt.Errorf("%w: %v", store.ErrCorrupt, err)
		}
		return fmt.Errorf("sending %s to %s: %w", h.Name(), addr, err)
	}
	return <-acked
}

// awaitAcks reads pipeline acks until the last packet's, failing on any
// error status.
func (d *DataNode) awaitAcks(c net.Conn, br *bufio.Reader, targets []*dfspb.DatanodeInfo, last int64) error {
	for {
		_ = c.SetReadDeadline(time.Now().Add(d.cfg.IOTimeout))
		a, err := datatransfer.ReadAck(br)
		if err != nil {
			return fmt.Errorf("reading ack from %s: %w", dataAddr(targets[0]), err)
		}
		if i := a.FirstFailed(); i >= 0 {
			bad := ""
			if i < len(targets) {
				bad = dataAddr(targets[i])
			}
			return &datatransfer.StatusError{Status: a.Statuses[i], Message: fmt.Sprintf("target %s failed packet %d", bad, a.Seqno), FirstBadLink: bad}
		}
		if a.Kind == datatransfer.AckPipeline && a.Seqno == last {
			return nil
		}
	}
}
