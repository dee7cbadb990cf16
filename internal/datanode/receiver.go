package datanode

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

const (
	ok           = dfspb.OpStatus_OP_STATUS_SUCCESS
	statusError  = dfspb.OpStatus_OP_STATUS_ERROR
	maxPipeline  = 16  // targets accepted in one write request
	ackQueueSize = 256 // packets written locally and not yet acked (the client's window is 80)
	// lingerTimeout bounds how long a failed write keeps reading (and
	// discarding) what the upstream still sends after the error ack, so that
	// closing the socket does not reset the connection before the upstream
	// has read that ack.
	lingerTimeout = 5 * time.Second
)

// receiver runs one WRITE_BLOCK: the HDFS BlockReceiver and its
// PacketResponder. Packets are verified and written here; the responder
// acks a packet upstream once it is written here and acked by the
// downstream. When a packet goes downstream is the write mode's
// (writemode.go): classic forwards each packet as it arrives; a
// multi-pipeline first node (SMARTH) forwards it once stored, from a queue
// within the client's buffer budget, and sends FIRST_NODE_FINISH_ACK once
// the whole block is stored.
type receiver struct {
	d      *DataNode
	op     *dfspb.WriteBlockOp
	up     net.Conn
	upR    *bufio.Reader
	pr     *datatransfer.PacketReader
	down   net.Conn      // nil on the last node of the pipeline
	downR  *bufio.Reader // acks from down
	w      *store.Writer
	first  bool      // upstream is the client, not a datanode
	mode   writeMode // classic, or multi-pipeline on a first node
	client *clientState
	name   string

	upMu     sync.Mutex    // serializes writes to up: acks (responder) and the FNFA (receiver), and upWrite
	upRead   *lazyDeadline // receiver goroutine only
	upWrite  *lazyDeadline // guarded by upMu
	upAcks   []byte        // guarded by upMu: encoded acks not yet written (see writeAck)
	downW    *lazyDeadline // the goroutine forwarding (receiver, or the multi-pipeline forwarder)
	downRead *lazyDeadline // responder only
	acks     chan ackItem
	disk     chan diskItem // received packets waiting for the disk stage
	stopped  chan struct{} // closed by stop or abort: the write is over
	stopOnce sync.Once
	// downBroken: forwarding failed; the responder waits only briefly for
	// the downstream's (error) ack.
	downBroken atomic.Bool
	lingering  atomic.Bool // abort half-closed up: drain it before closing
	release    func()      // ends the client's pipeline claim (multi-pipeline mode)

	start      time.Time
	startCPU   time.Duration // process CPU time at start
	bytes      int64
	packets    int64     // data packets stored (for the transfer log)
	diskWrites int64     // block-file writes that stored them (batches)
	packetSize int64     // largest packet data length seen
	checksumK  bool      // disk stage: a checksum mismatch was found, discard the replica (read after it ends)
	verify     bool      // this node checks every packet's checksums (see verifies)
	batch      diskBatch // disk stage only: verified packets not yet written
}

// ackItem is one packet handled locally, waiting for its downstream ack.
type ackItem struct {
	seqno    int64
	end      int64 // block offset after the packet's data
	last     bool
	status   dfspb.OpStatus // this node's status for the packet
	received time.Time
}

// receiveBlock runs a WRITE_BLOCK request on connection up.
func (d *DataNode) receiveBlock(up net.Conn, br *bufio.Reader, op *dfspb.WriteBlockOp) {
	r := &receiver{d: d, op: op, up: up, first: op.GetSource() == nil, stopped: make(chan struct{}), release: func() {}}
	r.mode = newWriteMode(r, false)
	if resp := r.setup(br); resp != nil {
		if r.w != nil {
			if op.GetStage() == dfspb.WriteStage_PIPELINE_SETUP_CREATE || op.GetStage() == dfspb.WriteStage_TRANSFER_FINALIZED {
				r.abortReplica()
			} else {
				_ = r.w.Close()
			}
		}
		r.release()
		d.log.Warn("write refused", "block", r.name, "stage", op.GetStage().String(), "client", op.GetClientName(),
			"upstream", up.RemoteAddr().String(), "status", resp.GetStatus().String(), "err", resp.GetMessage())
		_ = d.writeResponse(up, resp)
		return
	}
	defer d.closeTracked(r.down)
	defer r.release()
	r.run()
}

