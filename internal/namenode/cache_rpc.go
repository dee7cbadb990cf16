package namenode

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	"smarth/internal/cache"
	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// cacheAccess records one map task's read of its input block and asks the
// policy to cache it: on the reader's datanode when the read was local
// (that node holds a good replica), else on the datanode that served it,
// else on the replica nearest the reader. An unknown block is NotFound
// and nothing is recorded.
//
// Only a caller who may read the block's file (the map task acts as its
// job's submitter), or a service identity, may ask: caching is a read
// that changes what datanodes hold in memory for everyone.
func (nn *NameNode) cacheAccess(req *dfspb.CacheAccessRequest, c namespace.Caller) (*dfspb.CacheAccessResponse, error) {
	now := nn.clock()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	b := nn.state.Blocks().Get(req.GetBlockId())
	if b == nil {
		return nil, errNotFound("cache access: block %d does not exist (its file was deleted?)", req.GetBlockId())
	}
	if !nn.ident.isService(c, nn.state.Tree()) {
		f := nn.state.Tree().ByID(b.FileID)
		if f == nil || nn.state.Tree().CheckAccess(c, f.Path(), namespace.Read) != nil {
			// Not the path: the caller may not know it.
			return nil, errDenied("cache access: block %d: permission denied: user %s may not read its file", b.ID, c.User)
		}
	}
	m := nn.cache
	target := nn.cacheTargetLocked(b, req.GetReaderHost(), req.GetDatanodeId())
	hit := len(nn.cachedOnLocked(b.ID)) > 0
	aff := m.affinityOf(req.GetApp(), req.GetAffinity())
	nn.countAccessLocked(req.GetApp(), aff, hit, now)
	size := b.NumBytes
	if b.State != blockmap.Complete {
		target = "" // still being written: nothing to cache yet
	}
	changes := m.plan.Access(cache.Request{Block: b.ID, Size: size, Node: target, App: req.GetApp(), Affinity: aff}, now)
	nn.queueCacheChangesLocked(changes)
	resp := &dfspb.CacheAccessResponse{}
	if on := m.plan.State().On(b.ID); len(on) > 0 {
		resp.Cached, resp.CachedOn = true, on[0]
		if slices.Contains(on, target) {
			resp.CachedOn = target
		}
	}
	return resp, nil
}

// cacheTargetLocked chooses the datanode an access asks to cache on.
func (nn *NameNode) cacheTargetLocked(b *blockmap.Block, readerHost, servedBy string) string {
	good := b.Good(nn.isLive)
	if len(good) == 0 {
		return ""
	}
	reader := topology.Location{Host: readerHost, IP: readerHost}
	if readerHost != "" {
		for _, id := range good {
			if topology.SameHost(reader, nn.nodes[id].location()) {
				return id // local read
			}
		}
	}
	if slices.Contains(good, servedBy) {
		return servedBy // remote read: the node that read it from disk
	}
	nn.sortByDistanceLocked(good, nn.clientLocationLocked(readerHost), nil)
	return good[0]
}

func (nn *NameNode) countAccessLocked(app string, aff float64, hit bool, now time.Time) {
	m := nn.cache
	a := m.apps[app]
	if a == nil {
		m.makeRoomForApp(now)
		a = &appCacheStats{}
		m.apps[app] = a
	}
	a.affinity, a.last = aff, now
	a.accesses++
	if hit {
		a.hits++
		m.hits++
		nn.metrics.cacheHits.Inc()
	} else {
		m.misses++
		nn.metrics.cacheMisses.Inc()
	}
}

// jobCacheStatus keeps the running jobs' inputs and answers R_j and the
// hosts caching each block for the jobs asked about. It is the resource
// manager's call, for service users only (methodRules: ruleService): the
// request names no job's owner, so another user could otherwise register
// inputs of any size or end any user's job (Finished).
func (nn *NameNode) jobCacheStatus(req *dfspb.JobCacheStatusRequest) *dfspb.JobCacheStatusResponse {
	now := nn.clock()
	nn.mu.Lock()
	defer nn.mu.Unlock()
	m := nn.cache
	resp := &dfspb.JobCacheStatusResponse{}
	for _, j := range req.GetJobs() {
		if j.GetFinished() {
			delete(m.jobs, j.GetJobId())
			continue
		}
		job := &cacheJob{app: j.GetApp(), blocks: slices.Clone(j.GetBlockIds()), seen: now}
		m.jobs[j.GetJobId()] = job
		resp.Jobs = append(resp.Jobs, nn.jobStatusLocked(j.GetJobId(), job))
	}
	return resp
}

