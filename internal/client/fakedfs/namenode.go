package fakedfs

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
)

// Namenode is a fake ClientProtocol: blocks go to the first datanodes (in
// Datanodes order) that are neither excluded nor busy. Methods it does not
// implement panic through the nil embedded interface.
type Namenode struct {
	dfspb.ClientProtocolClient

	mu          sync.Mutex
	datanodes   []*dfspb.DatanodeInfo // guarded by mu
	files       map[string]*file      // guarded by mu
	blocks      map[uint64]*block     // guarded by mu
	nextID      uint64                // guarded by mu
	nextGS      uint64                // guarded by mu
	calls       []string              // guarded by mu
	samples     []*dfspb.SpeedSample  // guarded by mu
	bad         []string              // guarded by mu: "blockID@datanodeID"
	completeNo  int                   // guarded by mu: Complete answers false this many more times
	onAddBlock  func(n int)           // guarded by mu
	BlockSize   int64
	Replication int
	// WriterRack is the rack AddBlock says the writer is in ("": none).
	WriterRack string
}

type file struct {
	st       *dfspb.FileStatus
	blocks   []uint64
	complete bool
}

type block struct {
	ext   *dfspb.ExtendedBlock
	nodes []string
}

// NewNamenode returns a fake namenode over the given datanodes.
func NewNamenode(dns ...*Datanode) *Namenode {
	n := &Namenode{files: map[string]*file{"/": {st: &dfspb.FileStatus{Path: "/", Type: dfspb.FileType_DIRECTORY}}},
		blocks: map[uint64]*block{}, nextID: 1000, nextGS: 1, BlockSize: 256 << 10, Replication: 3}
	for _, d := range dns {
		n.datanodes = append(n.datanodes, d.Info)
	}
	return n
}

func (n *Namenode) record(format string, a ...any) {
	n.calls = append(n.calls, fmt.Sprintf(format, a...))
}

// Calls returns the recorded calls whose text starts with prefix.
func (n *Namenode) Calls(prefix string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, c := range n.calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// Samples returns the speed samples received.
func (n *Namenode) Samples() []*dfspb.SpeedSample {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*dfspb.SpeedSample(nil), n.samples...)
}

// BadReports returns "blockID@datanodeID" for every reported bad replica.
func (n *Namenode) BadReports() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.bad...)
}

// CompleteFalse makes the next k Complete calls answer false.
func (n *Namenode) CompleteFalse(k int) {
	n.mu.Lock()
	n.completeNo = k
	n.mu.Unlock()
}

// OnAddBlock calls f with the count of AddBlock calls so far, after each.
func (n *Namenode) OnAddBlock(f func(n int)) {
	n.mu.Lock()
	n.onAddBlock = f
	n.mu.Unlock()
}

// FileBlocks returns the blocks of a completed file with their replica
// nodes (datanode ids).
func (n *Namenode) FileBlocks(p string) ([]*dfspb.ExtendedBlock, [][]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.files[p]
	if f == nil {
		return nil, nil
	}
	var bs []*dfspb.ExtendedBlock
	var nodes [][]string
	for _, id := range f.blocks {
		bs = append(bs, n.blocks[id].ext)
		nodes = append(nodes, n.blocks[id].nodes)
	}
	return bs, nodes
}

func (n *Namenode) Create(_ context.Context, r *dfspb.CreateRequest, _ ...grpc.CallOption) (*dfspb.CreateResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("Create %s", r.GetPath())
	if f, ok := n.files[r.GetPath()]; ok && !r.GetOverwrite() || ok && f.st.GetType() == dfspb.FileType_DIRECTORY {
		return nil, status.Errorf(codes.AlreadyExists, "create %s: file exists", r.GetPath())
	}
	bs, repl := r.GetBlockSize(), int(r.GetReplication())
	if bs == 0 {
		bs = n.BlockSize
	}
	if repl == 0 {
		repl = n.Replication
	}
	n.nextID++
	st := &dfspb.FileStatus{Path: r.GetPath(), Type: dfspb.FileType_FILE, Permission: r.GetPermission(), BlockSize: bs,
		Replication: uint32(repl), FileId: n.nextID, UnderConstruction: true, Owner: "u", Group: "g"}
	n.files[r.GetPath()] = &file{st: st}
	return &dfspb.CreateResponse{Status: st}, nil
}

