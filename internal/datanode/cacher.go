package datanode

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"smarth/internal/datanode/memcache"
	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// cacher runs the namenode's cache and uncache commands. Cache commands
// arrive in heartbeat replies and reading a block takes a while, so they
// are queued and run by cache_concurrency workers off the heartbeat path;
// uncaching is immediate.
type cacher struct {
	d     *DataNode
	cache *memcache.Cache
	wake  chan struct{} // one token: the queue has work

	mu     sync.Mutex
	queue  []uint64            // guarded by mu: block ids to cache, in command order
	queued map[uint64]struct{} // guarded by mu: the same ids, to drop duplicates
	busy   int                 // guarded by mu: ids taken by workers and not yet done
	warned bool                // guarded by mu: the mlock failure was logged
}

func newCacher(d *DataNode, c *memcache.Cache) *cacher {
	return &cacher{d: d, cache: c, wake: make(chan struct{}, 1), queued: map[uint64]struct{}{}}
}

// enqueue queues blocks to cache. Ids already queued, cached or being
// cached are left alone.
func (k *cacher) enqueue(ids []uint64) {
	k.mu.Lock()
	for _, id := range ids {
		if _, ok := k.queued[id]; !ok {
			k.queued[id] = struct{}{}
			k.queue = append(k.queue, id)
		}
	}
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// uncache drops blocks from the cache and from the queue. Unknown ids are
// harmless: the namenode may be a heartbeat behind.
func (k *cacher) uncache(ids []uint64) {
	k.mu.Lock()
	for _, id := range ids {
		delete(k.queued, id) // the worker skips ids no longer in queued
	}
	k.mu.Unlock()
	for _, id := range ids {
		if k.cache.Uncache(id) {
			k.d.metrics.blocksUncached.Inc()
			k.d.log.Info("block uncached", "block", id, "why", "uncache command")
		} else {
			k.d.log.Debug("uncache command for a block not cached here", "block", id)
		}
	}
}

// replicaChanged is the store's Changed hook: a cached copy of a replica
// that was deleted, replaced, recovered or found corrupt is dropped at
// once. It runs under the store's lock and only touches the cache.
func (k *cacher) replicaChanged(id uint64) {
	if k.cache.Uncache(id) {
		k.d.metrics.blocksUncached.Inc()
		k.d.log.Info("block uncached", "block", id, "why", "replica changed, deleted or found corrupt")
	}
}

// next takes the next queued id, or reports false when the queue is empty.
func (k *cacher) next() (uint64, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.queue) > 0 {
		id := k.queue[0]
		k.queue = k.queue[1:]
		if _, ok := k.queued[id]; ok {
			delete(k.queued, id)
			k.busy++
			return id, true
		}
	}
	return 0, false
}

// done ends the work next handed out.
func (k *cacher) done() {
	k.mu.Lock()
	k.busy--
	k.mu.Unlock()
}

// idle reports whether no cache command is queued or running.
func (k *cacher) idle() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.queued) == 0 && k.busy == 0
}

// run is one cache worker; cache_concurrency of them run.
func (k *cacher) run() {
	for {
		id, ok := k.next()
		if !ok {
			select {
			case <-k.d.ctx.Done():
				return
			case <-k.wake:
				continue
			}
		}
		if k.d.ctx.Err() != nil {
			k.done()
			return
		}
		// Another worker may sleep on an empty wake channel while the
		// queue still has ids: pass the token on.
		select {
		case k.wake <- struct{}{}:
		default:
		}
		k.load(id)
		k.done()
	}
}

// load reads a finalized replica into the cache, verifying every chunk
// against its stored checksum as HDFS does when caching. A corrupt replica
// is not cached and is reported bad; it is never served from memory.
func (k *cacher) load(id uint64) {
	d := k.d
	snap, ok := d.store.Get(id)
	if !ok || snap.State != store.Finalized || snap.Corrupt {
		d.log.Debug("cache command for a block with no finalized replica here", "block", id, "found", ok, "state", snap.State.String())
		return
	}
	sumsLen := int64(datatransfer.ChunkCount(int(snap.Length), snap.BytesPerChecksum) * datatransfer.ChecksumSize)
	// Reserve first, then open: a change of the replica after Begin
	// cancels the fill (the store's hook), so what is committed is never
	// older than the replica the store has.
	fill, err := k.cache.Begin(id, snap.GS, snap.Length, sumsLen, snap.BytesPerChecksum)
	switch {
	case errors.Is(err, memcache.ErrFull):
		d.metrics.cacheFailures.WithLabelValues("capacity").Inc()
		d.log.Info("block not cached: cache full", "block", snap.Name(), "err", err)
		return
	case errors.Is(err, memcache.ErrCached), errors.Is(err, memcache.ErrLoading), errors.Is(err, memcache.ErrClosed):
		d.log.Debug("cache command skipped", "block", snap.Name(), "err", err)
		return
	case err != nil:
		d.metrics.cacheFailures.WithLabelValues("io").Inc()
		d.log.Warn("block not cached", "block", snap.Name(), "err", err)
		return
	}
	k.warnUnlocked(fill)
	rep, err := k.fill(fill, snap)
	if err != nil {
		k.cache.Abort(fill)
		k.failed(rep, err)
		return
	}
	if err := k.cache.Commit(fill); err != nil {
		d.log.Debug("block not cached", "block", snap.Name(), "err", err)
		return
	}
	d.metrics.blocksCached.Inc()
	d.log.Info("block cached", "block", snap.Name(), "bytes", snap.Length)
}

