package cachemgr

import (
	"maps"
	"slices"
	"sort"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/cache"
	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// Access records one map task's read of its input block and asks the
// policy to cache it: on the reader's datanode when the read was local
// (that node holds a good replica), else on the datanode that served it,
// else on the replica nearest the reader. An unknown block is NotFound
// and nothing is recorded.
//
// authorize is the namenode's answer to whether the caller may ask to
// cache the block (authz.go), run under the lock once the block is known.
// user is the authenticated caller: a read time the request carries is a
// sample of that user's app only (affinity.go).
func (m *Manager) Access(req *dfspb.CacheAccessRequest, user string, authorize func(*blockmap.Block) error) (*dfspb.CacheAccessResponse, error) {
	if req.GetReadBytes() < 0 || req.GetReadNanos() < 0 || req.GetTaskNanos() < 0 {
		return nil, errorf(codes.InvalidArgument, "cache access: block %d: read_bytes %d, read_nanos %d, task_nanos %d: a time or size cannot be negative",
			req.GetBlockId(), req.GetReadBytes(), req.GetReadNanos(), req.GetTaskNanos())
	}
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.nn.Block(req.GetBlockId())
	if b == nil {
		return nil, errorf(codes.NotFound, "cache access: block %d does not exist (its file was deleted?)", req.GetBlockId())
	}
	if err := authorize(b); err != nil {
		return nil, err
	}
	target := m.cacheTargetLocked(b, req.GetReaderHost(), req.GetDatanodeId())
	hit := len(m.CachedOnLocked(b.ID)) > 0
	m.sampleReadLocked(user, req, b, now)
	aff := m.affinityOf(user, req.GetApp(), req.GetAffinity(), now)
	m.countAccessLocked(req.GetApp(), aff, hit, now)
	size := b.NumBytes
	if b.State != blockmap.Complete {
		target = "" // still being written: nothing to cache yet
	}
	changes := m.plan.Access(cache.Request{Block: b.ID, Size: size, Node: target, App: req.GetApp(), Affinity: aff}, now)
	m.queueLocked(changes)
	resp := &dfspb.CacheAccessResponse{}
	if on := m.plan.State().On(b.ID); len(on) > 0 {
		resp.Cached, resp.CachedOn = true, on[0]
		if slices.Contains(on, target) {
			resp.CachedOn = target
		}
	}
	return resp, nil
}

// sampleReadLocked adds the access's read time to the app's learned
// affinity. Hot or cold is the namenode's call: hot when the datanode
// that served the read reports the block in memory. A read whose server
// is unknown, or longer than the block (the task read other blocks too),
// measures nothing this block can speak for and is left out.
func (m *Manager) sampleReadLocked(user string, req *dfspb.CacheAccessRequest, b *blockmap.Block, now time.Time) {
	served := req.GetDatanodeId()
	if served == "" || req.GetReadBytes() == 0 || req.GetReadBytes() > b.NumBytes+maxSplitOverread {
		return
	}
	hot := m.reported[served][b.ID] && m.nn.IsLive(served)
	m.learned.add(user, req.GetApp(), hot, req.GetReadBytes(), time.Duration(req.GetReadNanos()),
		time.Duration(req.GetTaskNanos()), now)
}

// maxSplitOverread is how far past its block a map's read may go: a line
// record reader finishes the last line from the next block.
const maxSplitOverread = 1 << 20

// cacheTargetLocked chooses the datanode an access asks to cache on.
func (m *Manager) cacheTargetLocked(b *blockmap.Block, readerHost, servedBy string) string {
	good := b.Good(m.nn.IsLive)
	if len(good) == 0 {
		return ""
	}
	reader := topology.Location{Host: readerHost, IP: readerHost}
	if readerHost != "" {
		for _, id := range good {
			if topology.SameHost(reader, m.nn.Location(id)) {
				return id // local read
			}
		}
	}
	if slices.Contains(good, servedBy) {
		return servedBy // remote read: the node that read it from disk
	}
	m.nn.SortByDistance(good, readerHost)
	return good[0]
}

func (m *Manager) countAccessLocked(app string, aff float64, hit bool, now time.Time) {
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
		m.metrics.hits.Inc()
	} else {
		m.misses++
		m.metrics.misses.Inc()
	}
}