// setup validates the request, prepares the replica and connects the rest
// of the pipeline. It returns nil when the write can start (the success
// response has been sent), else the error response to send.
func (r *receiver) setup(br *bufio.Reader) *dfspb.OpResponse {
	d, op := r.d, r.op
	b := op.GetBlock()
	bpc := int(op.GetBytesPerChecksum())
	if bpc == 0 {
		bpc = datatransfer.DefaultBytesPerChecksum
	}
	r.name = store.BlockName(b.GetBlockId(), b.GetGenerationStamp())
	switch {
	case b == nil:
		return errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, "write request without a block")
	case bpc < datatransfer.MinBytesPerChecksum || bpc > datatransfer.MaxBytesPerChecksum:
		// Refused before any buffer exists: 1-byte chunks would make a
		// 16 MiB packet carry 64 MiB of checksums.
		return errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, fmt.Sprintf("bytes_per_checksum %d not in %d..%d",
			bpc, datatransfer.MinBytesPerChecksum, datatransfer.MaxBytesPerChecksum))
	case len(op.GetTargets()) > maxPipeline:
		return errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, fmt.Sprintf("pipeline of %d targets, limit %d", len(op.GetTargets()), maxPipeline))
	case op.GetStage() == dfspb.WriteStage_TRANSFER_RBW && len(op.GetTargets()) > 0:
		return errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, "TRANSFER_RBW must go to the last node (no targets)")
	case d.recv.full():
		d.metrics.receiveRefusals.Inc()
		return errResponse(busyStatus, fmt.Sprintf("%v (receive_buffer_budget %d bytes in use)", errReceiveBudget, d.recv.inUse()))
	}
	if op.GetMode() == dfspb.WriteMode_MULTI_PIPELINE && op.GetClientName() != "" {
		cs, release, err := d.claimPipeline(op.GetClientName(), b.GetBlockId())
		if err != nil {
			return errResponse(busyStatus, err.Error())
		}
		r.client, r.release = cs, release
		r.mode = newWriteMode(r, r.first)
	}
	w, err := r.openReplica(bpc)
	if err != nil {
		if !errors.Is(err, store.ErrNoSpace) && storeStatus(err) == statusError {
			d.checkVolumesSoon() // not a refusal of the request: maybe the disk
		}
		return errResponse(storeStatus(err), fmt.Sprintf("%s: %v", r.name, err))
	}
	r.w = w
	r.name = w.Replica().Name()
	w.SetStopper(r.stop)
	if op.GetStage() != dfspb.WriteStage_TRANSFER_FINALIZED {
		d.reportBlock(w.Replica(), dfspb.ReceivedStatus_RECEIVING)
	}
	if len(op.GetTargets()) > 0 {
		if resp := r.connectDownstream(bpc); resp != nil {
			return resp
		}
	}
	r.verify = r.verifies()
	r.upR = br
	r.pr = datatransfer.NewPacketReader(br)
	r.pr.BytesPerChecksum = bpc
	r.pr.Claim = r.claimPacket
	if err := d.writeResponse(r.up, &dfspb.OpResponse{}); err != nil {
		return errResponse(statusError, "sending write response: "+err.Error())
	}
	return nil
}