// fill reads the replica's data and checksums into the reservation and
// verifies them. It returns the replica it read.
func (k *cacher) fill(f *memcache.Fill, snap store.Replica) (store.Replica, error) {
	h, err := k.d.store.Open(snap.BlockID, snap.GS)
	if err != nil {
		return snap, err
	}
	defer h.Close()
	if h.GS != snap.GS || h.State != store.Finalized || h.Length != snap.Length || h.BytesPerChecksum != snap.BytesPerChecksum {
		return h.Replica, fmt.Errorf("%w: %s changed while being cached", memcache.ErrCancelled, snap.Name())
	}
	if _, err := io.ReadFull(io.NewSectionReader(h.Data, 0, h.Length), f.Data()); err != nil {
		return h.Replica, fmt.Errorf("%w: %s: block file shorter than %d bytes: %v", store.ErrCorrupt, h.Name(), h.Length, err)
	}
	if err := h.ReadChecksums(f.Sums(), 0); err != nil {
		return h.Replica, fmt.Errorf("%w: %v", store.ErrCorrupt, err)
	}
	if i := datatransfer.VerifyChecksums(f.Sums(), f.Data(), h.BytesPerChecksum); i >= 0 {
		return h.Replica, fmt.Errorf("%w: %s: checksum mismatch in chunk at offset %d", store.ErrCorrupt, h.Name(), int64(i)*int64(h.BytesPerChecksum))
	}
	if k.d.cfg.DropCacheBehindReads {
		// The bytes are in the cache now; keeping them in the page cache
		// too would hold them twice.
		dropCache(h.Data, 0, h.Length)
		dropCache(h.Meta, 0, 0)
		k.d.reads.forget(h.BlockID)
	}
	return h.Replica, nil
}

// failed accounts for a block that could not be cached.
func (k *cacher) failed(r store.Replica, err error) {
	d := k.d
	switch {
	case errors.Is(err, store.ErrCorrupt):
		d.metrics.cacheFailures.WithLabelValues("checksum").Inc()
		d.metrics.checksumFailures.Inc()
		d.log.Warn("block not cached: replica is corrupt", "block", r.Name(), "err", err)
		d.scanner.corrupt(r, err)
	case errors.Is(err, memcache.ErrCancelled), errors.Is(err, store.ErrNotFound):
		d.log.Debug("block not cached", "block", r.Name(), "err", err)
	default:
		d.metrics.cacheFailures.WithLabelValues("io").Inc()
		d.log.Warn("block not cached: cannot read replica", "block", r.Name(), "err", err)
	}
}

// warnUnlocked logs once that cached blocks could not be mlocked.
func (k *cacher) warnUnlocked(f *memcache.Fill) {
	if f.Locked() || len(f.Data()) == 0 {
		return
	}
	k.mu.Lock()
	warned := k.warned
	k.warned = true
	k.mu.Unlock()
	if !warned {
		k.d.log.Warn("cannot lock cached blocks in memory (mlock); caching them unlocked: raise RLIMIT_MEMLOCK to cache_capacity or grant CAP_IPC_LOCK",
			"err", k.cache.Stats().LockErr, "cache_capacity", k.cache.Capacity())
	}
}

// report fills in what a heartbeat says about the cache: only blocks fully
// cached and verified are listed; cache_used counts loads in progress too.
func (k *cacher) report(req *dfspb.HeartbeatRequest) {
	st := k.cache.Stats()
	req.CacheCapacity, req.CacheUsed, req.CachedBlockIds = st.Capacity, st.Used, st.IDs
}
