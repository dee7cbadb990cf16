package namenode

import (
	"context"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// Cache pools and directives over RPC, shaped like hdfs cacheadmin. Pools
// are managed by superusers; a directive may be added or removed by a
// superuser, the pool's owner, or anyone the pool's mode lets write.
// Every change is edit-logged and acknowledged once durable, like a
// namespace mutation.

func (nn *NameNode) requireSuperLocked(op string, c namespace.Caller) error {
	if !nn.state.Tree().IsSuper(c) {
		return errDenied("%s: user %s is not a superuser (superuser: %s, supergroup: %s)", op, c.User, nn.cfg.Superuser, nn.cfg.Supergroup)
	}
	return nil
}

// poolWritableLocked checks that the caller may change a pool's directives.
func (nn *NameNode) poolWritableLocked(op string, c namespace.Caller, name string) error {
	p := nn.state.Cache().Pool(name)
	if p == nil {
		return errNotFound("%s: cache pool %s does not exist", op, name)
	}
	inGroup := false
	for _, g := range c.Groups {
		inGroup = inGroup || g == p.Group
	}
	switch {
	case nn.state.Tree().IsSuper(c), c.User == p.Owner, inGroup && p.Mode&0o020 != 0, p.Mode&0o002 != 0:
		return nil
	}
	return errDenied("%s: user %s may not write cache pool %s (owner %s, group %s, mode %#o)", op, c.User, name, p.Owner, p.Group, p.Mode)
}

func (nn *NameNode) addCachePool(ctx context.Context, in *dfspb.CachePoolInfo) error {
	c := callerOf(ctx)
	name := in.GetName()
	if name == "" {
		return errInvalid("addPool: a pool needs a name")
	}
	if in.GetLimit() < 0 {
		return errInvalid("addPool %s: limit %d must not be negative", name, in.GetLimit())
	}
	op := &fsstate.AddCachePool{Pool: name, Owner: in.GetOwner(), Group: in.GetGroup(), Perm: in.GetMode(), Limit: in.GetLimit()}
	if op.Owner == "" {
		op.Owner = c.User
	}
	if op.Group == "" && len(c.Groups) > 0 {
		op.Group = c.Groups[0] // the creator's primary group, as HDFS
	}
	if op.Group == "" {
		op.Group = c.User // a creator in no group: a label, as its owner
	}
	if op.Perm == 0 {
		op.Perm = 0o755
	}
	_, err := nn.mutate("addPool", name, c, op, func() error {
		if err := nn.requireSuperLocked("addPool "+name, c); err != nil {
			return err
		}
		if nn.state.Cache().Pool(name) != nil {
			return errExists("addPool %s: cache pool %s already exists", name, name)
		}
		return nil
	}, nil)
	return err
}

func (nn *NameNode) removeCachePool(ctx context.Context, name string) error {
	c := callerOf(ctx)
	op := &fsstate.RemoveCachePool{Pool: name}
	_, err := nn.mutate("removePool", name, c, op, func() error {
		if err := nn.requireSuperLocked("removePool "+name, c); err != nil {
			return err
		}
		if nn.state.Cache().Pool(name) == nil {
			return errNotFound("removePool %s: cache pool %s does not exist", name, name)
		}
		return nil
	}, func(fsstate.Applied) { nn.directivesChangedLocked() })
	return err
}

func (nn *NameNode) addCacheDirective(ctx context.Context, in *dfspb.CacheDirectiveInfo) (int64, error) {
	c := callerOf(ctx)
	p, err := cleanPath("addDirective", in.GetPath())
	if err != nil {
		return 0, err
	}
	repl := int(in.GetReplication())
	if repl == 0 {
		repl = 1
	}
	if repl < 0 || repl > nn.cfg.MaxReplication {
		return 0, errInvalid("addDirective %s: replication %d is outside [1, %d]", p, repl, nn.cfg.MaxReplication)
	}
	op := &fsstate.AddCacheDirective{Path: p, Pool: in.GetPool(), Replication: repl}
	_, err = nn.mutate("addDirective", p, c, op, func() error {
		if err := nn.poolWritableLocked("addDirective "+p, c, op.Pool); err != nil {
			return err
		}
		if _, err := nn.state.Tree().Stat(c, "addDirective", p); err != nil {
			return err // NotFound naming the path; nothing added
		}
		op.DirectiveID = nn.state.Cache().LastID() + 1
		return nil
	}, func(fsstate.Applied) { nn.directivesChangedLocked() })
	return op.DirectiveID, err
}

func (nn *NameNode) removeCacheDirective(ctx context.Context, id int64) error {
	c := callerOf(ctx)
	op := &fsstate.RemoveCacheDirective{DirectiveID: id}
	_, err := nn.mutate("removeDirective", "", c, op, func() error {
		d := nn.state.Cache().Directive(id)
		if d == nil {
			return errNotFound("removeDirective: cache directive %d does not exist", id)
		}
		return nn.poolWritableLocked("removeDirective "+d.Path, c, d.Pool)
	}, func(fsstate.Applied) { nn.directivesChangedLocked() })
	return err
}

// directivesChangedLocked applies directive changes to the pinned policy
// at once rather than at the next tick.
func (nn *NameNode) directivesChangedLocked() {
	if m := nn.cache; m.plan.Name() == "pinned" {
		m.plan.State().SetPins(nn.resolveDirectivesLocked())
		nn.queueCacheChangesLocked(m.plan.Tick(nn.clock()))
	}
}

// directiveStatsLocked fills bytes needed and cached and the file count of
// a directive: needed counts replication copies of every block, cached
// the copies datanodes report, up to replication.
func (nn *NameNode) directiveStatsLocked(d *fsstate.CacheDirective) (needed, cached, files int64) {
	n, err := nn.state.Tree().Lookup(d.Path)
	if err != nil {
		return 0, 0, 0
	}
	count := func(f *namespace.INode) {
		files++
		for _, b := range f.Blocks {
			if b.State != blockmap.Complete {
				continue
			}
			// Saturated: a directive's replication times a 48-bit
			// block need not fit (see namespace.Space).
			needed = namespace.AddSpace(needed, namespace.Space(b.NumBytes, d.Replication))
			cached = namespace.AddSpace(cached, namespace.Space(b.NumBytes, min(len(nn.cachedOnLocked(b.ID)), d.Replication)))
		}
	}
	if !n.IsDir() {
		count(n)
		return
	}
	for _, c := range n.Children() {
		if !c.IsDir() {
			count(c)
		}
	}
	return
}

func (nn *NameNode) listCachePools() []*dfspb.CachePoolInfo {
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	d := nn.state.Cache()
	var out []*dfspb.CachePoolInfo
	for _, p := range d.Pools() {
		info := &dfspb.CachePoolInfo{Name: p.Name, Owner: p.Owner, Group: p.Group, Mode: p.Mode, Limit: p.Limit}
		for _, dir := range d.Directives() {
			if dir.Pool == p.Name {
				needed, cached, files := nn.directiveStatsLocked(dir)
				info.BytesNeeded, info.BytesCached, info.Files = info.BytesNeeded+needed, info.BytesCached+cached, info.Files+files
			}
		}
		out = append(out, info)
	}
	return out
}

func (nn *NameNode) listCacheDirectives(req *dfspb.ListCacheDirectivesRequest) ([]*dfspb.CacheDirectiveInfo, error) {
	var path string
	if req.GetPath() != "" {
		p, err := cleanPath("listDirectives", req.GetPath())
		if err != nil {
			return nil, err
		}
		path = p
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	var out []*dfspb.CacheDirectiveInfo
	for _, d := range nn.state.Cache().Directives() {
		if req.GetPool() != "" && d.Pool != req.GetPool() || path != "" && d.Path != path {
			continue
		}
		needed, cached, files := nn.directiveStatsLocked(d)
		out = append(out, &dfspb.CacheDirectiveInfo{Id: d.ID, Path: d.Path, Pool: d.Pool, Replication: int32(d.Replication),
			BytesNeeded: needed, BytesCached: cached, Files: files})
	}
	return out, nil
}

// ---------------------------------------------------------------- RPC

func (s *clientRPC) AddCachePool(ctx context.Context, r *dfspb.AddCachePoolRequest) (*dfspb.AddCachePoolResponse, error) {
	return &dfspb.AddCachePoolResponse{}, s.nn.addCachePool(ctx, r.GetPool())
}

func (s *clientRPC) RemoveCachePool(ctx context.Context, r *dfspb.RemoveCachePoolRequest) (*dfspb.RemoveCachePoolResponse, error) {
	return &dfspb.RemoveCachePoolResponse{}, s.nn.removeCachePool(ctx, r.GetName())
}

func (s *clientRPC) ListCachePools(ctx context.Context, r *dfspb.ListCachePoolsRequest) (*dfspb.ListCachePoolsResponse, error) {
	return &dfspb.ListCachePoolsResponse{Pools: s.nn.listCachePools()}, nil
}

func (s *clientRPC) AddCacheDirective(ctx context.Context, r *dfspb.AddCacheDirectiveRequest) (*dfspb.AddCacheDirectiveResponse, error) {
	id, err := s.nn.addCacheDirective(ctx, r.GetDirective())
	if err != nil {
		return nil, err
	}
	return &dfspb.AddCacheDirectiveResponse{Id: id}, nil
}

func (s *clientRPC) RemoveCacheDirective(ctx context.Context, r *dfspb.RemoveCacheDirectiveRequest) (*dfspb.RemoveCacheDirectiveResponse, error) {
	return &dfspb.RemoveCacheDirectiveResponse{}, s.nn.removeCacheDirective(ctx, r.GetId())
}

func (s *clientRPC) ListCacheDirectives(ctx context.Context, r *dfspb.ListCacheDirectivesRequest) (*dfspb.ListCacheDirectivesResponse, error) {
	ds, err := s.nn.listCacheDirectives(r)
	if err != nil {
		return nil, err
	}
	return &dfspb.ListCacheDirectivesResponse{Directives: ds}, nil
}
