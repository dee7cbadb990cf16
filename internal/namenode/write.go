package namenode

import (
	"smarth/internal/blocktoken"

	"context"
	"fmt"
	"math"
	"strings"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/placement"
	"smarth/internal/rpc/dfspb"
)

// fileForWriteLocked finds the file a writer names (by id, else by path)
// and checks that the caller may write it as its writer: c may reach it
// (search on every directory above it, as a path call), c is the user
// who opened it, and client holds its lease, which it renews. Client names
// are not secrets (they are in logs and on the namenode's pages), so the
// lease alone would let any user write into another's open file; the user
// check is what HDFS's Kerberos-bound lease holders give. A caller of
// another user learns nothing about the writer: not its client name, and
// for a file named by id, not even its path. Callers hold nn.mu.
func (nn *NameNode) fileForWriteLocked(op, path string, fileID uint64, client string, c namespace.Caller) (*namespace.INode, error) {
	f, err := nn.reachableFileLocked(op, path, fileID, c)
	if err != nil {
		return nil, err
	}
	if f.IsDir() {
		return nil, errPrecondition("%s %s: is a directory", op, f.Path())
	}
	w := f.Writer()
	if w == nil {
		return nil, errPrecondition("%s %s: file is not open for writing (closed, or recovered after its writer's lease expired)", op, f.Path())
	}
	if client == "" {
		return nil, errInvalid("%s %s: client_name is required", op, f.Path())
	}
	if !nn.isWriterLocked(f, c) {
		// HDFS's LeaseExpiredException wording, naming only the caller's
		// own client.
		return nil, errDenied("%s: No lease on %s (inode %d): File is not open for writing. Holder %s does not have any open files (user %s did not open it; only the user who opened a file may write it)",
			op, f.Path(), f.ID, client, c.User)
	}
	l := nn.leases.ofFile(f.ID)
	switch {
	case l == nil || l.holder == recoveryHolder:
		return nil, errPrecondition("%s %s: the lease of %s expired and the file is being recovered", op, f.Path(), client)
	case l.holder != client:
		// The same user's other client: its name is theirs to see.
		return nil, errPrecondition("%s %s: lease is held by client %s, not %s", op, f.Path(), l.holder, client)
	}
	nn.leases.renew(client, nn.clock())
	return f, nil
}

// isWriterLocked says whether c is the user who opened the open file f.
// A file opened before writers' users were recorded (an older image or
// edit log: no user) takes any caller with write access to it. A file the
// namenode itself holds (a truncate's recovery) is left to the lease
// check, which refuses every client with the reason.
func (nn *NameNode) isWriterLocked(f *namespace.INode, c namespace.Caller) bool {
	w := f.Writer()
	if w == nil {
		return false
	}
	if w.Client == recoveryHolder {
		return true
	}
	if w.User == "" {
		return nn.state.Tree().CheckAccess(c, f.Path(), namespace.Write) == nil
	}
	return w.User == c.User
}

// reachableFileLocked resolves the inode a call names, by id (when not 0)
// else by path, and checks that c may reach it: search permission on
// every directory above it, as every path call checks. A file named by id
// that c may not reach, or that is gone, is reported without its path: an
// inode number must not tell a caller where a file they may not see is.
func (nn *NameNode) reachableFileLocked(op, path string, fileID uint64, c namespace.Caller) (*namespace.INode, error) {
	if fileID != 0 {
		f := nn.state.Tree().ByID(fileID)
		if f == nil {
			return nil, errNotFound("%s inode %d: the file was deleted while being written", op, fileID)
		}
		if _, err := nn.state.Tree().Stat(c, op, f.Path()); err != nil {
			return nil, errDenied("%s inode %d: permission denied: user %s may not reach the file", op, fileID, c.User)
		}
		return f, nil
	}
	p, err := cleanPath(op, path)
	if err != nil {
		return nil, err
	}
	f, err := nn.state.Tree().Stat(c, op, p)
	if err != nil {
		return nil, statusOf(err)
	}
	return f, nil
}

