package resourcemanager

import (
	"context"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/mrpb"
)

// CacheStatusSource tells the resource manager what the namenode's cache
// manager knows of running jobs' inputs (seed 003): R_j and where each
// cached block is. The namenode client implements it; tests pass a fake.
type CacheStatusSource interface {
	JobCacheStatus(ctx context.Context, jobs []client.JobInput) (map[string]client.JobCache, error)
}

var _ CacheStatusSource = (*client.FileSystem)(nil)

// cacheStatusTimeout bounds one JobCacheStatus call; a namenode slower
// than that leaves the last answer in place until the next round.
const cacheStatusTimeout = 5 * time.Second

// jobCache is what the resource manager knows of one job's input in
// datanode memory. It is refreshed from the namenode every heartbeat
// interval; until the first answer it comes from the cached hosts the
// job client saw when it cut the splits.
type jobCache struct {
	blocks    []uint64            // the job's input block ids, each once
	fraction  float64             // R_j
	hosts     map[uint64][]string // block id -> canonical hostnames caching it
	known     bool                // the namenode has been told of the job, so it must hear of its end
	forgotten bool                // the namenode has been told the job is over
}

// initialCache builds a job's cache state from its splits.
func initialCache(splits []*mrpb.Split) jobCache {
	c := jobCache{hosts: map[uint64][]string{}}
	seen := map[uint64]bool{}
	cached := 0
	for _, s := range splits {
		id := s.GetBlockId()
		if id == 0 || seen[id] {
			continue
		}
		seen[id] = true
		c.blocks = append(c.blocks, id)
		if len(s.GetCachedHosts()) > 0 {
			c.hosts[id] = s.GetCachedHosts()
			cached++
		}
	}
	if len(c.blocks) > 0 {
		c.fraction = float64(cached) / float64(len(c.blocks))
	}
	return c
}

// hostsOf are the hosts caching split s's block.
func (c *jobCache) hostsOf(s *mrpb.Split) []string {
	if s.GetBlockId() == 0 {
		return nil
	}
	return c.hosts[s.GetBlockId()]
}

// cacheLoop keeps the jobs' cache state fresh: every heartbeat interval,
// and at once after a submission, until the resource manager stops.
func (rm *ResourceManager) cacheLoop(src CacheStatusSource) {
	defer rm.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rm.wg.Add(1)
	go func() { // a call in flight must not hold up Close
		defer rm.wg.Done()
		select {
		case <-rm.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(rm.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-rm.stop:
			return
		case <-t.C:
		case <-rm.cacheKick:
		}
		rm.refreshCache(ctx, src)
	}
}

// kickCache asks the cache loop for an early round (a job was submitted).
func (rm *ResourceManager) kickCache() {
	select {
	case rm.cacheKick <- struct{}{}:
	default:
	}
}

// refreshCache sends the namenode every active job's input blocks and
// the jobs that have ended since, and keeps what it answers. The lock is
// not held during the call. When the namenode does not answer (down, or
// a namenode without a cache manager: Unimplemented), scheduling goes on
// with what is known: the last answer, or the split-time cached hosts.
// The first failure is logged, and the recovery, not every round.
func (rm *ResourceManager) refreshCache(ctx context.Context, src CacheStatusSource) {
	rm.mu.Lock()
	req, sent := rm.cacheRequest()
	rm.mu.Unlock()
	if len(req) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, cacheStatusTimeout)
	resp, err := src.JobCacheStatus(rctx, req)
	cancel()
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if err != nil {
		if !rm.cacheFailing && ctx.Err() == nil {
			rm.log.Warn("namenode gives no job cache status; scheduling without fresh cache information", "err", err)
		}
		rm.cacheFailing = true
		return
	}
	if rm.cacheFailing {
		rm.log.Info("namenode gives job cache status again")
		rm.cacheFailing = false
	}
	for _, j := range sent {
		if !j.active() {
			j.cache.forgotten = true
			continue
		}
		j.cache.known = true
		if jc, ok := resp[j.id]; ok {
			j.cache.fraction, j.cache.hosts = jc.CachedFraction, jc.CachedHosts
			if j.cache.hosts == nil {
				j.cache.hosts = map[uint64][]string{}
			}
		}
	}
}

// cacheRequest lists, for the namenode, every active job with input
// blocks and every job it knows that is no longer active. Caller holds
// rm.mu.
func (rm *ResourceManager) cacheRequest() ([]client.JobInput, []*job) {
	var req []client.JobInput
	var sent []*job
	for _, j := range rm.order {
		switch {
		case len(j.cache.blocks) == 0 || j.cache.forgotten:
		case j.active():
			req = append(req, client.JobInput{JobID: j.id, App: j.app, BlockIDs: j.cache.blocks})
			sent = append(sent, j)
		case j.cache.known:
			req = append(req, client.JobInput{JobID: j.id, App: j.app, Finished: true})
			sent = append(sent, j)
		}
	}
	return req, sent
}

// cacheSource is where job cache status comes from: the configured
// source, else the namenode client, else nowhere.
func (rm *ResourceManager) cacheSource() CacheStatusSource {
	if rm.cfg.CacheStatus != nil {
		return rm.cfg.CacheStatus
	}
	if rm.dfs != nil {
		return rm.dfs
	}
	return nil
}
