package fsstate

import (
	"fmt"
	"maps"
	"slices"

	"smarth/internal/namenode/namespace"
)

// Cache pools and directives (HDFS centralized cache management): part of
// the namespace, so they are edit-logged and checkpointed like files.
// The "pinned" cache policy caches what the directives name.

// CachePool groups directives under an owner and a byte limit.
type CachePool struct {
	Name, Owner, Group string
	Mode               uint32
	Limit              int64 // bytes; 0 = unlimited
}

// CacheDirective pins a path (a file, or the files directly in a
// directory) on Replication datanodes.
type CacheDirective struct {
	ID          int64
	Path, Pool  string
	Replication int
}

// CacheDirs is the persisted part of caching. The cache manager reads it
// under the namenode's lock; only records change it.
type CacheDirs struct {
	pools      map[string]*CachePool
	directives map[int64]*CacheDirective
	lastID     int64 // highest directive id ever handed out; never reused
}

func newCacheDirs() *CacheDirs {
	return &CacheDirs{pools: map[string]*CachePool{}, directives: map[int64]*CacheDirective{}}
}

// Pool is the pool of that name, or nil.
func (d *CacheDirs) Pool(name string) *CachePool { return d.pools[name] }

// Directive is the directive of that id, or nil.
func (d *CacheDirs) Directive(id int64) *CacheDirective { return d.directives[id] }

// LastID is the highest directive id ever handed out.
func (d *CacheDirs) LastID() int64 { return d.lastID }

// Pools and Directives list in a stable order.
func (d *CacheDirs) Pools() []*CachePool {
	out := make([]*CachePool, 0, len(d.pools))
	for _, name := range slices.Sorted(maps.Keys(d.pools)) {
		out = append(out, d.pools[name])
	}
	return out
}

func (d *CacheDirs) Directives() []*CacheDirective {
	out := make([]*CacheDirective, 0, len(d.directives))
	for _, id := range slices.Sorted(maps.Keys(d.directives)) {
		out = append(out, d.directives[id])
	}
	return out
}

// The cache records: the live path checked everything first (with status
// codes for the caller); an error in apply means the log and the state
// disagree.

// AddCachePool adds a pool.
type AddCachePool struct {
	Pool, Owner, Group string
	Perm               uint32 // the pool's mode
	Limit              int64  // bytes; 0 = unlimited
}

func (*AddCachePool) Kind() Kind { return kindAddCachePool }
func (r *AddCachePool) encode(e *enc) {
	e.s(r.Pool)
	e.s(r.Owner)
	e.s(r.Group)
	e.u(uint64(r.Perm))
	e.i(r.Limit)
}
func (r *AddCachePool) decode(d *dec) {
	r.Pool, r.Owner, r.Group, r.Perm, r.Limit = d.s(), d.s(), d.s(), uint32(d.u()), d.i()
}
func (r *AddCachePool) apply(s *State, _ namespace.Caller) (Applied, error) {
	if s.cache.pools[r.Pool] != nil {
		return Applied{}, fmt.Errorf("cache pool %s exists", r.Pool)
	}
	s.cache.pools[r.Pool] = &CachePool{Name: r.Pool, Owner: r.Owner, Group: r.Group, Mode: r.Perm, Limit: r.Limit}
	return Applied{}, nil
}

// RemoveCachePool removes a pool and its directives.
type RemoveCachePool struct{ Pool string }

func (*RemoveCachePool) Kind() Kind      { return kindRemoveCachePool }
func (r *RemoveCachePool) encode(e *enc) { e.s(r.Pool) }
func (r *RemoveCachePool) decode(d *dec) { r.Pool = d.s() }
func (r *RemoveCachePool) apply(s *State, _ namespace.Caller) (Applied, error) {
	d := s.cache
	if d.pools[r.Pool] == nil {
		return Applied{}, fmt.Errorf("cache pool %s does not exist", r.Pool)
	}
	delete(d.pools, r.Pool)
	for id, dir := range d.directives {
		if dir.Pool == r.Pool {
			delete(d.directives, id)
		}
	}
	return Applied{}, nil
}