func ext(b *blockmap.Block) *dfspb.ExtendedBlock {
	return &dfspb.ExtendedBlock{BlockId: b.ID, GenerationStamp: b.GS, NumBytes: b.NumBytes}
}

// blockOffset is where block i starts in its file.
func blockOffset(f *namespace.INode, i int) int64 {
	var off int64
	for _, b := range f.Blocks[:i] {
		off += b.NumBytes
	}
	return off
}

// placementViewLocked is the datanode view a placement policy gets.
func (nn *NameNode) placementViewLocked() []placement.Node {
	out := make([]placement.Node, 0, len(nn.nodes))
	for _, dn := range nn.nodes {
		remaining := dn.space.remaining(dn.info.Remaining)
		if dn.info.Capacity == 0 {
			remaining = math.MaxInt64 // space not reported yet: do not hold it against the node
		}
		out = append(out, placement.Node{
			ID: dn.info.Id, Host: dn.info.Hostname, IP: dn.info.IpAddr, Rack: dn.info.Rack,
			Live: dn.live && dn.admin == dfspb.AdminState_NORMAL, Xceivers: int(dn.info.XceiverCount), Remaining: remaining,
		})
	}
	return out
}

func (nn *NameNode) liveCount() int {
	n := 0
	for _, dn := range nn.nodes {
		if dn.live {
			n++
		}
	}
	return n
}

// addBlock allocates the file's next block and chooses its pipeline; the
// answer also says which rack the writer was placed in, the client's prior
// for datanodes it has not measured yet (see pipeline.Admission).
func (nn *NameNode) addBlock(ctx context.Context, req *dfspb.AddBlockRequest) (*dfspb.AddBlockResponse, error) {
	const op = "addBlock"
	place := nn.placeClient(ctx, req.GetClientHost())
	nn.mu.Lock()
	place = nn.onDatanodeLocked(place)
	if err := nn.writableLocked(op, req.GetPath()); err != nil {
		nn.mu.Unlock()
		return nil, err
	}
	f, err := nn.fileForWriteLocked(op, req.GetPath(), req.GetFileId(), req.GetClientName(), callerOf(ctx))
	if err != nil {
		nn.mu.Unlock()
		return nil, err
	}
	prev, retry, err := nn.checkPreviousLocked(f, req.GetPrevious())
	if err != nil {
		nn.mu.Unlock()
		return nil, err
	}
	// again answers a retried addBlock, whose answer the client lost, with
	// the same block on ids once its record is durable; nn.mu is released.
	again := func(ids []string) (*dfspb.AddBlockResponse, error) {
		lb := nn.locatedLocked(f, len(f.Blocks)-1, nn.datanodeInfos(ids))
		nn.token(lb, callerOf(ctx).User, blocktoken.Write, lb.GetLocations())
		tx := nn.journal.LastTxID()
		nn.mu.Unlock()
		if err := nn.sync(tx); err != nil {
			return nil, err
		}
		return &dfspb.AddBlockResponse{Block: lb, WriterRack: place.Rack}, nil
	}
	if retry != nil && len(retry.Targets()) > 0 {
		return again(retry.Targets())
	}
	exclude := map[string]bool{}
	for _, id := range req.GetExcludeNodes() {
		exclude[id] = true
	}
	busy := 0
	for _, id := range req.GetBusyNodes() {
		if !exclude[id] {
			busy++
		}
		exclude[id] = true
	}
	targets := nn.policy.ChooseTargets(nn.placementViewLocked(), placement.Request{
		Replicas: f.Replication(), Replication: f.Replication(), Exclude: exclude,
		WriterHost: place.Host, WriterIP: place.IP, WriterRack: place.Rack,
		Open: openPipelinesLocked(f, req.GetBusyNodes()), BlockSize: f.BlockSize(),
		Speeds: nn.speeds.Recent(place.Key),
	}, nn.rng)
	if len(targets) < nn.cfg.MinReplication {
		err := nn.notEnoughTargetsLocked(op, f.Path(), len(targets), exclude, busy)
		nn.mu.Unlock()
		return nil, err
	}
	ids := make([]string, len(targets))
	for i, t := range targets {
		ids[i] = t.ID
	}
	if retry != nil {
		// A retry of an addBlock whose answer was lost with the active
		// that made the block (a failover): the edit log has the block
		// but not its targets, which only the active that chose them
		// knew. Nobody has written to it, so this active chooses them.
		retry.SetTargets(ids)
		nn.scheduleSpaceLocked(ids, retry.ID, f.BlockSize())
		return again(ids)
	}
	o := &fsstate.AddBlock{FileID: f.ID, Prev: prev,
		Block: fsstate.BlockRef{ID: nn.state.Blocks().NextID(), GS: nn.state.Blocks().NextGS()}}
	if _, err := nn.state.Apply(o, namespace.Caller{Trusted: true}); err != nil {
		nn.mu.Unlock()
		if isQuotaError(err) {
			return nil, statusOf(err)
		}
		return nil, errPrecondition("%s %s: %v", op, f.Path(), err)
	}
	b := f.Blocks[len(f.Blocks)-1]
	b.SetTargets(ids)
	nn.scheduleSpaceLocked(ids, b.ID, f.BlockSize())
	if prev != nil {
		nn.tryCompleteLocked(nn.state.Blocks().Get(prev.ID))
	}
	tx := nn.logOp(o)
	lb := nn.locatedLocked(f, len(f.Blocks)-1, nn.datanodeInfos(ids))
	nn.token(lb, callerOf(ctx).User, blocktoken.Write, lb.GetLocations())
	nn.mu.Unlock()
	if err := nn.sync(tx); err != nil {
		return nil, err
	}
	return &dfspb.AddBlockResponse{Block: lb, WriterRack: place.Rack}, nil
}