// verifies says whether this node checks the checksums of every packet
// it stores. As in HDFS (BlockReceiver.shouldVerifyChecksum), a node that
// forwards a client's packets down a classic pipeline stores them
// unverified and the last node checks them: every byte a client sees
// acknowledged, and every byte a reader can see (the visible length moves
// with the acks), was checked by the last node, which got the very bytes
// stored upstream (a node forwards and stores one buffer). A corrupt
// packet is reported by the last node (ERROR_CHECKSUM at its position);
// the client drops that node and recovers the rest, which truncates the
// unverified tail away (PIPELINE_SETUP_STREAMING_RECOVERY goes back to
// the acknowledged length). The nodes that verify anyway: the last one; a
// copy between datanodes (no client name: re-replication, a recovery
// transfer), whose source cannot resend; and a multi-pipeline first node,
// which tells the client the block is stored (FNFA) before its downstream
// has checked anything. storePacket also verifies a packet that starts
// inside a chunk, whose on-disk checksums are recomputed from its data.
func (r *receiver) verifies() bool {
	if r.down == nil || r.op.GetClientName() == "" {
		return true
	}
	_, multi := r.mode.(*multiPipelineMode)
	return multi
}

// openReplica creates or reopens the replica for the request's stage.
func (r *receiver) openReplica(bpc int) (*store.Writer, error) {
	b, st := r.op.GetBlock(), r.d.store
	expected := int64(min(r.op.GetExpectedBytes(), math.MaxInt64))
	switch r.op.GetStage() {
	case dfspb.WriteStage_PIPELINE_SETUP_CREATE:
		return st.CreateRBW(b.GetBlockId(), b.GetGenerationStamp(), bpc, false, expected)
	case dfspb.WriteStage_TRANSFER_RBW:
		return st.CreateTransferRBW(b.GetBlockId(), b.GetGenerationStamp(), bpc, expected)
	case dfspb.WriteStage_TRANSFER_FINALIZED:
		return st.CreateRBW(b.GetBlockId(), b.GetGenerationStamp(), bpc, true, expected)
	case dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY:
		if r.op.GetLatestGs() <= b.GetGenerationStamp() {
			return nil, fmt.Errorf("recovery needs a newer generation stamp than %d, got latest_gs %d", b.GetGenerationStamp(), r.op.GetLatestGs())
		}
		return st.RecoverRBW(b.GetBlockId(), r.op.GetLatestGs(), b.GetNumBytes(), bpc)
	case dfspb.WriteStage_PIPELINE_SETUP_APPEND:
		return st.Append(b.GetBlockId(), b.GetGenerationStamp(), r.op.GetLatestGs(), b.GetNumBytes(), bpc)
	}
	return nil, fmt.Errorf("%w: unknown write stage %s", errInvalid, r.op.GetStage())
}

var errInvalid = errors.New("invalid request")

func storeStatus(err error) dfspb.OpStatus {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND
	case errors.Is(err, store.ErrExists):
		return dfspb.OpStatus_OP_STATUS_ERROR_EXISTS
	case errors.Is(err, store.ErrCorrupt):
		return dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM
	case errors.Is(err, errInvalid):
		return dfspb.OpStatus_OP_STATUS_ERROR_INVALID
	}
	return statusError
}

// connectDownstream sends the request on to targets[0] with the remaining
// targets and waits for its response; a failure names the bad node.
func (r *receiver) connectDownstream(bpc int) *dfspb.OpResponse {
	d, op := r.d, r.op
	next := op.GetTargets()[0]
	addr := dataAddr(next)
	fail := func(msg string, resp *dfspb.OpResponse) *dfspb.OpResponse {
		out := &dfspb.OpResponse{Status: statusError, Message: msg, FirstBadLink: addr}
		if resp != nil {
			out.Status = resp.GetStatus()
			if resp.GetFirstBadLink() != "" {
				out.FirstBadLink = resp.GetFirstBadLink()
			}
		}
		return out
	}
	c, err := d.dial(d.ctx, addr)
	if err != nil {
		return fail(fmt.Sprintf("connecting to downstream datanode %s: %v", addr, err), nil)
	}
	r.down = c
	fwd := &dfspb.WriteBlockOp{
		Block:            op.GetBlock(),
		Targets:          op.GetTargets()[1:],
		ClientName:       op.GetClientName(),
		Stage:            op.GetStage(),
		Mode:             op.GetMode(),
		Token:            op.GetToken(),
		BytesPerChecksum: uint32(bpc),
		LatestGs:         op.GetLatestGs(),
		Source:           d.Info(),
		ExpectedBytes:    op.GetExpectedBytes(),
	}
	_ = c.SetDeadline(time.Now().Add(d.cfg.IOTimeout))
	if err := datatransfer.WriteOp(c, fwd); err != nil {
		return fail(fmt.Sprintf("sending write request to %s: %v", addr, err), nil)
	}
	r.downR = bufio.NewReaderSize(c, ackBufSize)
	resp, err := datatransfer.ReadResponse(r.downR)
	if err != nil {
		return fail(fmt.Sprintf("reading write response from %s: %v", addr, err), nil)
	}
	if resp.GetStatus() != ok {
		return fail(fmt.Sprintf("downstream %s: %s", addr, resp.GetMessage()), resp)
	}
	_ = c.SetDeadline(time.Time{})
	return nil
}