func (n *Namenode) AddBlock(_ context.Context, r *dfspb.AddBlockRequest, _ ...grpc.CallOption) (*dfspb.AddBlockResponse, error) {
	n.mu.Lock()
	f := n.files[r.GetPath()]
	if f == nil {
		n.mu.Unlock()
		return nil, status.Errorf(codes.NotFound, "addBlock %s: no such file", r.GetPath())
	}
	if p := r.GetPrevious(); p != nil {
		if b := n.blocks[p.GetBlockId()]; b != nil {
			b.ext.NumBytes = p.GetNumBytes()
		}
	}
	ex, busy := sorted(r.GetExcludeNodes()), sorted(r.GetBusyNodes())
	n.record("AddBlock exclude=%v busy=%v", ex, busy)
	want := int(f.st.GetReplication())
	var locs []*dfspb.DatanodeInfo
	for _, d := range n.datanodes {
		if len(locs) < want && !slices.Contains(ex, d.GetId()) && !slices.Contains(busy, d.GetId()) {
			locs = append(locs, d)
		}
	}
	if len(locs) == 0 {
		// Like HDFS: fewer targets than the replication are fine down to
		// the minimum replication (1 here).
		n.mu.Unlock()
		return nil, status.Errorf(codes.ResourceExhausted, "could only be written to 0 of the 1 minReplication nodes (%d live, %d excluded)", len(n.datanodes), len(ex))
	}
	n.nextID++
	n.nextGS++
	b := &block{ext: &dfspb.ExtendedBlock{BlockId: n.nextID, GenerationStamp: n.nextGS}}
	for _, d := range locs {
		b.nodes = append(b.nodes, d.GetId())
	}
	n.blocks[b.ext.BlockId] = b
	f.blocks = append(f.blocks, b.ext.BlockId)
	count := len(n.callsWith("AddBlock"))
	hook, rack := n.onAddBlock, n.WriterRack
	n.mu.Unlock()
	if hook != nil {
		hook(count)
	}
	return &dfspb.AddBlockResponse{Block: &dfspb.LocatedBlock{Block: clone(b.ext), Locations: locs}, WriterRack: rack}, nil
}

