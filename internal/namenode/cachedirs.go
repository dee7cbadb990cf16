package namenode

import (
	"fmt"
	"maps"
	"slices"
)

// Cache pools and directives (HDFS centralized cache management): part of
// the namespace, so they are edit-logged and checkpointed like files.
// The "pinned" cache policy caches what the directives name.

// cachePool groups directives under an owner and a byte limit.
type cachePool struct {
	Name, Owner, Group string
	Mode               uint32
	Limit              int64 // bytes; 0 = unlimited
}

// cacheDirective pins a path (a file, or the files directly in a
// directory) on Replication datanodes.
type cacheDirective struct {
	ID          int64
	Path, Pool  string
	Replication int
}

// cacheDirs is the persisted part of caching.
type cacheDirs struct {
	pools      map[string]*cachePool
	directives map[int64]*cacheDirective
	lastID     int64 // highest directive id ever handed out; never reused
}

func newCacheDirs() *cacheDirs {
	return &cacheDirs{pools: map[string]*cachePool{}, directives: map[int64]*cacheDirective{}}
}

// dirs returns the state's pools and directives, made on first use (test
// states are built without them).
func (s *fsState) dirs() *cacheDirs {
	if s.cache == nil {
		s.cache = newCacheDirs()
	}
	return s.cache
}

// sortedPools and sortedDirectives list in a stable order.
func (d *cacheDirs) sortedPools() []*cachePool {
	out := make([]*cachePool, 0, len(d.pools))
	for _, name := range slices.Sorted(maps.Keys(d.pools)) {
		out = append(out, d.pools[name])
	}
	return out
}

func (d *cacheDirs) sortedDirectives() []*cacheDirective {
	out := make([]*cacheDirective, 0, len(d.directives))
	for _, id := range slices.Sorted(maps.Keys(d.directives)) {
		out = append(out, d.directives[id])
	}
	return out
}

// applyCacheOp applies one pool or directive edit. The live path checked
// everything first (with status codes for the caller); an error here means
// the log and the state disagree.
func (s *fsState) applyCacheOp(o *editOp) error {
	d := s.dirs()
	switch o.Kind {
	case opAddCachePool:
		if d.pools[o.Pool] != nil {
			return fmt.Errorf("cache pool %s exists", o.Pool)
		}
		d.pools[o.Pool] = &cachePool{Name: o.Pool, Owner: o.Owner, Group: o.Group, Mode: o.Perm, Limit: o.Limit}
	case opRemoveCachePool:
		if d.pools[o.Pool] == nil {
			return fmt.Errorf("cache pool %s does not exist", o.Pool)
		}
		delete(d.pools, o.Pool)
		for id, dir := range d.directives {
			if dir.Pool == o.Pool {
				delete(d.directives, id)
			}
		}
	case opAddCacheDirective:
		if d.pools[o.Pool] == nil {
			return fmt.Errorf("cache pool %s does not exist", o.Pool)
		}
		if d.directives[o.DirectiveID] != nil {
			return fmt.Errorf("cache directive %d exists", o.DirectiveID)
		}
		d.directives[o.DirectiveID] = &cacheDirective{ID: o.DirectiveID, Path: o.Path, Pool: o.Pool, Replication: o.Replication}
		d.lastID = max(d.lastID, o.DirectiveID)
	case opRemoveCacheDirective:
		if d.directives[o.DirectiveID] == nil {
			return fmt.Errorf("cache directive %d does not exist", o.DirectiveID)
		}
		delete(d.directives, o.DirectiveID)
	default:
		return fmt.Errorf("not a cache op: %s", o.Kind)
	}
	return nil
}

func encodeCacheOp(e *enc, o *editOp) {
	switch o.Kind {
	case opAddCachePool:
		e.s(o.Pool)
		e.s(o.Owner)
		e.s(o.Group)
		e.u(uint64(o.Perm))
		e.i(o.Limit)
	case opRemoveCachePool:
		e.s(o.Pool)
	case opAddCacheDirective:
		e.i(o.DirectiveID)
		e.s(o.Path)
		e.s(o.Pool)
		e.u(uint64(o.Replication))
	case opRemoveCacheDirective:
		e.i(o.DirectiveID)
	}
}

func decodeCacheOp(d *dec, o *editOp) {
	switch o.Kind {
	case opAddCachePool:
		o.Pool, o.Owner, o.Group, o.Perm, o.Limit = d.s(), d.s(), d.s(), uint32(d.u()), d.i()
	case opRemoveCachePool:
		o.Pool = d.s()
	case opAddCacheDirective:
		o.DirectiveID, o.Path, o.Pool, o.Replication = d.i(), d.s(), d.s(), int(d.u())
	case opRemoveCacheDirective:
		o.DirectiveID = d.i()
	}
}

func isCacheOp(k opKind) bool { return k >= opAddCachePool && k <= opRemoveCacheDirective }

// Image records of the cache state, after the inodes.
const (
	recImageCacheHeader    = 'C' // last directive id
	recImageCachePool      = 'P'
	recImageCacheDirective = 'D'
)

// eachCacheRecord emits the cache header, pools and directives.
func (d *cacheDirs) eachCacheRecord(e *enc, emit func([]byte)) {
	e.b = append(e.b[:0], recImageCacheHeader)
	e.i(d.lastID)
	emit(e.b)
	for _, p := range d.sortedPools() {
		e.b = append(e.b[:0], recImageCachePool)
		encodeCacheOp(e, &editOp{Kind: opAddCachePool, Pool: p.Name, Owner: p.Owner, Group: p.Group, Perm: p.Mode, Limit: p.Limit})
		emit(e.b)
	}
	for _, dir := range d.sortedDirectives() {
		e.b = append(e.b[:0], recImageCacheDirective)
		encodeCacheOp(e, &editOp{Kind: opAddCacheDirective, DirectiveID: dir.ID, Path: dir.Path, Pool: dir.Pool, Replication: dir.Replication})
		emit(e.b)
	}
}

// loadCacheRecord restores one cache record of an image.
func (s *fsState) loadCacheRecord(b []byte) error {
	d := &dec{b: b[1:]}
	o := &editOp{}
	switch b[0] {
	case recImageCacheHeader:
		id := d.i()
		if err := d.done(); err != nil {
			return fmt.Errorf("image cache header: %w", err)
		}
		s.dirs().lastID = max(s.dirs().lastID, id)
		return nil
	case recImageCachePool:
		o.Kind = opAddCachePool
	case recImageCacheDirective:
		o.Kind = opAddCacheDirective
	default:
		return fmt.Errorf("unknown image record %q", b[0])
	}
	decodeCacheOp(d, o)
	if err := d.done(); err != nil {
		return fmt.Errorf("image %s record: %w", o.Kind, err)
	}
	return s.applyCacheOp(o)
}
