package namenode

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/rpc/dfspb"
)

// testConfig is a namenode config for tests: ephemeral ports, a temporary
// meta dir, short intervals.
func testConfig(t testing.TB) Config {
	cfg := DefaultConfig()
	cfg.RPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.MetaDir = t.TempDir()
	cfg.BlockSize = 1 << 20
	cfg.HeartbeatInterval = 100 * time.Millisecond
	cfg.DeadNodeTimeout = 600 * time.Millisecond
	cfg.ReplicationInterval = 100 * time.Millisecond
	cfg.SafeModeExtension = 0
	cfg.Superuser = "hdfs"
	// Namespace tests act as users by asserting names: simple, said
	// explicitly (the default is secure; identity_test.go and
	// defaultauth_test.go cover it).
	cfg.Auth = auth.Simple
	return cfg
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("NN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func startNN(t testing.TB, cfg Config) *NameNode {
	t.Helper()
	nn, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	return nn
}

// rpcClient is a test client of both protocols, acting as one user.
type rpcClient struct {
	conn *grpc.ClientConn
	cp   dfspb.ClientProtocolClient
	dp   dfspb.DatanodeProtocolClient
	user string
	md   []string // more metadata pairs for every call (a credential, a datanode's proof)
}

func dial(t testing.TB, addr, user string) *rpcClient {
	t.Helper()
	c := dialConn(t, addr, user)
	t.Cleanup(func() { c.conn.Close() })
	return c
}

// dialConn is dial without closing the connection at the end of the test.
func dialConn(t testing.TB, addr, user string) *rpcClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return &rpcClient{conn: conn, cp: dfspb.NewClientProtocolClient(conn), dp: dfspb.NewDatanodeProtocolClient(conn), user: user}
}

func (c *rpcClient) ctx() context.Context { return c.ctxFor(10 * time.Second) }

// ctxFor is ctx with a deadline d away, for a call a test holds.
func (c *rpcClient) ctxFor(d time.Duration) context.Context {
	ctx := context.Background()
	if c.user != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, mdUser, c.user)
	}
	if len(c.md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, c.md...)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	_ = cancel // released when the deadline passes; tests are short
	return ctx
}

// wantErr checks a gRPC error's code and that its message contains msg.
func wantErr(t testing.TB, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("got error %v; want code %v with message containing %q", err, code, msg)
	}
}

// waitFor polls cond until it holds or the deadline passes, and says what
// it waited for.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // generous: CI shares 2 cores with other packages
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 60 s waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeDN is a datanode that speaks DatanodeProtocol over real gRPC and
// keeps replicas as (gs, length, state) only. It carries out commands:
// invalidations delete, transfers copy to the target fake, recoveries
// sync to the shortest replica and commit.
type fakeDN struct {
	t       testing.TB
	cluster *fakeCluster
	rpc     *rpcClient
	info    *dfspb.DatanodeInfo

	// beating is held for a whole heartbeat, from the snapshot of its
	// state to its reply: a test that restarts the node holds it, so no
	// heartbeat of the old incarnation lands after the new registration.
	beating sync.Mutex

	mu       sync.Mutex
	replicas map[uint64]*dfspb.ReportedBlock // guarded by mu
	stopped  bool                            // no more heartbeats; guarded by mu
	lose     int                             // transfer commands to ignore (lost in flight); guarded by mu
	commands []string                        // log of executed commands; guarded by mu
	cacheCap int64                           // reported cache capacity; guarded by mu
	cached   map[uint64]bool                 // blocks held in memory; guarded by mu
	// holdDeletes keeps invalidations received and not yet carried out
	// in held (a deletion still in flight); guarded by mu.
	holdDeletes bool
	held        []*dfspb.DatanodeCommand
}

// releaseDeletes carries out the held invalidations and stops holding.
func (d *fakeDN) releaseDeletes() {
	d.mu.Lock()
	held := d.held
	d.held, d.holdDeletes = nil, false
	d.mu.Unlock()
	for _, c := range held {
		d.execute(c)
	}
}