// openPipelinesLocked lists the writer's open pipelines of f in pipeline
// order: the client names only their nodes (busy_nodes), but the namenode
// handed each of them out as the targets of one of f's latest blocks, so
// the blocks whose first target is busy give the order back.
func openPipelinesLocked(f *namespace.INode, busy []string) [][]string {
	if len(busy) == 0 {
		return nil
	}
	isBusy := map[string]bool{}
	for _, id := range busy {
		isBusy[id] = true
	}
	var open [][]string
	// A client holds at most a few pipelines open (live/replication,
	// capped); looking back a little further covers blocks in recovery.
	for i := len(f.Blocks) - 1; i >= 0 && i >= len(f.Blocks)-16 && len(isBusy) > 0; i-- {
		t := f.Blocks[i].Targets()
		if len(t) == 0 || !isBusy[t[0]] {
			continue
		}
		open = append(open, t)
		for _, id := range t {
			delete(isBusy, id)
		}
	}
	return open
}

// notEnoughTargetsLocked explains why placement came up short.
func (nn *NameNode) notEnoughTargetsLocked(op, path string, got int, exclude map[string]bool, busy int) error {
	live, excluded := 0, 0
	for id, dn := range nn.nodes {
		if dn.live {
			live++
			if exclude[id] {
				excluded++
			}
		}
	}
	why := "not enough datanodes with free space"
	switch {
	case live == 0:
		why = "no live datanodes"
	case excluded == live:
		why = "every live datanode is excluded or busy in another pipeline of this client"
	}
	return errExhausted("%s %s: could only be written to %d of the %d required datanodes: %s (%d live, %d excluded, %d busy)",
		op, path, got, nn.cfg.MinReplication, why, live, excluded-busy, busy)
}