// stop tears the write down from outside (the store taking the replica
// over, a failure elsewhere): both connections close, every goroutine of
// the receiver ends.
func (r *receiver) stop() {
	r.stopOnce.Do(func() {
		close(r.stopped)
		r.up.Close()
		if r.down != nil {
			r.down.Close()
		}
	})
}

// abort ends the write after an error ack went upstream: the downstream
// connection closes, the upstream one is half-closed so the ack arrives
// before the end of the stream, and run drains what the upstream still
// sends for a while before closing it.
func (r *receiver) abort() {
	r.stopOnce.Do(func() {
		close(r.stopped)
		r.lingering.Store(true)
		if hc, ok := r.up.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		}
		_ = r.up.SetReadDeadline(time.Now().Add(min(lingerTimeout, r.d.cfg.IOTimeout)))
		if r.down != nil {
			r.down.Close()
		}
	})
}

// run streams the block; it returns when the write has ended either way.
// Two stages run at once: receive (this goroutine) reads packets and, in
// classic mode, forwards them downstream at once; the disk stage verifies
// and stores them and hands them to the write mode and the responder.
// Forwarding thus never waits for the local disk, and on a machine with
// several cores reading the next packet overlaps with writing the last.
func (r *receiver) run() {
	r.start, r.startCPU = time.Now(), processCPU()
	r.acks = make(chan ackItem, r.mode.ackQueueLen())
	r.disk = make(chan diskItem, diskQueueSize)
	r.upRead = newLazyDeadline(r.up.SetReadDeadline, r.d.cfg.IOTimeout)
	r.upWrite = newLazyDeadline(r.up.SetWriteDeadline, r.d.cfg.IOTimeout)
	if r.down != nil {
		r.downW = newLazyDeadline(r.down.SetWriteDeadline, r.d.cfg.IOTimeout)
		r.downRead = newLazyDeadline(r.down.SetReadDeadline, r.d.cfg.IOTimeout)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.respond() }()
	r.mode.start(&wg)
	diskDone := make(chan error, 1)
	go func() { diskDone <- r.storePackets() }()

	err := r.receive()
	if err != nil && !errors.Is(err, errLocal) {
		// Upstream is gone or the write was stopped: nothing more will
		// be acked.
		r.stop()
	}
	close(r.disk)
	derr := <-diskDone
	close(r.acks)
	r.mode.end()
	if err == nil {
		err = derr
	}
	if err != nil {
		// A corrupt packet is never stored, so what an append stored is
		// good and the replica's earlier bytes are not the writer's to
		// throw away: it waits for recovery like any replica being written.
		if r.checksumK && r.op.GetStage() != dfspb.WriteStage_PIPELINE_SETUP_APPEND {
			r.abortReplica()
		} else {
			_ = r.w.Close()
		}
	}
	wg.Wait()
	if r.lingering.Load() {
		_, _ = io.Copy(io.Discard, r.upR)
	}
	if err != nil && !isClosed(err) && !errors.Is(err, errStopped) {
		r.d.log.Warn("block receive failed", "block", r.name, "bytes", r.bytes, "stage", r.op.GetStage().String(),
			"upstream", r.up.RemoteAddr().String(), "client", r.op.GetClientName(), "err", err)
	}
}