// JobStatus keeps the running jobs' inputs and answers R_j and the
// hosts caching each block for the jobs asked about. It is the resource
// manager's call, for service users only (methodRules: ruleService): the
// request names no job's owner, so another user could otherwise register
// inputs of any size or end any user's job (Finished).
func (m *Manager) JobStatus(req *dfspb.JobCacheStatusRequest) *dfspb.JobCacheStatusResponse {
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	resp := &dfspb.JobCacheStatusResponse{}
	for _, j := range req.GetJobs() {
		if j.GetFinished() {
			delete(m.jobs, j.GetJobId())
			continue
		}
		job := &cacheJob{app: j.GetApp(), blocks: slices.Clone(j.GetBlockIds()), seen: now}
		m.jobs[j.GetJobId()] = job
		resp.Jobs = append(resp.Jobs, m.jobStatusLocked(j.GetJobId(), job))
	}
	return resp
}

// jobStatusLocked is R_j (the fraction of the job's input blocks some live
// datanode reports cached) and the canonical hostnames caching each block.
func (m *Manager) jobStatusLocked(id string, j *cacheJob) *dfspb.JobCacheStatusResponse_Job {
	out := &dfspb.JobCacheStatusResponse_Job{JobId: id}
	for _, b := range j.blocks {
		on := m.CachedOnLocked(b)
		if len(on) == 0 {
			continue
		}
		hosts := make([]string, 0, len(on))
		for _, node := range on {
			hosts = append(hosts, m.nn.Location(node).Host)
		}
		out.Blocks = append(out.Blocks, &dfspb.JobCacheStatusResponse_Block{BlockId: b, Hosts: hosts})
	}
	if len(j.blocks) > 0 {
		out.CachedFraction = float64(len(out.Blocks)) / float64(len(j.blocks))
	}
	return out
}

// Stats is what `smarth cache stats` and the web page show.
func (m *Manager) Stats() *dfspb.GetCacheStatsResponse {
	m.mu.RLock()
	defer m.mu.RUnlock()
	st := m.plan.State()
	resp := &dfspb.GetCacheStatsResponse{Policy: m.plan.Name(), Hits: m.hits, Misses: m.misses, Evictions: st.Evictions()}
	for _, info := range m.nn.LiveDatanodes() {
		id := info.Id
		resp.Nodes = append(resp.Nodes, &dfspb.NodeCacheStats{
			DatanodeId: id, Hostname: info.Hostname, Capacity: info.CacheCapacity, Used: info.CacheUsed,
			Blocks: int64(len(m.reported[id])), PendingCache: int64(len(m.sent[id]) + len(m.toCache[id])),
			PendingUncache: int64(len(m.unsent[id]) + len(m.toUncache[id])),
		})
	}
	resp.Apps = m.appStatsLocked()
	resp.AffinitySource = m.cfg.AffinitySource
	for _, e := range m.learned.all(m.clock()) {
		resp.AffinityEstimates = append(resp.AffinityEstimates, &dfspb.AffinityEstimate{
			User: e.User, App: e.App, Affinity: e.Affinity, HotSamples: int32(e.Hot), ColdSamples: int32(e.Cold),
			HotMibPerSec: e.HotMiBps, ColdMibPerSec: e.ColdMiBps,
			ColdTaskMibPerSec: e.ColdTaskMiBps, ColdTaskSamples: int32(e.ColdTasks), Used: e.Used})
	}
	for _, id := range slices.Sorted(maps.Keys(m.jobs)) {
		resp.Jobs = append(resp.Jobs, m.jobStatusLocked(id, m.jobs[id]))
	}
	return resp
}

// appStatsLocked counts, per app, the cached blocks whose latest access in
// the window came from it, and its accesses and hits; configured apps are
// listed even before their first access.
func (m *Manager) appStatsLocked() []*dfspb.AppCacheStats {
	st := m.plan.State()
	apps := map[string]*dfspb.AppCacheStats{}
	get := func(app string) *dfspb.AppCacheStats {
		if apps[app] == nil {
			apps[app] = &dfspb.AppCacheStats{App: app, Affinity: m.cfg.Affinity[app]}
		}
		return apps[app]
	}
	for app := range m.cfg.Affinity {
		get(app)
	}
	for app, a := range m.apps {
		s := get(app)
		s.Affinity, s.Accesses, s.Hits = a.affinity, a.accesses, a.hits
	}
	counted := map[uint64]bool{}
	for node, blocks := range m.reported {
		if !m.nn.IsLive(node) {
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
			if b := m.nn.Block(id); b != nil {
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