// checkPreviousLocked checks AddBlock's previous block against the file:
// it must be the file's last block (its final length is committed), or,
// for a retried call, the one before a last block nobody wrote yet.
func (nn *NameNode) checkPreviousLocked(f *namespace.INode, prev *dfspb.ExtendedBlock) (*fsstate.BlockRef, *blockmap.Block, error) {
	n := len(f.Blocks)
	var last *blockmap.Block
	if n > 0 {
		last = f.Blocks[n-1]
	}
	unwritten := func(b *blockmap.Block) bool {
		return b.State == blockmap.UnderConstruction && len(b.ReplicaList()) == 0
	}
	if prev == nil || prev.GetBlockId() == 0 {
		switch {
		case last == nil:
			return nil, nil, nil
		case n == 1 && unwritten(last):
			return nil, last, nil
		}
		return nil, nil, errPrecondition("addBlock %s: no previous block given, but the file already has %d blocks", f.Path(), n)
	}
	switch {
	case last != nil && prev.GetBlockId() == last.ID:
		if prev.GetGenerationStamp() < last.GS {
			return nil, nil, errPrecondition("addBlock %s: previous block %d has generation stamp %d, the namenode has %d", f.Path(), last.ID, prev.GetGenerationStamp(), last.GS)
		}
		if err := checkBlockLength("addBlock", f, last.ID, prev.GetNumBytes()); err != nil {
			return nil, nil, err
		}
		return &fsstate.BlockRef{ID: last.ID, GS: prev.GetGenerationStamp(), Len: prev.GetNumBytes()}, nil, nil
	case n >= 2 && prev.GetBlockId() == f.Blocks[n-2].ID && unwritten(last):
		return nil, last, nil
	}
	return nil, nil, errPrecondition("addBlock %s: previous block %d is not the last block of the file", f.Path(), prev.GetBlockId())
}

// locatedLocked describes block i of f with the given locations.
func (nn *NameNode) locatedLocked(f *namespace.INode, i int, locs []*dfspb.DatanodeInfo) *dfspb.LocatedBlock {
	return &dfspb.LocatedBlock{Block: ext(f.Blocks[i]), Offset: blockOffset(f, i), Locations: locs}
}

// tryCompleteLocked completes a committed block with enough replicas.
func (nn *NameNode) tryCompleteLocked(b *blockmap.Block) bool {
	if b == nil {
		return false
	}
	return b.TryComplete(nn.cfg.MinReplication, nn.isLive)
}

func (nn *NameNode) complete(ctx context.Context, req *dfspb.CompleteRequest) (bool, error) {
	const op = "complete"
	nn.mu.Lock()
	if err := nn.writableLocked(op, req.GetPath()); err != nil {
		nn.mu.Unlock()
		return false, err
	}
	if done, err := nn.alreadyClosedLocked(req, callerOf(ctx)); done || err != nil {
		tx := nn.journal.LastTxID()
		nn.mu.Unlock()
		if err != nil {
			return false, err
		}
		return true, nn.sync(tx)
	}
	f, err := nn.fileForWriteLocked(op, req.GetPath(), req.GetFileId(), req.GetClientName(), callerOf(ctx))
	if err != nil {
		nn.mu.Unlock()
		return false, err
	}
	final := append([]*dfspb.ExtendedBlock{}, req.GetBlocks()...)
	if req.GetLast() != nil && req.GetLast().GetBlockId() != 0 {
		final = append(final, req.GetLast())
	}
	if err := nn.commitForCompleteLocked(f, final); err != nil {
		nn.mu.Unlock()
		return false, err
	}
	if ready, err := nn.readyToCloseLocked(f); !ready || err != nil {
		nn.mu.Unlock()
		return false, err
	}
	refs := make([]fsstate.BlockRef, len(f.Blocks))
	for i, b := range f.Blocks {
		refs[i] = fsstate.BlockRef{ID: b.ID, GS: b.GS, Len: b.NumBytes}
	}
	o := &fsstate.Complete{FileID: f.ID, Blocks: refs, Now: nn.nowMs()}
	if _, err := nn.state.Apply(o, namespace.Caller{Trusted: true}); err != nil {
		nn.mu.Unlock()
		return false, errPrecondition("complete %s: %v", f.Path(), err)
	}
	tx := nn.logOp(o)
	nn.leases.remove(f.ID)
	nn.dirty = true
	nn.mu.Unlock()
	return true, nn.sync(tx)
}