type fakeCluster struct {
	t     testing.TB
	nn    *NameNode
	mu    sync.Mutex
	nodes map[string]*fakeDN     // by id; guarded by mu
	seed  []*dfspb.ReportedBlock // replicas the next added node starts with; guarded by mu
	dnKey []byte                 // the datanode key of a secure namenode: fakes prove their ids with it
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newFakeCluster(t testing.TB, nn *NameNode) *fakeCluster {
	fc := &fakeCluster{t: t, nn: nn, nodes: map[string]*fakeDN{}, stop: make(chan struct{})}
	// Every fake stops (its last call answered) before any connection
	// closes: fakes call each other's namenode connections.
	t.Cleanup(func() {
		close(fc.stop)
		fc.wg.Wait()
		fc.mu.Lock()
		defer fc.mu.Unlock()
		for _, d := range fc.nodes {
			d.rpc.conn.Close()
		}
	})
	return fc
}

// add registers a datanode named host on rack and starts heartbeating.
func (fc *fakeCluster) add(host, rack string) *fakeDN {
	fc.t.Helper()
	fc.mu.Lock()
	port := uint32(20000 + len(fc.nodes))
	seed := fc.seed
	fc.seed = nil
	fc.mu.Unlock()
	d := &fakeDN{t: fc.t, cluster: fc, rpc: dialConn(fc.t, fc.nn.Addr(), "dn"), replicas: map[uint64]*dfspb.ReportedBlock{}, cached: map[uint64]bool{},
		info: &dfspb.DatanodeInfo{Id: "id-" + host, Hostname: host, IpAddr: "10.0.0." + strings.TrimPrefix(host, "dn"), DataPort: port, IpcPort: port + 1, Rack: rack,
			Capacity: 100 << 30, Remaining: 90 << 30}}
	for _, r := range seed {
		d.replicas[r.GetBlock().GetBlockId()] = r
	}
	if fc.dnKey != nil {
		d.rpc.md = []string{auth.MDDatanode, auth.DatanodeCredential(fc.dnKey, d.info.Id)}
	}
	d.register()
	fc.mu.Lock()
	fc.nodes[d.info.Id] = d
	fc.mu.Unlock()
	fc.wg.Add(1)
	go func() {
		defer fc.wg.Done()
		tk := time.NewTicker(fc.nn.cfg.HeartbeatInterval)
		defer tk.Stop()
		for {
			select {
			case <-fc.stop:
				return
			case <-tk.C:
				d.beat()
			}
		}
	}()
	return d
}

func (fc *fakeCluster) node(id string) *fakeDN {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.nodes[id]
}

func (d *fakeDN) register() {
	resp, err := d.rpc.dp.RegisterDatanode(d.rpc.ctx(), &dfspb.RegisterDatanodeRequest{Datanode: d.info})
	if err != nil {
		d.t.Errorf("register %s: %v", d.info.Hostname, err)
		return
	}
	d.info.Rack = resp.GetDatanode().GetRack()
	d.fullReport()
}

func (d *fakeDN) fullReport() {
	d.mu.Lock()
	var blocks []*dfspb.ReportedBlock
	for _, r := range d.replicas {
		blocks = append(blocks, r)
	}
	d.mu.Unlock()
	if _, err := d.rpc.dp.BlockReport(d.rpc.ctx(), &dfspb.BlockReportRequest{DatanodeId: d.info.Id, Blocks: blocks}); err != nil {
		d.t.Logf("block report %s: %v", d.info.Hostname, err)
	}
}

// kill stops heartbeats (the process is gone).
func (d *fakeDN) kill() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
}

func (d *fakeDN) beat() {
	d.beating.Lock()
	defer d.beating.Unlock()
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	req := &dfspb.HeartbeatRequest{DatanodeId: d.info.Id, Capacity: d.info.Capacity, Remaining: d.info.Remaining, CacheCapacity: d.cacheCap}
	for id := range d.cached {
		req.CachedBlockIds = append(req.CachedBlockIds, id)
		req.CacheUsed += d.replicas[id].GetBlock().GetNumBytes()
	}
	d.mu.Unlock()
	resp, err := d.rpc.dp.SendHeartbeat(d.rpc.ctx(), req)
	if err != nil {
		return // namenode closing
	}
	if resp.GetFullBlockReportRequested() {
		d.fullReport()
	}
	for _, c := range resp.GetCommands() {
		d.execute(c)
	}
}

func (d *fakeDN) logCmd(format string, a ...any) {
	d.mu.Lock()
	d.commands = append(d.commands, fmt.Sprintf(format, a...))
	d.mu.Unlock()
}