// abortReplica deletes the replica of a failed write; one whose files
// cannot be removed stays, marked corrupt, and is logged.
func (r *receiver) abortReplica() {
	if err := r.w.Abort(); err != nil {
		r.d.log.Error("cannot delete the replica of a failed write", "block", r.name, "err", err)
	}
}

// errLocal marks a failure this node reports in its own ack status.
var errLocal = errors.New("local failure")

var errStopped = errors.New("write stopped")

const diskQueueSize = 32 // packets received and not yet stored (2 MiB)

// diskItem is a packet for the disk stage, or a failure found by the
// receive stage that must be acked in order (p == nil).
type diskItem struct {
	p       *datatransfer.Packet
	arrived time.Time
	seqno   int64
	status  dfspb.OpStatus
	err     error
}

// receive reads packets until the last one, forwarding each downstream
// at once in classic mode, and passes them to the disk stage.
func (r *receiver) receive() error {
	expect := int64(0)
	for {
		select {
		case <-r.stopped:
			return errStopped
		default:
		}
		r.upRead.refresh()
		p, err := r.pr.Next()
		if err != nil {
			err = fmt.Errorf("reading packet from %s: %w", r.up.RemoteAddr(), err)
			if st, refused := refusalStatus(err); refused {
				// Say so upstream in an error ack (an oversized or
				// malformed packet, no memory for it) instead of only
				// dropping the connection.
				r.toDisk(diskItem{seqno: expect, status: st, err: err})
				return fmt.Errorf("%w: %w", errLocal, err)
			}
			return err
		}
		h := p.Header
		if !h.Heartbeat() {
			if h.Seqno != expect {
				p.Release()
				err := fmt.Errorf("%w: %w: packet seqno %d, expected %d", errLocal, datatransfer.ErrProtocol, h.Seqno, expect)
				r.toDisk(diskItem{seqno: h.Seqno, status: dfspb.OpStatus_OP_STATUS_ERROR_INVALID, err: err})
				return err
			}
			expect++
		}
		// Classic mode forwards the packet here; a failed forward still
		// stores it (see classicMode.received).
		downErr := r.mode.received(p)
		if !r.toDisk(diskItem{p: p, arrived: time.Now()}) {
			return errStopped
		}
		if downErr != nil {
			return downErr
		}
		if h.Last() {
			return nil
		}
	}
}

// claimPacket is the packet reader's Claim: a packet's buffer comes out of
// the datanode's receive_buffer_budget, waiting up to io_timeout for room.
func (r *receiver) claimPacket(n int) (func(), error) {
	unclaim, err := r.d.recv.claim(int64(n), r.d.cfg.IOTimeout, r.stopped)
	if errors.Is(err, errReceiveBudget) {
		r.d.metrics.receiveRefusals.Inc()
	}
	return unclaim, err
}

// refusalStatus is the ack status for a packet this node refused to read:
// malformed (over 16 MiB, wrong chunk size) or beyond the memory budget.
func refusalStatus(err error) (dfspb.OpStatus, bool) {
	switch {
	case errors.Is(err, errReceiveBudget):
		return busyStatus, true
	case errors.Is(err, datatransfer.ErrProtocol):
		return dfspb.OpStatus_OP_STATUS_ERROR_INVALID, true
	}
	return ok, false
}

func (r *receiver) toDisk(it diskItem) bool {
	select {
	case r.disk <- it:
		return true
	case <-r.stopped:
		if it.p != nil {
			it.p.Release()
		}
		return false
	}
}

// verifyPacket checks p's checksums if this node verifies (see verifies)
// or must.
func (r *receiver) verifyPacket(p *datatransfer.Packet, must bool) error {
	if !r.verify && !must {
		return nil
	}
	return p.Verify()
}