// alreadyClosedLocked recognises a retried complete of a closed file:
// every block the client names must be in the file with the same stamp
// and length, and the last one it names must be the file's last. A file
// closed by lease recovery (new stamps, maybe shorter) is not mistaken
// for the client's own complete.
//
// A file c may not reach is left to fileForWriteLocked, which refuses it
// without naming it.
func (nn *NameNode) alreadyClosedLocked(req *dfspb.CompleteRequest, c namespace.Caller) (bool, error) {
	f, err := nn.reachableFileLocked("complete", req.GetPath(), req.GetFileId(), c)
	if err != nil || f.IsDir() || f.Writer() != nil {
		return false, nil
	}
	named := append([]*dfspb.ExtendedBlock{}, req.GetBlocks()...)
	if req.GetLast().GetBlockId() != 0 {
		named = append(named, req.GetLast())
	}
	matches := len(named) > 0 || len(f.Blocks) == 0
	for _, eb := range named {
		i := f.BlockIndex(eb.GetBlockId())
		if i < 0 || f.Blocks[i].GS != eb.GetGenerationStamp() || f.Blocks[i].NumBytes != eb.GetNumBytes() {
			matches = false
		}
	}
	if matches && len(named) > 0 && named[len(named)-1].GetBlockId() != f.Blocks[len(f.Blocks)-1].ID {
		matches = false
	}
	if matches {
		return true, nil
	}
	return false, errPrecondition("complete %s: file is not open for writing (closed, or recovered after its writer's lease expired)", f.Path())
}

// readyToCloseLocked: every block has its final length and at least
// min_replication finalized replicas of it.
func (nn *NameNode) readyToCloseLocked(f *namespace.INode) (bool, error) {
	ready := true
	for i, b := range f.Blocks {
		if b.State == blockmap.UnderConstruction {
			return false, errPrecondition("complete %s: block %d (#%d) has no final length; send it in CompleteRequest.last or .blocks", f.Path(), b.ID, i)
		}
		if !nn.tryCompleteLocked(b) {
			ready = false
		}
	}
	return ready, nil
}

func (nn *NameNode) abandonBlock(ctx context.Context, req *dfspb.AbandonBlockRequest) error {
	const op = "abandonBlock"
	nn.mu.Lock()
	if err := nn.writableLocked(op, req.GetPath()); err != nil {
		nn.mu.Unlock()
		return err
	}
	f, err := nn.fileForWriteLocked(op, req.GetPath(), req.GetFileId(), req.GetClientName(), callerOf(ctx))
	if err != nil {
		nn.mu.Unlock()
		return err
	}
	id := req.GetBlock().GetBlockId()
	i := f.BlockIndex(id)
	switch {
	case i < 0 && nn.state.Blocks().Get(id) == nil:
		tx := nn.journal.LastTxID() // already abandoned: a retry
		nn.mu.Unlock()
		return nn.sync(tx)
	case i < 0:
		nn.mu.Unlock()
		return errPrecondition("%s %s: block %d is not part of the file", op, f.Path(), id)
	case i != len(f.Blocks)-1 || f.Blocks[i].State != blockmap.UnderConstruction:
		nn.mu.Unlock()
		return errPrecondition("%s %s: only the last block, while being written, can be abandoned", op, f.Path())
	}
	o := &fsstate.AbandonBlock{FileID: f.ID, BlockID: id}
	res, err := nn.state.Apply(o, namespace.Caller{Trusted: true})
	if err != nil {
		nn.mu.Unlock()
		return errPrecondition("%s %s: %v", op, f.Path(), err)
	}
	tx := nn.logOp(o)
	nn.afterApplyLocked(res)
	nn.mu.Unlock()
	return nn.sync(tx)
}

