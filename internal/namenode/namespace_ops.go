package namenode

import (
	"context"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// writableLocked refuses mutations in safe mode or after an edit log
// failure. Callers hold nn.mu.
func (nn *NameNode) writableLocked(op, path string) error {
	if nn.ha != nil {
		if err := nn.ha.writableLocked(); err != nil {
			return err
		}
	}
	if nn.safe.on {
		return errUnavailable("%s %s: %s", op, path, nn.safe.reason(nn.cfg))
	}
	if err := nn.journal.Err(); err != nil {
		return errUnavailable("%s %s: the namenode cannot write its edit log (%v)", op, path, err)
	}
	return nn.spaceForEditsLocked(op, path)
}

// mutate runs one namespace mutation: under the lock it checks that the
// namenode accepts mutations, runs pre (extra checks), applies op with the
// caller's permissions, logs it and runs after; then, without the lock, it
// waits until the record is durable.
func (nn *NameNode) mutate(opName, path string, c namespace.Caller, op fsstate.Record, pre func() error, after func(fsstate.Applied)) (fsstate.Applied, error) {
	return nn.mutateCall(nil, opName, path, c, op, pre, after)
}

// mutateCall is mutate logging the record with the ids of the client
// call that made it (call, from loggedCall; nil: none).
func (nn *NameNode) mutateCall(call *fsstate.Call, opName, path string, c namespace.Caller, op fsstate.Record, pre func() error, after func(fsstate.Applied)) (fsstate.Applied, error) {
	nn.mu.Lock()
	if err := nn.writableLocked(opName, path); err != nil {
		nn.mu.Unlock()
		return fsstate.Applied{}, err
	}
	if pre != nil {
		if err := pre(); err != nil {
			// pre may have logged something (a lease recovery's stamp).
			tx := nn.journal.LastTxID()
			nn.mu.Unlock()
			_ = nn.sync(tx)
			if verr := nn.vouch(); verr != nil {
				return fsstate.Applied{}, verr
			}
			return fsstate.Applied{}, statusOf(err)
		}
	}
	if t, ok := op.(fsstate.Timed); ok {
		t.SetNow(nn.nowMs())
	}
	res, err := nn.state.Apply(op, c)
	if err != nil {
		nn.mu.Unlock()
		if verr := nn.vouch(); verr != nil {
			return res, verr
		}
		return res, statusOf(err)
	}
	tx := nn.logCall(call, op)
	nn.afterApplyLocked(res)
	if after != nil {
		after(res)
	}
	nn.mu.Unlock()
	return res, nn.sync(tx)
}

// afterApplyLocked does the runtime bookkeeping an applied operation
// implies: leases of removed files, replicas of dropped blocks.
func (nn *NameNode) afterApplyLocked(res fsstate.Applied) {
	for _, f := range res.Removed {
		if f.Writer() != nil {
			nn.leases.remove(f.ID)
		}
	}
	for _, b := range res.Dropped {
		nn.cache.ForgetLocked(b.ID)
		nn.cancelPendingLocked(b.ID)
		delete(nn.recovering, b.ID)
		nn.dirty = true
	}
	for _, o := range res.Orphans {
		nn.invalidateLocked(o.Node, o.Block)
	}
}

// mode applies the umask to a requested mode (0 means the default).
func (nn *NameNode) mode(requested uint32, def uint16) uint16 {
	m := uint16(requested & 0o7777)
	if m == 0 {
		m = def
	}
	return m &^ uint16(nn.cfg.Umask)
}

// parentMode is the mode of directories made implicitly (create_parent):
// the default directory mode, always writable and searchable by the owner
// so that the operation that made them can continue (as HDFS).
func (nn *NameNode) parentMode() uint16 { return nn.mode(0, 0o777) | 0o300 }

func (nn *NameNode) mkdirs(ctx context.Context, req *dfspb.MkdirsRequest) error {
	p, err := cleanPath("mkdir", req.GetPath())
	if err != nil {
		return err
	}
	c := callerOf(ctx)
	perm := nn.mode(req.GetPermission(), 0o777)
	if req.GetMasked() {
		perm = uint16(req.GetPermission() & 0o7777)
	}
	op := &fsstate.Mkdirs{Path: p, Perm: uint32(perm),
		ParentPerm: uint32(nn.parentMode()), CreateParent: req.GetCreateParent(), User: c.User}
	_, err = nn.mutate("mkdir", p, c, op, nil, nil)
	return err
}

func (nn *NameNode) create(ctx context.Context, req *dfspb.CreateRequest) (*dfspb.FileStatus, error) {
	p, err := cleanPath("create", req.GetPath())
	if err != nil {
		return nil, err
	}
	if req.GetClientName() == "" {
		return nil, errInvalid("create %s: client_name is required (it holds the lease)", p)
	}
	repl := int(req.GetReplication())
	if repl == 0 {
		repl = nn.cfg.Replication
	}
	if repl < nn.cfg.MinReplication || repl > nn.cfg.MaxReplication {
		return nil, errInvalid("create %s: replication %d is outside [%d, %d]", p, repl, nn.cfg.MinReplication, nn.cfg.MaxReplication)
	}
	bs := req.GetBlockSize()
	if bs == 0 {
		bs = nn.cfg.BlockSize
	}
	if bs < 512 || bs%512 != 0 || bs > namespace.MaxBlockSize {
		return nil, errInvalid("create %s: block size %d must be a positive multiple of 512 up to %d (48 bits, as HDFS)", p, bs, int64(namespace.MaxBlockSize))
	}
	if bs > nn.cfg.MaxBlockSize {
		return nil, errInvalid("create %s: block size %d is greater than the configured maximum (max_block_size, as HDFS's dfs.namenode.fs-limits.max-block-size): %d > %d", p, bs, bs, nn.cfg.MaxBlockSize)
	}
	host := req.GetClientName()
	if h := peerHost(ctx); h != "" {
		host = h
	}
	c := callerOf(ctx)
	perm := nn.mode(req.GetPermission(), 0o666)
	if req.GetMasked() {
		perm = uint16(req.GetPermission() & 0o7777)
	}
	op := &fsstate.Create{Path: p, Perm: uint32(perm),
		ParentPerm: uint32(nn.parentMode()), CreateParent: req.GetCreateParent(), Overwrite: req.GetOverwrite(),
		Replication: repl, BlockSize: bs, User: c.User, Client: req.GetClientName(), Host: host}
	var st *dfspb.FileStatus
	_, err = nn.mutateCall(loggedCall(ctx), "create", p, c, op, func() error {
		return nn.checkOverwriteLeaseLocked(p, req, c)
	}, func(res fsstate.Applied) {
		nn.leases.add(req.GetClientName(), res.File.ID, nn.clock())
		st = fileStatus(res.File)
	})
	return st, err
}

// checkOverwriteLeaseLocked refuses to replace a file someone is still
// writing. A writer silent past the soft limit loses the file: its lease
// is recovered and the caller is asked to retry. As HDFS, only a caller
// with write access to the file gets this far, and only the writer's own
// user is told its client name.
func (nn *NameNode) checkOverwriteLeaseLocked(p string, req *dfspb.CreateRequest, c namespace.Caller) error {
	if !req.GetOverwrite() {
		return nil
	}
	f, err := nn.state.Tree().Lookup(p)
	if err != nil || f.IsDir() || f.Writer() == nil {
		return nil
	}
	if err := nn.state.Tree().CheckAccessFor(c, "create", p, namespace.Write); err != nil {
		return err
	}
	holder := "another user's client"
	if w := f.Writer(); w.User == c.User {
		holder = "client " + w.Client
	}
	l := nn.leases.ofFile(f.ID)
	switch {
	case l == nil:
		return nil
	case l.holder == req.GetClientName() && f.Writer().User == c.User:
		return errPrecondition("create %s: this client (%s) is already writing the file", p, l.holder)
	case l.holder == recoveryHolder:
		return errUnavailable("create %s: the previous writer's lease expired and the file is being recovered; retry shortly", p)
	case nn.clock().Sub(l.renewed) > nn.cfg.LeaseSoftLimit:
		nn.logger.Info("lease soft limit passed; recovering file for a new writer", "path", p, "holder", l.holder, "new_writer", req.GetClientName(), "user", c.User)
		nn.startRecoveryLocked(f, nn.clock())
		return errUnavailable("create %s: the lease of %s expired; the file is being recovered; retry shortly", p, holder)
	default:
		return errPrecondition("create %s: file is being written by %s", p, holder)
	}
}

func (nn *NameNode) delete(ctx context.Context, req *dfspb.DeleteRequest) error {
	p, err := cleanPath("delete", req.GetPath())
	if err != nil {
		return err
	}
	c := callerOf(ctx)
	op := &fsstate.Delete{Path: p, Recursive: req.GetRecursive()}
	_, err = nn.mutateCall(loggedCall(ctx), "delete", p, c, op, nil, nil)
	return err
}

func (nn *NameNode) rename(ctx context.Context, req *dfspb.RenameRequest) error {
	src, err := cleanPath("rename", req.GetSrc())
	if err != nil {
		return err
	}
	dst, err := cleanPath("rename", req.GetDst())
	if err != nil {
		return err
	}
	if req.GetRename2() {
		return nn.rename2(ctx, src, dst, req.GetOverwrite(), req.GetToTrash())
	}
	if req.GetOverwrite() || req.GetToTrash() {
		return errInvalid("rename %s to %s: overwrite and to_trash are options of rename2 only", src, dst)
	}
	c := callerOf(ctx)
	op := &fsstate.Rename{Path: src, Dst: dst}
	_, err = nn.mutateCall(loggedCall(ctx), "rename", src, c, op, nil, nil)
	return err
}

func (nn *NameNode) setReplication(ctx context.Context, req *dfspb.SetReplicationRequest) error {
	p, err := cleanPath("setrep", req.GetPath())
	if err != nil {
		return err
	}
	r := int(req.GetReplication())
	if r < nn.cfg.MinReplication || r > nn.cfg.MaxReplication {
		return errInvalid("setrep %s: replication %d is outside [%d, %d]", p, r, nn.cfg.MinReplication, nn.cfg.MaxReplication)
	}
	c := callerOf(ctx)
	op := &fsstate.SetReplication{Path: p, Replication: r}
	_, err = nn.mutate("setrep", p, c, op, nil, func(fsstate.Applied) { nn.dirty = true })
	return err
}

func (nn *NameNode) setPermission(ctx context.Context, req *dfspb.SetPermissionRequest) error {
	p, err := cleanPath("chmod", req.GetPath())
	if err != nil {
		return err
	}
	if req.GetPermission() > 0o7777 {
		return errInvalid("chmod %s: %#o is not a mode", p, req.GetPermission())
	}
	c := callerOf(ctx)
	op := &fsstate.SetPermission{Path: p, Perm: req.GetPermission()}
	_, err = nn.mutate("chmod", p, c, op, nil, nil)
	return err
}

func (nn *NameNode) setOwner(ctx context.Context, req *dfspb.SetOwnerRequest) error {
	p, err := cleanPath("chown", req.GetPath())
	if err != nil {
		return err
	}
	if req.GetOwner() == "" && req.GetGroup() == "" {
		return errInvalid("chown %s: give an owner, a group or both", p)
	}
	c := callerOf(ctx)
	op := &fsstate.SetOwner{Path: p, Owner: req.GetOwner(), Group: req.GetGroup()}
	_, err = nn.mutate("chown", p, c, op, nil, nil)
	return err
}

func (nn *NameNode) fileInfo(ctx context.Context, path string) (*dfspb.FileStatus, error) {
	p, err := cleanPath("stat", path)
	if err != nil {
		return nil, err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	n, err := nn.state.Tree().Stat(callerOf(ctx), "stat", p)
	if err != nil {
		return nil, statusOf(err)
	}
	return nn.decorateLocked(fileStatus(n), n), nil
}

// defaultListLimit is the page size when the client names none (HDFS
// dfs.ls.limit).
const defaultListLimit = 1000

func (nn *NameNode) listing(ctx context.Context, req *dfspb.GetListingRequest) (*dfspb.GetListingResponse, error) {
	p, err := cleanPath("list", req.GetPath())
	if err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > 10*defaultListLimit {
		limit = defaultListLimit
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	entries, remaining, err := nn.state.Tree().List(callerOf(ctx), p, req.GetStartAfter(), limit)
	if err != nil {
		return nil, statusOf(err)
	}
	resp := &dfspb.GetListingResponse{Remaining: uint32(remaining), Entries: make([]*dfspb.FileStatus, len(entries))}
	for i, n := range entries {
		resp.Entries[i] = nn.decorateLocked(fileStatus(n), n)
	}
	return resp, nil
}

func (nn *NameNode) contentSummary(ctx context.Context, path string) (*dfspb.GetContentSummaryResponse, error) {
	p, err := cleanPath("du", path)
	if err != nil {
		return nil, err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	s, err := nn.state.Tree().ContentSummary(callerOf(ctx), p)
	if err != nil {
		return nil, statusOf(err)
	}
	resp := &dfspb.GetContentSummaryResponse{Length: s.Length, FileCount: s.Files, DirectoryCount: s.Directories,
		SpaceConsumed: s.SpaceConsumed, Quota: s.Quota, SpaceQuota: s.SpaceQuota}
	for _, typ := range namespace.StorageTypes {
		if q, ok := s.TypeQuotas[typ]; ok {
			resp.TypeQuotas = append(resp.TypeQuotas, &dfspb.StorageTypeQuota{StorageType: typ, Quota: q,
				Consumed: namespace.TypeUsage(typ, s.SpaceConsumed)})
		}
	}
	return resp, nil
}

// fileStatus renders an inode for the wire. Callers hold nn.mu.
func fileStatus(n *namespace.INode) *dfspb.FileStatus {
	st := &dfspb.FileStatus{
		Path: n.Path(), Permission: uint32(n.Perm()), Owner: n.Owner(), Group: n.Group(),
		ModificationTimeMs: n.MTime, AccessTimeMs: n.ATime, FileId: n.ID,
	}
	if n.IsDir() {
		st.Type = dfspb.FileType_DIRECTORY
		st.ChildrenNum = int32(n.NumChildren())
		return st
	}
	st.Type = dfspb.FileType_FILE
	st.Length = n.Length()
	st.Replication = uint32(n.Replication())
	st.BlockSize = n.BlockSize()
	st.UnderConstruction = n.Writer() != nil
	return st
}

// haStatus is this namenode's place in its HA group: without HA, the
// active member of a group of itself at term 0.
func (nn *NameNode) haStatus() *dfspb.GetHAStatusResponse {
	nn.mu.RLock()
	applied := nn.journal.LastTxID()
	nn.mu.RUnlock()
	resp := &dfspb.GetHAStatusResponse{State: dfspb.HAState_ACTIVE, AppliedTxid: applied, ActiveRpcAddress: nn.Addr()}
	if nn.ha != nil {
		nn.ha.status(resp)
	}
	return resp
}

func (nn *NameNode) serverDefaults() *dfspb.GetServerDefaultsResponse {
	return &dfspb.GetServerDefaultsResponse{
		BlockSize: nn.cfg.BlockSize, Replication: uint32(nn.cfg.Replication),
		PacketSize: 64 << 10, BytesPerChecksum: 512,
		HeartbeatIntervalMs: nn.cfg.HeartbeatInterval.Milliseconds(), PlacementPolicy: nn.cfg.Placement,
		TrashIntervalMs: nn.cfg.TrashInterval.Milliseconds(),
	}
}

// setSafeMode gets, enters or leaves safe mode; changing it takes a
// superuser.
func (nn *NameNode) setSafeMode(ctx context.Context, action dfspb.SafeModeAction) (*dfspb.SetSafeModeResponse, error) {
	c := callerOf(ctx)
	nn.mu.Lock()
	defer nn.mu.Unlock()
	if action != dfspb.SafeModeAction_SAFE_MODE_GET && !nn.state.Tree().IsSuper(c) {
		return nil, errDenied("safemode: user %s is not a superuser (superuser: %s, supergroup: %s)", c.User, nn.cfg.Superuser, nn.cfg.Supergroup)
	}
	now := nn.clock()
	switch action {
	case dfspb.SafeModeAction_SAFE_MODE_ENTER:
		nn.enterSafeModeLocked(now)
	case dfspb.SafeModeAction_SAFE_MODE_LEAVE:
		nn.leaveSafeModeLocked(now, "left manually by "+c.User)
	case dfspb.SafeModeAction_SAFE_MODE_GET:
	default:
		return nil, errInvalid("safemode: unknown action %v", action)
	}
	return &dfspb.SetSafeModeResponse{On: nn.safe.on, Reason: nn.safe.reason(nn.cfg)}, nil
}

// renewLease renews the client's lease.
//
// Only the user whose files the lease holds renews it: another user quoting
// the client name (not a secret) could otherwise keep a dead writer's files
// open forever, out of lease recovery's reach. A lease whose files are
// another user's is left alone, without saying so.
func (nn *NameNode) renewLease(client string, c namespace.Caller) error {
	if client == "" {
		return errInvalid("renewLease: client_name is required")
	}
	nn.mu.Lock()
	defer nn.mu.Unlock()
	l := nn.leases.byHolder[client]
	if l == nil {
		return nil
	}
	for id := range l.files {
		if f := nn.state.Tree().ByID(id); f != nil && f.Writer() != nil && !nn.isWriterLocked(f, c) {
			return nil
		}
	}
	nn.leases.renew(client, nn.clock())
	return nil
}

// rename2 serves a RenameRequest with rename2 set (HDFS's rename with
// Options.Rename): one record, so that OVERWRITE replaces the destination
// atomically.
func (nn *NameNode) rename2(ctx context.Context, src, dst string, overwrite, toTrash bool) error {
	c := callerOf(ctx)
	op := &fsstate.Rename2{Path: src, Dst: dst, Overwrite: overwrite}
	var pre func() error
	if toTrash {
		// Checked under the same lock as the rename, so the subtree cannot
		// change in between; a permission check only, so the journal record
		// (replayed trusted) is plain rename2's.
		pre = func() error { return nn.state.Tree().CheckTrashable(c, src) }
	}
	_, err := nn.mutateCall(loggedCall(ctx), "rename", src, c, op, pre, nil)
	return err
}