func (d *fakeDN) execute(c *dfspb.DatanodeCommand) {
	switch {
	case c.GetReregister():
		d.logCmd("reregister")
		d.register()
	case c.GetInvalidate() != nil:
		var gone []*dfspb.ReceivedDeletedBlock
		d.mu.Lock()
		if d.holdDeletes {
			d.held = append(d.held, c)
			d.mu.Unlock()
			return
		}
		for _, b := range c.GetInvalidate().GetBlocks() {
			delete(d.replicas, b.GetBlockId())
			delete(d.cached, b.GetBlockId())
			gone = append(gone, &dfspb.ReceivedDeletedBlock{Block: b, Status: dfspb.ReceivedStatus_DELETED})
		}
		d.mu.Unlock()
		d.logCmd("invalidate %d", len(gone))
		d.rpc.dp.BlockReceivedAndDeleted(d.rpc.ctx(), &dfspb.BlockReceivedAndDeletedRequest{DatanodeId: d.info.Id, Blocks: gone})
	case c.GetTransfer() != nil:
		d.mu.Lock()
		lost := d.lose > 0
		if lost {
			d.lose--
		}
		d.mu.Unlock()
		if lost {
			d.logCmd("transfer lost")
			return
		}
		for _, it := range c.GetTransfer().GetItems() {
			d.logCmd("transfer %d", it.GetBlock().GetBlockId())
			for _, tgt := range it.GetTargets() {
				if td := d.cluster.node(tgt.GetId()); td != nil {
					td.receive(it.GetBlock(), dfspb.ReplicaState_FINALIZED)
				}
			}
		}
	case c.GetRecover() != nil:
		d.logCmd("recover %d", c.GetRecover().GetBlock().GetBlockId())
		d.recover(c.GetRecover())
	case c.GetCache() != nil:
		d.mu.Lock()
		for _, id := range c.GetCache().GetBlockIds() {
			if d.replicas[id] != nil { // a deleted block is ignored, as a datanode does
				d.cached[id] = true
			}
		}
		d.mu.Unlock()
		d.logCmd("cache %v", c.GetCache().GetBlockIds())
	case c.GetUncache() != nil:
		d.mu.Lock()
		for _, id := range c.GetUncache().GetBlockIds() {
			delete(d.cached, id)
		}
		d.mu.Unlock()
		d.logCmd("uncache %v", c.GetUncache().GetBlockIds())
	}
}

// receive stores a replica and reports it.
func (d *fakeDN) receive(b *dfspb.ExtendedBlock, state dfspb.ReplicaState) {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.replicas[b.GetBlockId()] = &dfspb.ReportedBlock{Block: &dfspb.ExtendedBlock{BlockId: b.BlockId, GenerationStamp: b.GenerationStamp, NumBytes: b.NumBytes}, State: state}
	d.mu.Unlock()
	st := dfspb.ReceivedStatus_RECEIVED
	if state == dfspb.ReplicaState_RBW {
		st = dfspb.ReceivedStatus_RECEIVING
	}
	if _, err := d.rpc.dp.BlockReceivedAndDeleted(d.rpc.ctx(), &dfspb.BlockReceivedAndDeletedRequest{DatanodeId: d.info.Id,
		Blocks: []*dfspb.ReceivedDeletedBlock{{Block: b, Status: st}}}); err != nil {
		d.t.Errorf("report received on %s: %v", d.info.Hostname, err)
	}
}

func (d *fakeDN) has(id uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.replicas[id]
	return ok
}

// recover plays the primary of a lease recovery: the new length is the
// shortest replica among the live ones, as for RBW replicas in HDFS.
func (d *fakeDN) recover(cmd *dfspb.RecoverBlockCommand) {
	id := cmd.GetBlock().GetBlockId()
	length := int64(-1)
	var holders []string
	for _, r := range cmd.GetReplicas() {
		td := d.cluster.node(r.GetId())
		if td == nil {
			continue
		}
		td.mu.Lock()
		rep, ok := td.replicas[id]
		if ok && !td.stopped {
			if length < 0 || rep.Block.NumBytes < length {
				length = rep.Block.NumBytes
			}
			holders = append(holders, r.GetId())
		}
		td.mu.Unlock()
	}
	if cmd.GetTruncate() && length >= cmd.GetNewLength() {
		length = cmd.GetNewLength() // truncate recovery: cut to the namenode's length
	}
	req := &dfspb.CommitBlockSynchronizationRequest{Block: cmd.GetBlock(), NewGs: cmd.GetNewGs(), CloseFile: true}
	if length < 0 {
		req.DeleteBlock = true
	} else {
		req.NewLength, req.NewTargets = length, holders
		for _, h := range holders {
			td := d.cluster.node(h)
			td.mu.Lock()
			td.replicas[id] = &dfspb.ReportedBlock{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: cmd.GetNewGs(), NumBytes: length}, State: dfspb.ReplicaState_FINALIZED}
			td.mu.Unlock()
		}
	}
	if _, err := d.rpc.dp.CommitBlockSynchronization(d.rpc.ctx(), req); err != nil {
		d.t.Errorf("commitBlockSynchronization: %v", err)
	}
}

// ids returns the datanode ids of a located block's locations.
func ids(lb *dfspb.LocatedBlock) []string {
	var out []string
	for _, l := range lb.GetLocations() {
		out = append(out, l.GetId())
	}
	return out
}

// snapshot copies the fake's replicas.
func (d *fakeDN) snapshot() []*dfspb.ReportedBlock {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*dfspb.ReportedBlock
	for _, r := range d.replicas {
		out = append(out, r)
	}
	return out
}

// addWith registers a datanode that already holds replicas (a restart).
func (fc *fakeCluster) addWith(host, rack string, replicas []*dfspb.ReportedBlock) *fakeDN {
	fc.mu.Lock()
	fc.seed = replicas
	fc.mu.Unlock()
	return fc.add(host, rack)
}