func (nn *NameNode) additionalDatanode(ctx context.Context, req *dfspb.GetAdditionalDatanodeRequest) (*dfspb.LocatedBlock, error) {
	const op = "getAdditionalDatanode"
	nn.mu.Lock()
	defer nn.mu.Unlock()
	f, err := nn.fileForWriteLocked(op, req.GetPath(), req.GetFileId(), req.GetClientName(), callerOf(ctx))
	if err != nil {
		return nil, err
	}
	i := f.BlockIndex(req.GetBlock().GetBlockId())
	if i < 0 {
		return nil, errPrecondition("%s %s: block %d is not part of the file", op, f.Path(), req.GetBlock().GetBlockId())
	}
	exclude := map[string]bool{}
	for _, id := range append(append([]string{}, req.GetExisting()...), req.GetExclude()...) {
		exclude[id] = true
	}
	want := int(req.GetNumAdditional())
	if want <= 0 {
		want = 1
	}
	targets := nn.policy.ChooseTargets(nn.placementViewLocked(), placement.Request{
		Replicas: want, Replication: f.Replication(), Chosen: req.GetExisting(), Exclude: exclude,
		BlockSize: f.BlockSize(),
	}, nn.rng)
	if len(targets) == 0 {
		return nil, nn.notEnoughTargetsLocked(op, f.Path(), 0, exclude, 0)
	}
	ids := append([]string{}, req.GetExisting()...)
	for _, t := range targets {
		ids = append(ids, t.ID)
		nn.scheduleSpaceLocked([]string{t.ID}, f.Blocks[i].ID, f.BlockSize())
	}
	lb := nn.locatedLocked(f, i, nn.datanodeInfos(ids))
	if req.GetBlock() != nil {
		lb.Block = req.GetBlock()
	}
	// The copy to the new node (TRANSFER_BLOCK, then WRITE_BLOCK in
	// TRANSFER_RBW) is signed for the stamp the namenode knows, whatever
	// the request says, and names the whole new pipeline.
	tb := ext(f.Blocks[i])
	lb.Token = nn.blockToken(tb, callerOf(ctx).User, blocktoken.Write|blocktoken.Copy, lb.GetLocations())
	return lb, nil
}

// blockForWriterLocked finds a block and checks that client holds the
// lease on its file.
func (nn *NameNode) blockForWriterLocked(op string, eb *dfspb.ExtendedBlock, client string, c namespace.Caller) (*namespace.INode, *blockmap.Block, error) {
	b := nn.state.Blocks().Get(eb.GetBlockId())
	if b == nil {
		return nil, nil, errNotFound("%s: block %d does not exist (abandoned, or its file was deleted)", op, eb.GetBlockId())
	}
	if nn.state.Tree().ByID(b.FileID) == nil {
		return nil, nil, errNotFound("%s: block %d has no file", op, b.ID)
	}
	f, err := nn.fileForWriteLocked(op, "", b.FileID, client, c)
	return f, b, err
}

