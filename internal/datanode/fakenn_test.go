package datanode

import (
	"context"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/blocktoken"
	"smarth/internal/rpc/dfspb"
)

// fakeNameNode implements DatanodeProtocol over real gRPC and records every
// call; tests queue commands for the next heartbeat reply.
type fakeNameNode struct {
	dfspb.UnimplementedDatanodeProtocolServer
	addr string
	srv  *grpc.Server

	mu            sync.Mutex
	failRegister  int // guarded by mu: registrations to refuse (namenode "down")
	registrations []*dfspb.DatanodeInfo
	heartbeats    map[string]int
	lastHB        map[string]*dfspb.HeartbeatRequest // last heartbeat per datanode
	reports       map[string][]*dfspb.ReportedBlock  // last full report per datanode
	reportCount   map[string]int
	received      []received
	bad           []*dfspb.ExtendedBlock
	commits       []*dfspb.CommitBlockSynchronizationRequest
	pending       map[string][]*dfspb.DatanodeCommand
	keys          *blocktoken.Manager // shared with the helpers' tokens (testKeys)
	noKeys        bool                // guarded by mu: ship "tokens disabled"
	ha            *dfspb.NNHAStatus   // guarded by mu: sent in heartbeat replies (nil: no HA)
}

// setHA makes the heartbeat replies from now on carry this HA status.
func (f *fakeNameNode) setHA(state dfspb.HAState, term uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ha = &dfspb.NNHAStatus{State: state, Term: term}
}

// pendingFor is how many commands wait for dn's next heartbeat.
func (f *fakeNameNode) pendingFor(dn string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending[dn])
}

// exportKeys is what the fake ships as block keys.
func (f *fakeNameNode) exportKeysLocked() (*dfspb.ExportedBlockKeys, uint64) {
	if f.noKeys {
		return &dfspb.ExportedBlockKeys{Enabled: false}, 1
	}
	return f.keys.Export()
}

type received struct {
	dn     string
	block  *dfspb.ExtendedBlock
	status dfspb.ReceivedStatus
}

func startFakeNameNode(t *testing.T) *fakeNameNode { return startFakeNameNodeTB(t) }

func startFakeNameNodeTB(t testing.TB) *fakeNameNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeNameNode{
		addr: ln.Addr().String(), srv: grpc.NewServer(),
		heartbeats: map[string]int{}, lastHB: map[string]*dfspb.HeartbeatRequest{}, reports: map[string][]*dfspb.ReportedBlock{},
		reportCount: map[string]int{}, pending: map[string][]*dfspb.DatanodeCommand{},
		keys: testKeys(),
	}
	dfspb.RegisterDatanodeProtocolServer(f.srv, f)
	go f.srv.Serve(ln)
	t.Cleanup(f.srv.Stop)
	return f
}

func (f *fakeNameNode) RegisterDatanode(_ context.Context, req *dfspb.RegisterDatanodeRequest) (*dfspb.RegisterDatanodeResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failRegister > 0 {
		f.failRegister--
		return nil, status.Error(codes.Unavailable, "namenode is starting")
	}
	f.registrations = append(f.registrations, proto.Clone(req.GetDatanode()).(*dfspb.DatanodeInfo))
	keys, _ := f.exportKeysLocked()
	return &dfspb.RegisterDatanodeResponse{Datanode: req.GetDatanode(), BlockKeys: keys}, nil
}

func (f *fakeNameNode) SendHeartbeat(_ context.Context, req *dfspb.HeartbeatRequest) (*dfspb.HeartbeatResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeats[req.GetDatanodeId()]++
	f.lastHB[req.GetDatanodeId()] = proto.Clone(req).(*dfspb.HeartbeatRequest)
	cmds := f.pending[req.GetDatanodeId()]
	delete(f.pending, req.GetDatanodeId())
	f.signTransfers(cmds)
	keys, serial := f.exportKeysLocked()
	resp := &dfspb.HeartbeatResponse{Commands: cmds, BlockKeys: keys, BlockKeysSerial: serial}
	if f.ha != nil {
		resp.HaStatus = proto.CloneOf(f.ha)
	}
	return resp, nil
}

func (f *fakeNameNode) BlockReport(_ context.Context, req *dfspb.BlockReportRequest) (*dfspb.BlockReportResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reports[req.GetDatanodeId()] = req.GetBlocks()
	f.reportCount[req.GetDatanodeId()]++
	return &dfspb.BlockReportResponse{}, nil
}

func (f *fakeNameNode) BlockReceivedAndDeleted(_ context.Context, req *dfspb.BlockReceivedAndDeletedRequest) (*dfspb.BlockReceivedAndDeletedResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range req.GetBlocks() {
		f.received = append(f.received, received{dn: req.GetDatanodeId(), block: b.GetBlock(), status: b.GetStatus()})
	}
	return &dfspb.BlockReceivedAndDeletedResponse{}, nil
}

func (f *fakeNameNode) ReportBadBlocks(_ context.Context, req *dfspb.DatanodeReportBadBlocksRequest) (*dfspb.DatanodeReportBadBlocksResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bad = append(f.bad, req.GetBlocks()...)
	return &dfspb.DatanodeReportBadBlocksResponse{}, nil
}

func (f *fakeNameNode) CommitBlockSynchronization(_ context.Context, req *dfspb.CommitBlockSynchronizationRequest) (*dfspb.CommitBlockSynchronizationResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits = append(f.commits, req)
	return &dfspb.CommitBlockSynchronizationResponse{}, nil
}

// command queues a command for a datanode's next heartbeat reply.
func (f *fakeNameNode) command(dn string, c *dfspb.DatanodeCommand) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending[dn] = append(f.pending[dn], c)
}

// hasReceived reports whether dn sent an incremental report of block id
// with status st (and gs, if gs != 0).
func (f *fakeNameNode) hasReceived(dn string, id, gs uint64, st dfspb.ReceivedStatus) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.received {
		if r.dn == dn && r.block.GetBlockId() == id && r.status == st && (gs == 0 || r.block.GetGenerationStamp() == gs) {
			return true
		}
	}
	return false
}

func (f *fakeNameNode) badBlocks() []*dfspb.ExtendedBlock {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*dfspb.ExtendedBlock(nil), f.bad...)
}

func (f *fakeNameNode) registered(dn string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.registrations {
		if r.GetId() == dn {
			n++
		}
	}
	return n
}

// lastHeartbeat is the last heartbeat dn sent and how many it sent in all.
func (f *fakeNameNode) lastHeartbeat(dn string) (*dfspb.HeartbeatRequest, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastHB[dn], f.heartbeats[dn]
}

// signTransfers gives transfer items without a token the one the namenode
// would sign: COPY for the block's stamp, naming the targets.
func (f *fakeNameNode) signTransfers(cmds []*dfspb.DatanodeCommand) {
	for _, c := range cmds {
		for _, it := range c.GetTransfer().GetItems() {
			if it.Token == nil {
				b := it.GetBlock()
				it.Token = testToken(b.GetBlockId(), b.GetGenerationStamp(), blocktoken.Copy, it.GetTargets()...)
			}
		}
	}
}