func (n *Namenode) callsWith(prefix string) []string {
	var out []string
	for _, c := range n.calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func clone(b *dfspb.ExtendedBlock) *dfspb.ExtendedBlock {
	return &dfspb.ExtendedBlock{BlockId: b.GetBlockId(), GenerationStamp: b.GetGenerationStamp(), NumBytes: b.GetNumBytes()}
}

func (n *Namenode) AbandonBlock(_ context.Context, r *dfspb.AbandonBlockRequest, _ ...grpc.CallOption) (*dfspb.AbandonBlockResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("AbandonBlock %d", r.GetBlock().GetBlockId())
	if f := n.files[r.GetPath()]; f != nil {
		f.blocks = slices.DeleteFunc(f.blocks, func(id uint64) bool { return id == r.GetBlock().GetBlockId() })
	}
	delete(n.blocks, r.GetBlock().GetBlockId())
	return &dfspb.AbandonBlockResponse{}, nil
}

func (n *Namenode) GetAdditionalDatanode(_ context.Context, r *dfspb.GetAdditionalDatanodeRequest, _ ...grpc.CallOption) (*dfspb.GetAdditionalDatanodeResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("GetAdditionalDatanode existing=%v exclude=%v", r.GetExisting(), sorted(r.GetExclude()))
	var locs []*dfspb.DatanodeInfo
	for _, id := range r.GetExisting() {
		for _, d := range n.datanodes {
			if d.GetId() == id {
				locs = append(locs, d)
			}
		}
	}
	for _, d := range n.datanodes {
		if !slices.Contains(r.GetExisting(), d.GetId()) && !slices.Contains(r.GetExclude(), d.GetId()) {
			return &dfspb.GetAdditionalDatanodeResponse{Block: &dfspb.LocatedBlock{Block: r.GetBlock(), Locations: append(locs, d)}}, nil
		}
	}
	return nil, status.Error(codes.ResourceExhausted, "no datanode left to add")
}

func (n *Namenode) UpdateBlockForPipeline(_ context.Context, r *dfspb.UpdateBlockForPipelineRequest, _ ...grpc.CallOption) (*dfspb.UpdateBlockForPipelineResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextGS++
	n.record("UpdateBlockForPipeline %d gs=%d", r.GetBlock().GetBlockId(), n.nextGS)
	b := clone(r.GetBlock())
	b.GenerationStamp = n.nextGS
	return &dfspb.UpdateBlockForPipelineResponse{Block: &dfspb.LocatedBlock{Block: b}}, nil
}

func (n *Namenode) UpdatePipeline(_ context.Context, r *dfspb.UpdatePipelineRequest, _ ...grpc.CallOption) (*dfspb.UpdatePipelineResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("UpdatePipeline %d gs=%d nodes=%v", r.GetNewBlock().GetBlockId(), r.GetNewBlock().GetGenerationStamp(), r.GetNewNodes())
	if b := n.blocks[r.GetNewBlock().GetBlockId()]; b != nil {
		b.ext.GenerationStamp = r.GetNewBlock().GetGenerationStamp()
		b.nodes = r.GetNewNodes()
	}
	return &dfspb.UpdatePipelineResponse{}, nil
}

func (n *Namenode) Complete(_ context.Context, r *dfspb.CompleteRequest, _ ...grpc.CallOption) (*dfspb.CompleteResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("Complete %s blocks=%d", r.GetPath(), len(r.GetBlocks()))
	f := n.files[r.GetPath()]
	if f == nil {
		return nil, status.Errorf(codes.NotFound, "complete %s: no such file", r.GetPath())
	}
	if n.completeNo > 0 {
		n.completeNo--
		return &dfspb.CompleteResponse{}, nil
	}
	var size int64
	for _, b := range r.GetBlocks() {
		if nb := n.blocks[b.GetBlockId()]; nb != nil {
			nb.ext = clone(b)
		}
		size += b.GetNumBytes()
	}
	f.complete = true
	f.st.Length = size
	f.st.UnderConstruction = false
	return &dfspb.CompleteResponse{Completed: true}, nil
}

func (n *Namenode) GetFileInfo(_ context.Context, r *dfspb.GetFileInfoRequest, _ ...grpc.CallOption) (*dfspb.GetFileInfoResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.files[path.Clean(r.GetPath())]
	if f == nil {
		return nil, status.Errorf(codes.NotFound, "%s: no such file or directory", r.GetPath())
	}
	return &dfspb.GetFileInfoResponse{Status: f.st}, nil
}

func (n *Namenode) GetBlockLocations(_ context.Context, r *dfspb.GetBlockLocationsRequest, _ ...grpc.CallOption) (*dfspb.GetBlockLocationsResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := n.files[r.GetPath()]
	if f == nil {
		return nil, status.Errorf(codes.NotFound, "%s: no such file", r.GetPath())
	}
	lbs := &dfspb.LocatedBlocks{FileLength: f.st.GetLength(), UnderConstruction: !f.complete}
	var off int64
	for _, id := range f.blocks {
		b := n.blocks[id]
		lb := &dfspb.LocatedBlock{Block: clone(b.ext), Offset: off}
		for _, nid := range b.nodes {
			for _, d := range n.datanodes {
				if d.GetId() == nid {
					lb.Locations = append(lb.Locations, d)
				}
			}
		}
		lbs.Blocks = append(lbs.Blocks, lb)
		off += b.ext.GetNumBytes()
	}
	return &dfspb.GetBlockLocationsResponse{Locations: lbs}, nil
}

func (n *Namenode) ReportBadBlocks(_ context.Context, r *dfspb.ReportBadBlocksRequest, _ ...grpc.CallOption) (*dfspb.ReportBadBlocksResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, lb := range r.GetBlocks() {
		for _, d := range lb.GetLocations() {
			n.bad = append(n.bad, fmt.Sprintf("%d@%s", lb.GetBlock().GetBlockId(), d.GetId()))
		}
	}
	return &dfspb.ReportBadBlocksResponse{}, nil
}

func (n *Namenode) GetDatanodeReport(context.Context, *dfspb.GetDatanodeReportRequest, ...grpc.CallOption) (*dfspb.GetDatanodeReportResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return &dfspb.GetDatanodeReportResponse{Datanodes: append([]*dfspb.DatanodeInfo(nil), n.datanodes...)}, nil
}

func (n *Namenode) RenewLease(_ context.Context, r *dfspb.RenewLeaseRequest, _ ...grpc.CallOption) (*dfspb.RenewLeaseResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("RenewLease %s", r.GetClientName())
	return &dfspb.RenewLeaseResponse{}, nil
}

func (n *Namenode) ClientHeartbeat(_ context.Context, r *dfspb.ClientHeartbeatRequest, _ ...grpc.CallOption) (*dfspb.ClientHeartbeatResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.samples = append(n.samples, r.GetSamples()...)
	return &dfspb.ClientHeartbeatResponse{}, nil
}

// GetSpeeds answers like a namenode that has no records yet: the fake
// keeps the samples it gets for tests to read, not per host.
func (n *Namenode) GetSpeeds(_ context.Context, r *dfspb.GetSpeedsRequest, _ ...grpc.CallOption) (*dfspb.GetSpeedsResponse, error) {
	return &dfspb.GetSpeedsResponse{}, nil
}

func (n *Namenode) Delete(_ context.Context, r *dfspb.DeleteRequest, _ ...grpc.CallOption) (*dfspb.DeleteResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record("Delete %s", r.GetPath())
	_, ok := n.files[r.GetPath()]
	delete(n.files, r.GetPath())
	return &dfspb.DeleteResponse{Deleted: ok}, nil
}

func (n *Namenode) GetServerDefaults(context.Context, *dfspb.GetServerDefaultsRequest, ...grpc.CallOption) (*dfspb.GetServerDefaultsResponse, error) {
	return &dfspb.GetServerDefaultsResponse{BlockSize: n.BlockSize, Replication: uint32(n.Replication), PacketSize: 64 << 10, BytesPerChecksum: 512}, nil
}
