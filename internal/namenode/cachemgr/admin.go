package cachemgr

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// Cache pools and directives over RPC, shaped like hdfs cacheadmin. Pools
// are managed by superusers; a directive may be added or removed by a
// superuser, the pool's owner, or anyone the pool's mode lets write: the
// namenode's authorization point decides that in Commit, before the
// checks here. Every change is edit-logged and acknowledged once durable,
// like a namespace mutation.

func errorf(code codes.Code, format string, a ...any) error {
	return status.Error(code, fmt.Sprintf(format, a...))
}

// AddPool adds a pool for c.
func (m *Manager) AddPool(ctx context.Context, c namespace.Caller, in *dfspb.CachePoolInfo) error {
	name := in.GetName()
	if name == "" {
		return errorf(codes.InvalidArgument, "addPool: a pool needs a name")
	}
	if in.GetLimit() < 0 {
		return errorf(codes.InvalidArgument, "addPool %s: limit %d must not be negative", name, in.GetLimit())
	}
	p := Pool{Name: name, Owner: in.GetOwner(), Group: in.GetGroup(), Mode: in.GetMode(), Limit: in.GetLimit()}
	if p.Owner == "" {
		p.Owner = c.User
	}
	if p.Group == "" && len(c.Groups) > 0 {
		p.Group = c.Groups[0] // the creator's primary group, as HDFS
	}
	if p.Group == "" {
		p.Group = c.User // a creator in no group: a label, as its owner
	}
	if p.Mode == 0 {
		p.Mode = 0o755
	}
	return m.nn.Commit(ctx, c, &Change{Kind: AddPool, Pool: p}, func() error {
		if m.nn.Dirs().Pool(name) != nil {
			return errorf(codes.AlreadyExists, "addPool %s: cache pool %s already exists", name, name)
		}
		return nil
	}, nil)
}

// RemovePool removes a pool and its directives.
func (m *Manager) RemovePool(ctx context.Context, c namespace.Caller, name string) error {
	return m.nn.Commit(ctx, c, &Change{Kind: RemovePool, Pool: Pool{Name: name}}, func() error {
		if m.nn.Dirs().Pool(name) == nil {
			return errorf(codes.NotFound, "removePool %s: cache pool %s does not exist", name, name)
		}
		return nil
	}, m.directivesChangedLocked)
}

// AddDirective adds a directive for c and returns its id.
func (m *Manager) AddDirective(ctx context.Context, c namespace.Caller, in *dfspb.CacheDirectiveInfo) (int64, error) {
	p, err := cleanPath("addDirective", in.GetPath())
	if err != nil {
		return 0, err
	}
	repl := int(in.GetReplication())
	if repl == 0 {
		repl = 1
	}
	if repl < 0 || repl > m.cfg.MaxReplication {
		return 0, errorf(codes.InvalidArgument, "addDirective %s: replication %d is outside [1, %d]", p, repl, m.cfg.MaxReplication)
	}
	ch := &Change{Kind: AddDirective, Directive: Directive{Path: p, Pool: in.GetPool(), Replication: repl}}
	err = m.nn.Commit(ctx, c, ch, func() error {
		if err := m.nn.Stat(c, "addDirective", p); err != nil {
			return err // NotFound naming the path; nothing added
		}
		ch.Directive.ID = m.nn.Dirs().LastID + 1
		return nil
	}, m.directivesChangedLocked)
	return ch.Directive.ID, err
}

// RemoveDirective removes a directive by id.
func (m *Manager) RemoveDirective(ctx context.Context, c namespace.Caller, id int64) error {
	return m.nn.Commit(ctx, c, &Change{Kind: RemoveDirective, Directive: Directive{ID: id}}, func() error {
		if m.nn.Dirs().Directive(id) == nil {
			return errorf(codes.NotFound, "removeDirective: cache directive %d does not exist", id)
		}
		return nil
	}, m.directivesChangedLocked)
}

// cleanPath validates a path argument for op, as the namenode's handlers.
func cleanPath(op, path string) (string, error) {
	p, err := namespace.Clean(path)
	if err != nil {
		return "", errorf(codes.InvalidArgument, "%s %s: %v", op, path, err)
	}
	return p, nil
}

// directivesChangedLocked applies directive changes to the pinned policy
// at once rather than at the next tick.
func (m *Manager) directivesChangedLocked() {
	if m.plan.Name() == "pinned" {
		m.plan.State().SetPins(m.resolveDirectivesLocked())
		m.queueLocked(m.plan.Tick(m.clock()))
	}
}

// directiveStatsLocked fills bytes needed and cached and the file count of
// a directive: needed counts replication copies of every block, cached
// the copies datanodes report, up to replication.
func (m *Manager) directiveStatsLocked(d Directive) (needed, cached, files int64) {
	n := m.nn.Lookup(d.Path)
	if n == nil {
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
			cached = namespace.AddSpace(cached, namespace.Space(b.NumBytes, min(len(m.CachedOnLocked(b.ID)), d.Replication)))
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

// ListPools lists the pools with the bytes and files their directives
// need and have cached.
func (m *Manager) ListPools() []*dfspb.CachePoolInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d := m.nn.Dirs()
	var out []*dfspb.CachePoolInfo
	for _, p := range d.Pools {
		info := &dfspb.CachePoolInfo{Name: p.Name, Owner: p.Owner, Group: p.Group, Mode: p.Mode, Limit: p.Limit}
		for _, dir := range d.Directives {
			if dir.Pool == p.Name {
				needed, cached, files := m.directiveStatsLocked(dir)
				info.BytesNeeded, info.BytesCached, info.Files = info.BytesNeeded+needed, info.BytesCached+cached, info.Files+files
			}
		}
		out = append(out, info)
	}
	return out
}

// ListDirectives lists the directives of a pool or on a path (all when
// the request names neither), with their statistics.
func (m *Manager) ListDirectives(req *dfspb.ListCacheDirectivesRequest) ([]*dfspb.CacheDirectiveInfo, error) {
	var path string
	if req.GetPath() != "" {
		p, err := cleanPath("listDirectives", req.GetPath())
		if err != nil {
			return nil, err
		}
		path = p
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*dfspb.CacheDirectiveInfo
	for _, d := range m.nn.Dirs().Directives {
		if req.GetPool() != "" && d.Pool != req.GetPool() || path != "" && d.Path != path {
			continue
		}
		needed, cached, files := m.directiveStatsLocked(d)
		out = append(out, &dfspb.CacheDirectiveInfo{Id: d.ID, Path: d.Path, Pool: d.Pool, Replication: int32(d.Replication),
			BytesNeeded: needed, BytesCached: cached, Files: files})
	}
	return out, nil
}