// AddCacheDirective adds a directive with a new id (the live path hands
// out LastID()+1).
type AddCacheDirective struct {
	DirectiveID int64
	Path, Pool  string
	Replication int
}

func (*AddCacheDirective) Kind() Kind { return kindAddCacheDirective }
func (r *AddCacheDirective) encode(e *enc) {
	e.i(r.DirectiveID)
	e.s(r.Path)
	e.s(r.Pool)
	e.u(uint64(r.Replication))
}
func (r *AddCacheDirective) decode(d *dec) {
	r.DirectiveID, r.Path, r.Pool, r.Replication = d.i(), d.s(), d.s(), int(d.u())
}
func (r *AddCacheDirective) apply(s *State, _ namespace.Caller) (Applied, error) {
	d := s.cache
	if d.pools[r.Pool] == nil {
		return Applied{}, fmt.Errorf("cache pool %s does not exist", r.Pool)
	}
	if d.directives[r.DirectiveID] != nil {
		return Applied{}, fmt.Errorf("cache directive %d exists", r.DirectiveID)
	}
	d.directives[r.DirectiveID] = &CacheDirective{ID: r.DirectiveID, Path: r.Path, Pool: r.Pool, Replication: r.Replication}
	d.lastID = max(d.lastID, r.DirectiveID)
	return Applied{}, nil
}

// RemoveCacheDirective removes a directive.
type RemoveCacheDirective struct{ DirectiveID int64 }

func (*RemoveCacheDirective) Kind() Kind      { return kindRemoveCacheDirective }
func (r *RemoveCacheDirective) encode(e *enc) { e.i(r.DirectiveID) }
func (r *RemoveCacheDirective) decode(d *dec) { r.DirectiveID = d.i() }
func (r *RemoveCacheDirective) apply(s *State, _ namespace.Caller) (Applied, error) {
	if s.cache.directives[r.DirectiveID] == nil {
		return Applied{}, fmt.Errorf("cache directive %d does not exist", r.DirectiveID)
	}
	delete(s.cache.directives, r.DirectiveID)
	return Applied{}, nil
}

// Image records of the cache state, after the inodes.
const (
	recImageCacheHeader    = 'C' // last directive id
	recImageCachePool      = 'P'
	recImageCacheDirective = 'D'
)

// eachCacheRecord emits the cache header, pools and directives. A pool
// or directive is stored as the fields of the record that adds it.
func (d *CacheDirs) eachCacheRecord(e *enc, emit func([]byte)) {
	e.b = append(e.b[:0], recImageCacheHeader)
	e.i(d.lastID)
	emit(e.b)
	for _, p := range d.Pools() {
		e.b = append(e.b[:0], recImageCachePool)
		(&AddCachePool{Pool: p.Name, Owner: p.Owner, Group: p.Group, Perm: p.Mode, Limit: p.Limit}).encode(e)
		emit(e.b)
	}
	for _, dir := range d.Directives() {
		e.b = append(e.b[:0], recImageCacheDirective)
		(&AddCacheDirective{DirectiveID: dir.ID, Path: dir.Path, Pool: dir.Pool, Replication: dir.Replication}).encode(e)
		emit(e.b)
	}
}

// loadCacheRecord restores one cache record of an image.
func (s *State) loadCacheRecord(b []byte) error {
	d := &dec{b: b[1:]}
	var r Record
	switch b[0] {
	case recImageCacheHeader:
		id := d.i()
		if err := d.done(); err != nil {
			return fmt.Errorf("image cache header: %w", err)
		}
		s.cache.lastID = max(s.cache.lastID, id)
		return nil
	case recImageCachePool:
		r = &AddCachePool{}
	case recImageCacheDirective:
		r = &AddCacheDirective{}
	default:
		return fmt.Errorf("unknown image record %q", b[0])
	}
	r.decode(d)
	if err := d.done(); err != nil {
		return fmt.Errorf("image %s record: %w", r.Kind(), err)
	}
	_, err := r.apply(s, namespace.Caller{Trusted: true})
	return err
}
