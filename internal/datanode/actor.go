package datanode

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

const rpcTimeout = 30 * time.Second

// runActor is the namenode conversation, after HDFS's BPServiceActor:
// register, send a full block report, then heartbeat every
// heartbeat_interval and report again every block_report_interval, running
// the commands that come back. When the namenode is down it retries with
// backoff; when it has forgotten this node it registers again.
func (d *DataNode) runActor() {
	backoff := newBackoff(100*time.Millisecond, 5*time.Second)
	for d.ctx.Err() == nil {
		if err := d.register(); err != nil {
			d.log.Warn("cannot register with the namenode; retrying", "namenode", d.cfg.NameNode, "err", err)
			d.sleep(backoff.next())
			continue
		}
		backoff.reset()
		d.heartbeatLoop()
	}
}

func (d *DataNode) sleep(t time.Duration) {
	select {
	case <-d.ctx.Done():
	case <-time.After(t):
	}
}

func (d *DataNode) register() error {
	info := d.Info()
	if u, err := d.store.Usage(); err == nil {
		info.Capacity, info.DfsUsed, info.Remaining, info.NumBlocks = u.Capacity, u.Used, u.Remaining, int64(u.Blocks)
	}
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	resp, err := d.nn.RegisterDatanode(ctx, &dfspb.RegisterDatanodeRequest{Datanode: info})
	if err != nil {
		return rpcError("register", err)
	}
	// Serial 0: the first heartbeat fetches the set again with its serial.
	d.tokens.Update(resp.GetBlockKeys(), 0)
	d.log.Info("registered with the namenode", "namenode", d.cfg.NameNode, "rack", resp.GetDatanode().GetRack(),
		"block_tokens", d.tokens.Enabled())
	d.ibr.wake()
	return d.blockReport()
}

// heartbeatLoop returns when the node must register again (or is stopping).
func (d *DataNode) heartbeatLoop() {
	hb := time.NewTicker(d.cfg.HeartbeatInterval)
	defer hb.Stop()
	lastReport := time.Now()
	backoff := newBackoff(100*time.Millisecond, d.cfg.HeartbeatInterval)
	d.reportCorruptAtStart()
	for {
		resp, err := d.heartbeat()
		switch {
		case err != nil && mustReregister(err):
			d.log.Warn("namenode does not know this datanode; registering again", "err", err)
			return
		case err != nil:
			d.log.Warn("heartbeat failed", "namenode", d.cfg.NameNode, "err", err)
			d.sleep(backoff.next())
			if d.ctx.Err() != nil {
				return
			}
			continue
		}
		backoff.reset()
		if d.runCommands(resp.GetCommands()) {
			return
		}
		if resp.GetFullBlockReportRequested() || time.Since(lastReport) >= d.cfg.BlockReportInterval {
			if err := d.blockReport(); err != nil {
				d.log.Warn("block report failed", "err", err)
			} else {
				lastReport = time.Now()
			}
		}
		select {
		case <-d.ctx.Done():
			return
		case <-hb.C:
		}
	}
}

func mustReregister(err error) bool {
	c := status.Code(err)
	return c == codes.NotFound || c == codes.FailedPrecondition
}

func (d *DataNode) heartbeat() (*dfspb.HeartbeatResponse, error) {
	u, err := d.store.Usage()
	if err != nil {
		d.log.Warn("disk usage", "err", err)
	}
	req := &dfspb.HeartbeatRequest{
		DatanodeId:   d.ID(),
		Capacity:     u.Capacity,
		DfsUsed:      u.Used,
		Remaining:    u.Remaining,
		XceiverCount: int32(d.xceivers()),

		BlockKeysSerial: d.tokens.Serial(),
	}
	d.cacher.report(req)
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	start := time.Now()
	resp, err := d.nn.SendHeartbeat(ctx, req)
	if err != nil {
		return nil, rpcError("heartbeat", err)
	}
	d.metrics.heartbeatLatency.Observe(time.Since(start).Seconds())
	d.tokens.Update(resp.GetBlockKeys(), resp.GetBlockKeysSerial())
	return resp, nil
}

func (d *DataNode) xceivers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// blockReport sends every replica this node has (finalized and RBW/RUR).
func (d *DataNode) blockReport() error {
	reps := d.store.Replicas()
	req := &dfspb.BlockReportRequest{DatanodeId: d.ID(), Blocks: make([]*dfspb.ReportedBlock, 0, len(reps))}
	for _, r := range reps {
		req.Blocks = append(req.Blocks, &dfspb.ReportedBlock{Block: extended(r), State: replicaState(r.State)})
	}
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	resp, err := d.nn.BlockReport(ctx, req)
	if err != nil {
		return rpcError("block report", err)
	}
	d.log.Info("block report sent", "blocks", len(req.Blocks))
	d.runCommands(resp.GetCommands())
	return nil
}

func extended(r store.Replica) *dfspb.ExtendedBlock {
	return &dfspb.ExtendedBlock{BlockId: r.BlockID, GenerationStamp: r.GS, NumBytes: r.Length}
}

func replicaState(s store.State) dfspb.ReplicaState {
	switch s {
	case store.Finalized:
		return dfspb.ReplicaState_FINALIZED
	case store.RBW:
		return dfspb.ReplicaState_RBW
	case store.RUR:
		return dfspb.ReplicaState_RUR
	}
	return dfspb.ReplicaState_REPLICA_STATE_UNSPECIFIED
}