func (nn *NameNode) updateBlockForPipeline(ctx context.Context, req *dfspb.UpdateBlockForPipelineRequest) (*dfspb.LocatedBlock, error) {
	const op = "updateBlockForPipeline"
	nn.mu.Lock()
	if err := nn.writableLocked(op, fmt.Sprintf("block %d", req.GetBlock().GetBlockId())); err != nil {
		nn.mu.Unlock()
		return nil, err
	}
	f, b, err := nn.blockForWriterLocked(op, req.GetBlock(), req.GetClientName(), callerOf(ctx))
	if err != nil {
		nn.mu.Unlock()
		return nil, err
	}
	nodes := b.Targets()
	if len(req.GetNodes()) > 0 {
		for _, id := range req.GetNodes() {
			if nn.nodes[id] == nil {
				nn.mu.Unlock()
				return nil, errInvalid("%s %s: unknown datanode %s in the recovered pipeline", op, f.Path(), id)
			}
		}
		nodes = req.GetNodes()
	}
	o := &fsstate.AllocGS{GS: nn.state.Blocks().NextGS()}
	tx := nn.logOp(o)
	i := f.BlockIndex(b.ID)
	lb := nn.locatedLocked(f, i, nn.datanodeInfos(nodes))
	lb.Block = &dfspb.ExtendedBlock{BlockId: b.ID, GenerationStamp: o.GS, NumBytes: req.GetBlock().GetNumBytes()}
	nn.token(lb, callerOf(ctx).User, blocktoken.Write, lb.GetLocations())
	nn.mu.Unlock()
	return lb, nn.sync(tx)
}

func (nn *NameNode) updatePipeline(ctx context.Context, req *dfspb.UpdatePipelineRequest) error {
	const op = "updatePipeline"
	oldB, newB := req.GetOldBlock(), req.GetNewBlock()
	if oldB.GetBlockId() != newB.GetBlockId() {
		return errInvalid("%s: old block %d and new block %d differ", op, oldB.GetBlockId(), newB.GetBlockId())
	}
	nn.mu.Lock()
	if err := nn.writableLocked(op, fmt.Sprintf("block %d", oldB.GetBlockId())); err != nil {
		nn.mu.Unlock()
		return err
	}
	f, b, err := nn.blockForWriterLocked(op, oldB, req.GetClientName(), callerOf(ctx))
	if err != nil {
		nn.mu.Unlock()
		return err
	}
	gs := newB.GetGenerationStamp()
	if gs == b.GS && gs > oldB.GetGenerationStamp() {
		// A repeat of an update already applied (its answer lost, maybe
		// with the active that applied it): the stamp is the block's.
		// The pipeline's nodes are not in the edit log, so a new active
		// learns them here.
		if b.State == blockmap.UnderConstruction {
			nn.state.Blocks().UpdateUnderConstruction(b, gs, b.NumBytes, req.GetNewNodes())
		}
		tx := nn.journal.LastTxID()
		nn.mu.Unlock()
		return nn.sync(tx)
	}
	if gs <= b.GS || gs > nn.state.Blocks().LastGS() {
		nn.mu.Unlock()
		return errPrecondition("%s %s: generation stamp %d was not issued for block %d (current %d); call updateBlockForPipeline first", op, f.Path(), gs, b.ID, b.GS)
	}
	for _, id := range req.GetNewNodes() {
		if nn.nodes[id] == nil {
			nn.mu.Unlock()
			return errInvalid("%s %s: unknown datanode %s in the new pipeline", op, f.Path(), id)
		}
	}
	length := newB.GetNumBytes()
	if b.State != blockmap.UnderConstruction {
		length = b.NumBytes // committed: the length is final, only the stamp moves
	} else if err := checkBlockLength(op, f, b.ID, length); err != nil {
		nn.mu.Unlock()
		return err
	}
	o := &fsstate.UpdateBlock{Block: fsstate.BlockRef{ID: b.ID, GS: gs, Len: length}}
	if _, err := nn.state.Apply(o, namespace.Caller{Trusted: true}); err != nil {
		nn.mu.Unlock()
		return errPrecondition("%s %s: %v", op, f.Path(), err)
	}
	nn.state.Blocks().UpdateUnderConstruction(b, gs, length, req.GetNewNodes())
	tx := nn.logOp(o)
	nn.logger.Info("pipeline updated", "path", f.Path(), "block", b.ID, "gs", gs, "length", length, "nodes", strings.Join(req.GetNewNodes(), ","))
	nn.mu.Unlock()
	return nn.sync(tx)
}
