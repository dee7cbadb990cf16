package datanode

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

const rpcTimeout = 30 * time.Second

// bpActor is the datanode's conversation with one namenode, after HDFS's
// BPServiceActor: a datanode of an HA group runs one per namenode
// (HDFS's BPOfferService), so that every namenode, the standbys too, has
// the block map at once when it becomes active. Each registers,
// heartbeats, sends full, incremental and cache reports, and takes the
// block keys of its namenode; only the commands of the namenode the
// datanode obeys (fence) are run.
type bpActor struct {
	d    *DataNode
	addr string
	conn *grpc.ClientConn
	nn   dfspb.DatanodeProtocolClient
	ibr  *reportQueue // incremental block reports waiting to be sent here
	// source names this namenode's block keys in the verifier: "" with a
	// single namenode (the verifier as before), else its address.
	source string
	// noHA: the namenode's last heartbeat reply carried no HA status (a
	// namenode without HA, obeyed as always); set before the first reply
	// when it is the only namenode.
	noHA atomic.Bool
	// dropped is the HA status whose commands were last dropped, so that
	// each refusal is logged once, not at every heartbeat.
	dropped atomic.Pointer[string]
}

// runActor is the namenode conversation, after HDFS's BPServiceActor:
// register, send a full block report, then heartbeat every
// heartbeat_interval and report again every block_report_interval, running
// the commands that come back. When the namenode is down it retries with
// backoff; when it has forgotten this node it registers again.
func (a *bpActor) run() {
	d := a.d
	backoff := newBackoff(100*time.Millisecond, 5*time.Second)
	for d.ctx.Err() == nil {
		if err := a.register(); err != nil {
			d.log.Warn("cannot register with the namenode; retrying", "namenode", a.addr, "err", err)
			d.sleep(backoff.next())
			continue
		}
		backoff.reset()
		a.heartbeatLoop()
	}
}

func (d *DataNode) sleep(t time.Duration) {
	select {
	case <-d.ctx.Done():
	case <-time.After(t):
	}
}

func (a *bpActor) register() error {
	d := a.d
	info := d.Info()
	if u, err := d.store.Usage(); err == nil {
		info.Capacity, info.DfsUsed, info.Remaining, info.NumBlocks = u.Capacity, u.Used, u.Remaining, int64(u.Blocks)
	}
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	resp, err := a.nn.RegisterDatanode(ctx, &dfspb.RegisterDatanodeRequest{Datanode: info})
	if err != nil {
		return rpcError("register", err)
	}
	// Serial 0: the first heartbeat fetches the set again with its serial.
	d.tokens.UpdateFrom(a.source, resp.GetBlockKeys(), 0)
	d.log.Info("registered with the namenode", "namenode", a.addr, "rack", resp.GetDatanode().GetRack(),
		"block_tokens", d.tokens.Enabled())
	a.ibr.wake()
	return a.blockReport()
}