// runCommands executes the namenode's commands; long ones run in the
// background. It reports whether the namenode asked for re-registration.
func (d *DataNode) runCommands(cmds []*dfspb.DatanodeCommand) (reregister bool) {
	for _, c := range cmds {
		switch {
		case c.GetTransfer() != nil:
			items := c.GetTransfer().GetItems()
			d.goRun(func() { d.transferBlocks(items) })
		case c.GetInvalidate() != nil:
			d.invalidate(c.GetInvalidate().GetBlocks())
		case c.GetRecover() != nil:
			rc := c.GetRecover()
			d.goRun(func() { d.recoverBlock(rc) })
		case c.GetCache() != nil:
			d.cacher.enqueue(c.GetCache().GetBlockIds())
		case c.GetUncache() != nil:
			d.cacher.uncache(c.GetUncache().GetBlockIds())
		case c.GetReregister():
			reregister = true
		}
	}
	return reregister
}

// invalidate deletes replicas the namenode no longer wants here.
func (d *DataNode) invalidate(blocks []*dfspb.ExtendedBlock) {
	for _, b := range blocks {
		r, err := d.store.Delete(b.GetBlockId(), b.GetGenerationStamp())
		if err != nil {
			d.log.Warn("invalidate: cannot delete replica", "block", store.BlockName(b.GetBlockId(), b.GetGenerationStamp()), "err", err)
			continue
		}
		d.metrics.blocksRemoved.Inc()
		d.log.Info("replica deleted", "block", r.Name(), "bytes", r.Length)
		d.reportBlock(r, dfspb.ReceivedStatus_DELETED)
	}
}

// reportCorruptAtStart reports replicas found damaged when the store was
// opened (meta file not matching its block file).
func (d *DataNode) reportCorruptAtStart() {
	for _, r := range d.store.Replicas() {
		if r.Corrupt {
			d.scanner.reportBad(r)
		}
	}
}

// reportBlock queues an incremental report (RECEIVING, RECEIVED, DELETED).
func (d *DataNode) reportBlock(r store.Replica, st dfspb.ReceivedStatus) {
	if d.killed.Load() {
		return
	}
	d.ibr.add(&dfspb.ReceivedDeletedBlock{Block: extended(r), Status: st})
}

// runReports sends incremental block reports as soon as they are queued,
// requeueing them while the namenode is unreachable.
func (d *DataNode) runReports() {
	backoff := newBackoff(100*time.Millisecond, 5*time.Second)
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-d.ibr.ready:
		}
		batch := d.ibr.take()
		if len(batch) == 0 {
			continue
		}
		ctx, cancel := d.rpcContext(rpcTimeout)
		_, err := d.nn.BlockReceivedAndDeleted(ctx, &dfspb.BlockReceivedAndDeletedRequest{DatanodeId: d.ID(), Blocks: batch})
		cancel()
		if err != nil {
			d.ibr.requeue(batch)
			d.log.Warn("incremental block report failed; will retry", "blocks", len(batch), "err", rpcError("block received", err))
			d.sleep(backoff.next())
			d.ibr.wake()
			continue
		}
		backoff.reset()
	}
}

// reportQueue holds incremental reports not yet sent.
type reportQueue struct {
	mu      sync.Mutex
	pending []*dfspb.ReceivedDeletedBlock // guarded by mu
	ready   chan struct{}                 // one token: something to send
}

func newReportQueue() *reportQueue { return &reportQueue{ready: make(chan struct{}, 1)} }

func (q *reportQueue) add(b *dfspb.ReceivedDeletedBlock) {
	q.mu.Lock()
	q.pending = append(q.pending, b)
	q.mu.Unlock()
	q.wake()
}

func (q *reportQueue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *reportQueue) take() []*dfspb.ReceivedDeletedBlock {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.pending
	q.pending = nil
	return b
}

func (q *reportQueue) requeue(b []*dfspb.ReceivedDeletedBlock) {
	q.mu.Lock()
	q.pending = append(b, q.pending...)
	q.mu.Unlock()
}

// backoff doubles a wait up to a limit.
type backoff struct{ cur, min, max time.Duration }

func newBackoff(min, max time.Duration) *backoff { return &backoff{cur: min, min: min, max: max} }

func (b *backoff) next() time.Duration {
	t := b.cur
	b.cur = min(b.cur*2, b.max)
	return t
}

func (b *backoff) reset() { b.cur = b.min }

// rpcError turns a gRPC error into a readable one.
func rpcError(what string, err error) error {
	if s, ok := status.FromError(err); ok {
		return &namenodeError{what: what, code: s.Code(), msg: s.Message()}
	}
	return err
}

type namenodeError struct {
	what string
	code codes.Code
	msg  string
}

func (e *namenodeError) Error() string {
	if e.code == codes.Unavailable {
		return e.what + ": namenode unreachable: " + e.msg
	}
	return e.what + ": " + e.msg
}

// GRPCStatus keeps the code visible to status.Code.
func (e *namenodeError) GRPCStatus() *status.Status { return status.New(e.code, e.msg) }