func (r *receiver) writeDown(b []byte) error {
	r.downW.refresh()
	if _, err := r.down.Write(b); err != nil {
		// The responder reports the broken downstream upstream when it
		// reads the next ack: the downstream's own error ack if it sent one
		// (it may name a node further down), else a read error. Make that
		// read quick.
		r.downBroken.Store(true)
		_ = r.down.SetReadDeadline(time.Now().Add(min(lingerTimeout, r.d.cfg.IOTimeout)))
		return fmt.Errorf("%w: forwarding to %s: %v", errLocal, r.down.RemoteAddr(), err)
	}
	return nil
}

// setAckDeadline bounds the wait for the downstream's next ack, briefly
// once forwarding has failed (see writeDown for the ordering).
func (r *receiver) setAckDeadline() {
	if !r.downBroken.Load() {
		r.downRead.refresh()
	}
	if r.downBroken.Load() {
		_ = r.down.SetReadDeadline(time.Now().Add(min(lingerTimeout, r.d.cfg.IOTimeout)))
	}
}

// push queues a locally handled packet for the responder.
func (r *receiver) push(it ackItem) bool {
	select {
	case r.acks <- it:
		return true
	case <-r.stopped:
		return false
	}
}

// localFailure queues this node's error status for the packet; the
// responder sends it upstream and closes the connection.
func (r *receiver) localFailure(seqno int64, st dfspb.OpStatus, err error) error {
	r.push(ackItem{seqno: seqno, status: st})
	return fmt.Errorf("%w: %v", errLocal, err)
}

// complete ends the replica after its last packet: finalized and reported
// RECEIVED, except TRANSFER_RBW which stays a replica being written. It
// logs the block-receive line.
func (r *receiver) complete() error {
	end := time.Now()
	stage := r.op.GetStage()
	var rep store.Replica
	if stage == dfspb.WriteStage_TRANSFER_RBW {
		rep = r.w.Replica()
		r.w.SetVisible(rep.Length)
		if err := r.w.Close(); err != nil {
			return err
		}
	} else {
		var err error
		if rep, err = r.w.Finalize(); err != nil {
			return err
		}
		r.d.reportBlock(rep, dfspb.ReceivedStatus_RECEIVED)
		r.d.metrics.blocksWritten.Inc()
		r.d.dropBehindWrite(rep)
	}
	r.d.logBlockReceived(r, rep, end)
	return nil
}

// sendFNFA tells a multi-pipeline client that this node has stored every
// packet of the block.
func (r *receiver) sendFNFA(seqno int64) {
	r.writeAck(datatransfer.Ack{Kind: datatransfer.AckFirstNodeFinish, Seqno: seqno, Statuses: []dfspb.OpStatus{ok}}, true)
}

// maxHeldAcks bounds how many acks wait to be written together.
const maxHeldAcks = 32

// writeAck sends an ack upstream. With flush false it may only be queued,
// to go out with the next ones in one write: when acks pile up (the
// responder finds the next one ready at once) that saves a system call per
// packet; a queued ack waits only for work already at hand.
func (r *receiver) writeAck(a datatransfer.Ack, flush bool) error {
	r.upMu.Lock()
	defer r.upMu.Unlock()
	r.upAcks = a.Append(r.upAcks)
	if !flush && len(r.upAcks) < maxHeldAcks*(10+maxPipeline) {
		return nil
	}
	r.upWrite.refresh()
	_, err := r.up.Write(r.upAcks)
	r.upAcks = r.upAcks[:0]
	return err
}

// nextAckReady reports whether the responder can ack another packet
// without waiting: the next local item is queued and (with a downstream)
// the downstream's next ack is already buffered.
func (r *receiver) nextAckReady() bool {
	if len(r.acks) == 0 {
		return false
	}
	if r.down == nil {
		return true
	}
	const fixed = 10 // kind, seqno, n; then n statuses
	if r.downR.Buffered() < fixed {
		return false
	}
	hdr, err := r.downR.Peek(fixed)
	return err == nil && r.downR.Buffered() >= fixed+int(hdr[fixed-1])
}