// jobStatusLocked is R_j (the fraction of the job's input blocks some live
// datanode reports cached) and the canonical hostnames caching each block.
func (nn *NameNode) jobStatusLocked(id string, j *cacheJob) *dfspb.JobCacheStatusResponse_Job {
	out := &dfspb.JobCacheStatusResponse_Job{JobId: id}
	for _, b := range j.blocks {
		on := nn.cachedOnLocked(b)
		if len(on) == 0 {
			continue
		}
		hosts := make([]string, 0, len(on))
		for _, node := range on {
			hosts = append(hosts, nn.nodes[node].info.Hostname)
		}
		out.Blocks = append(out.Blocks, &dfspb.JobCacheStatusResponse_Block{BlockId: b, Hosts: hosts})
	}
	if len(j.blocks) > 0 {
		out.CachedFraction = float64(len(out.Blocks)) / float64(len(j.blocks))
	}
	return out
}

// cacheStats is what `smarth cache stats` and the web page show.
func (nn *NameNode) cacheStats() *dfspb.GetCacheStatsResponse {
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	m := nn.cache
	st := m.plan.State()
	resp := &dfspb.GetCacheStatsResponse{Policy: m.plan.Name(), Hits: m.hits, Misses: m.misses, Evictions: st.Evictions()}
	var infos []*dfspb.DatanodeInfo
	for _, dn := range nn.nodes {
		if dn.live {
			infos = append(infos, dn.info)
		}
	}
	sortInfos(infos)
	for _, info := range infos {
		id := info.Id
		resp.Nodes = append(resp.Nodes, &dfspb.NodeCacheStats{
			DatanodeId: id, Hostname: info.Hostname, Capacity: info.CacheCapacity, Used: info.CacheUsed,
			Blocks: int64(len(m.reported[id])), PendingCache: int64(len(m.sent[id]) + len(m.toCache[id])),
			PendingUncache: int64(len(m.unsent[id]) + len(m.toUncache[id])),
		})
	}
	resp.Apps = nn.appStatsLocked()
	for _, id := range slices.Sorted(maps.Keys(m.jobs)) {
		resp.Jobs = append(resp.Jobs, nn.jobStatusLocked(id, m.jobs[id]))
	}
	return resp
}

// appStatsLocked counts, per app, the cached blocks whose latest access in
// the window came from it, and its accesses and hits; configured apps are
// listed even before their first access.
func (nn *NameNode) appStatsLocked() []*dfspb.AppCacheStats {
	m := nn.cache
	st := m.plan.State()
	apps := map[string]*dfspb.AppCacheStats{}
	get := func(app string) *dfspb.AppCacheStats {
		if apps[app] == nil {
			apps[app] = &dfspb.AppCacheStats{App: app, Affinity: m.affinity[app]}
		}
		return apps[app]
	}
	for app := range m.affinity {
		get(app)
	}
	for app, a := range m.apps {
		s := get(app)
		s.Affinity, s.Accesses, s.Hits = a.affinity, a.accesses, a.hits
	}
	counted := map[uint64]bool{}
	for node, blocks := range m.reported {
		if !nn.isLive(node) {
			continue
		}
		for id := range blocks {
			if counted[id] {
				continue
			}
			counted[id] = true
			if len(st.Events(id)) == 0 {
				continue // no access in the window (pinned, adopted)
			}
			s := get(st.LastAccess(id).App)
			s.CachedBlocks++
			if b := nn.state.Blocks().Get(id); b != nil {
				s.CachedBytes += b.NumBytes
			}
		}
	}
	out := make([]*dfspb.AppCacheStats, 0, len(apps))
	for _, a := range apps {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].App < out[j].App })
	return out
}

// ---------------------------------------------------------------- RPC

func (s *clientRPC) CacheAccess(ctx context.Context, r *dfspb.CacheAccessRequest) (*dfspb.CacheAccessResponse, error) {
	return s.nn.cacheAccess(r, callerOf(ctx))
}

func (s *clientRPC) JobCacheStatus(ctx context.Context, r *dfspb.JobCacheStatusRequest) (*dfspb.JobCacheStatusResponse, error) {
	return s.nn.jobCacheStatus(r), nil
}

func (s *clientRPC) GetCacheStats(ctx context.Context, r *dfspb.GetCacheStatsRequest) (*dfspb.GetCacheStatsResponse, error) {
	st := s.nn.cacheStats()
	// The running jobs (their ids and cached input) are the services'
	// to see, as the resource manager shows a user only their own jobs;
	// the namenode cannot tell whose a job is.
	s.nn.mu.RLock()
	service := s.nn.ident.isService(callerOf(ctx), s.nn.state.Tree())
	s.nn.mu.RUnlock()
	if !service {
		st.Jobs = nil
	}
	return st, nil
}