// heartbeatLoop returns when the node must register again (or is stopping).
func (a *bpActor) heartbeatLoop() {
	d := a.d
	hb := time.NewTicker(d.cfg.HeartbeatInterval)
	defer hb.Stop()
	lastReport := time.Now()
	backoff := newBackoff(100*time.Millisecond, d.cfg.HeartbeatInterval)
	d.reportCorruptAtStart()
	for {
		resp, err := a.heartbeat()
		switch {
		case err != nil && mustReregister(err):
			d.log.Warn("namenode does not know this datanode; registering again", "namenode", a.addr, "err", err)
			return
		case err != nil:
			d.log.Warn("heartbeat failed", "namenode", a.addr, "err", err)
			d.sleep(backoff.next())
			if d.ctx.Err() != nil {
				return
			}
			continue
		}
		backoff.reset()
		d.fence(a, resp.GetHaStatus())
		if a.runCommands(resp.GetCommands(), resp.GetHaStatus()) {
			return
		}
		if resp.GetFullBlockReportRequested() || time.Since(lastReport) >= d.cfg.BlockReportInterval {
			if err := a.blockReport(); err != nil {
				d.log.Warn("block report failed", "namenode", a.addr, "err", err)
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

func (a *bpActor) heartbeat() (*dfspb.HeartbeatResponse, error) {
	d := a.d
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

		BlockKeysSerial: d.tokens.SerialOf(a.source),
	}
	d.cacher.report(req)
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	start := time.Now()
	resp, err := a.nn.SendHeartbeat(ctx, req)
	if err != nil {
		return nil, rpcError("heartbeat", err)
	}
	d.metrics.heartbeatLatency.Observe(time.Since(start).Seconds())
	d.tokens.UpdateFrom(a.source, resp.GetBlockKeys(), resp.GetBlockKeysSerial())
	return resp, nil
}

// fence records a heartbeat reply's HA status, which decides whether a's
// commands are obeyed (obeys): a namenode without HA (no status) always
// is; in an HA group only the one that says ACTIVE at the highest term
// seen from any namenode (raft's term, HDFS's epoch) is. A standby, or an active at a
// lower term (a deposed leader that has not noticed yet), gives no
// orders; the first namenode to claim a term keeps it against a second
// claim of the same term.
func (d *DataNode) fence(a *bpActor, ha *dfspb.NNHAStatus) {
	a.noHA.Store(ha == nil)
	if ha == nil {
		return
	}
	d.haMu.Lock()
	defer d.haMu.Unlock()
	if ha.GetTerm() > d.haTerm {
		d.haTerm = ha.GetTerm()
		if d.haActive != a {
			d.haActive = nil // the active of an older term is deposed
		}
	}
	switch {
	case ha.GetState() == dfspb.HAState_ACTIVE && ha.GetTerm() == d.haTerm && (d.haActive == nil || d.haActive == a):
		if d.haActive != a {
			d.log.Info("namenode is active; obeying its commands", "namenode", a.addr, "term", ha.GetTerm())
		}
		d.haActive = a
	case d.haActive == a:
		d.haActive = nil // it stepped down, or a higher term deposed it
	}
}

// obeys reports whether a's commands are run now: a namenode without HA,
// or the active of the highest term (fence).
func (d *DataNode) obeys(a *bpActor) bool {
	if a.noHA.Load() {
		return true
	}
	d.haMu.Lock()
	defer d.haMu.Unlock()
	return d.haActive == a
}

// activeNN is the namenode whose commands are obeyed, for the calls that
// belong to it alone (commitBlockSynchronization answers its recovery
// command); the first namenode while none is known.
func (d *DataNode) activeNN() dfspb.DatanodeProtocolClient {
	for _, a := range d.actors {
		if d.obeys(a) {
			return a.nn
		}
	}
	return d.actors[0].nn
}

func (d *DataNode) xceivers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// blockReport sends every replica this node has (finalized and RBW/RUR).
func (a *bpActor) blockReport() error {
	d := a.d
	reps := d.store.Replicas()
	req := &dfspb.BlockReportRequest{DatanodeId: d.ID(), Blocks: make([]*dfspb.ReportedBlock, 0, len(reps))}
	for _, r := range reps {
		req.Blocks = append(req.Blocks, &dfspb.ReportedBlock{Block: extended(r), State: replicaState(r.State)})
	}
	ctx, cancel := d.rpcContext(rpcTimeout)
	defer cancel()
	resp, err := a.nn.BlockReport(ctx, req)
	if err != nil {
		return rpcError("block report", err)
	}
	d.log.Info("block report sent", "namenode", a.addr, "blocks", len(req.Blocks))
	a.runCommands(resp.GetCommands(), nil)
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

// runCommands executes the namenode's commands when it is the one obeyed
// (fence; ha is the status of the reply that carried them, for the log);
// long ones run in the background. A request to register again is
// honoured from any namenode: it concerns this conversation only. It
// reports whether the namenode asked for re-registration.
func (a *bpActor) runCommands(cmds []*dfspb.DatanodeCommand, ha *dfspb.NNHAStatus) (reregister bool) {
	d := a.d
	obey := d.obeys(a)
	if !obey {
		a.logDropped(cmds, ha)
	} else {
		a.dropped.Store(nil)
	}
	for _, c := range cmds {
		if c.GetReregister() {
			reregister = true
		}
		if !obey {
			continue
		}
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
		}
	}
	return reregister
}

// logDropped says, once per HA status of the namenode, that its commands
// are not run.
func (a *bpActor) logDropped(cmds []*dfspb.DatanodeCommand, ha *dfspb.NNHAStatus) {
	if len(cmds) == 0 {
		return
	}
	why := "not yet known to be the active"
	if ha != nil {
		why = fmt.Sprintf("%s at term %d", ha.GetState(), ha.GetTerm())
	}
	if p := a.dropped.Swap(&why); p != nil && *p == why {
		return
	}
	a.d.haMu.Lock()
	term := a.d.haTerm
	a.d.haMu.Unlock()
	a.d.log.Warn("dropping commands of a namenode that is not the active one", "namenode", a.addr, "state", why, "highest_term", term, "commands", len(cmds))
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
	for _, a := range d.actors {
		a.ibr.add(&dfspb.ReceivedDeletedBlock{Block: extended(r), Status: st})
	}
}

// runReports sends incremental block reports as soon as they are queued,
// requeueing them while the namenode is unreachable.
func (a *bpActor) runReports() {
	d := a.d
	backoff := newBackoff(100*time.Millisecond, 5*time.Second)
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-a.ibr.ready:
		}
		batch := a.ibr.take()
		if len(batch) == 0 {
			continue
		}
		ctx, cancel := d.rpcContext(rpcTimeout)
		_, err := a.nn.BlockReceivedAndDeleted(ctx, &dfspb.BlockReceivedAndDeletedRequest{DatanodeId: d.ID(), Blocks: batch})
		cancel()
		if err != nil {
			a.ibr.requeue(batch)
			d.log.Warn("incremental block report failed; will retry", "namenode", a.addr, "blocks", len(batch), "err", rpcError("block received", err))
			d.sleep(backoff.next())
			a.ibr.wake()
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