// respond is the packet responder: for each packet handled locally, in
// order, it waits for the downstream's ack of it, prepends this node's
// status and sends the ack upstream. Any failure is reported in one error
// ack that names the failing node by its position, then the write ends.
func (r *receiver) respond() {
	for it := range r.acks {
		if it.status != ok {
			_ = r.writeAck(datatransfer.Ack{Seqno: it.seqno, Statuses: []dfspb.OpStatus{it.status}}, true)
			r.abort()
			return
		}
		statuses := []dfspb.OpStatus{ok}
		if r.down != nil {
			r.setAckDeadline()
			a, err := datatransfer.ReadAck(r.downR)
			switch {
			case err != nil:
				err = fmt.Errorf("reading ack from downstream %s: %w", r.down.RemoteAddr(), err)
			case a.Kind != datatransfer.AckPipeline || a.Seqno != it.seqno:
				err = fmt.Errorf("downstream %s sent %s for seqno %d, expected an ack of %d", r.down.RemoteAddr(), a.Kind, a.Seqno, it.seqno)
			}
			if err != nil {
				r.downstreamFailed(it.seqno, err)
				return
			}
			statuses = append(statuses, a.Statuses...)
			if a.FirstFailed() >= 0 {
				_ = r.writeAck(datatransfer.Ack{Seqno: it.seqno, Statuses: statuses}, true)
				r.abort()
				return
			}
		}
		if it.last {
			// The claim must be gone before the client sees the block
			// complete and opens its next pipeline through this node.
			r.release()
		}
		if err := r.writeAck(datatransfer.Ack{Seqno: it.seqno, Statuses: statuses}, it.last || !r.nextAckReady()); err != nil {
			r.stop()
			return
		}
		if it.seqno >= 0 {
			r.w.SetVisible(it.end)
		}
		r.d.metrics.ackLatency.Observe(time.Since(it.received).Seconds())
		if it.last {
			return
		}
	}
}

// downstreamFailed reports the node after this one as failed (status[1])
// and ends the write, unless the write was stopped from here anyway.
func (r *receiver) downstreamFailed(seqno int64, err error) {
	select {
	case <-r.stopped:
		return
	default:
	}
	r.d.log.Warn("downstream datanode failed", "block", r.name, "downstream", r.down.RemoteAddr().String(), "err", err)
	_ = r.writeAck(datatransfer.Ack{Seqno: seqno, Statuses: []dfspb.OpStatus{ok, statusError}}, true)
	r.abort()
}

// logBlockReceived writes the block-receive line (see the package doc for
// its keys; the network-tuning work parses it).
func (d *DataNode) logBlockReceived(r *receiver, rep store.Replica, end time.Time) {
	dur := end.Sub(r.start)
	secs := max(dur.Seconds(), 1e-9)
	mode := r.op.GetMode()
	if mode == dfspb.WriteMode_WRITE_MODE_UNSPECIFIED {
		mode = dfspb.WriteMode_CLASSIC
	}
	d.metrics.writeThroughput.Observe(float64(r.bytes) / secs)
	cpu := processCPU() - r.startCPU
	d.logTransfer(r, rep, end, cpu)
	d.log.Info("block received",
		"block", rep.Name(),
		"gs", rep.GS,
		"bytes", r.bytes,
		"length", rep.Length,
		"start", r.start,
		"end", end,
		"duration", dur.Seconds(),
		"mib_per_s", float64(r.bytes)/secs/(1<<20),
		"mbit_per_s", float64(r.bytes)*8/secs/1e6,
		"stage", r.op.GetStage().String(),
		"mode", mode.String(),
		"upstream", r.up.RemoteAddr().String(),
		"client", r.op.GetClientName(),
		"downstream", len(r.op.GetTargets()),
		"cpu_seconds", cpu.Seconds(),
		"packets", r.packets,
		"disk_writes", r.diskWrites,
	)
}

// processCPU is the user + system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
