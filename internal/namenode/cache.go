package namenode

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/cache"
	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
)

// The cache manager (seed 003): it keeps the replacement policy's plan
// (internal/cache), turns its changes into CacheCommand/UncacheCommand in
// heartbeat replies, and reconciles the plan with what datanodes report.
// Only a datanode's report counts as cached: cached_on, R_j and the stats
// show reported blocks, never merely commanded ones.

// cacheGraceBeats is how many heartbeats a datanode has to report a block
// it was told to cache before the plan forgets it (caching failed: bad
// checksum, no memory). Generous, because a datanode caches one block
// after another from a throttled disk.
const cacheGraceBeats = 10

// cacheJobTTL forgets a job whose input the resource manager stopped
// refreshing (it died without saying the job finished).
const cacheJobTTL = 3 * time.Minute

// cacheManager is guarded by NameNode.mu.
type cacheManager struct {
	plan     *cache.Plan
	affinity map[string]float64 // configured CA per app

	reported  map[string]map[uint64]bool // datanode id -> blocks it reports cached
	toCache   map[string][]uint64        // queued cache commands, not sent yet
	toUncache map[string][]uint64        // queued uncache commands, not sent yet
	sent      map[string]map[uint64]int  // cache commands sent, not yet reported: beat number
	unsent    map[string]map[uint64]int  // uncache commands sent, still reported: beat number
	beats     map[string]int             // heartbeats since (re)registration

	jobs         map[string]*cacheJob
	apps         map[string]*appCacheStats
	hits, misses int64
}

type cacheJob struct {
	app    string
	blocks []uint64
	seen   time.Time
}

type appCacheStats struct {
	affinity       float64 // last used
	accesses, hits int64
	last           time.Time // latest access
}

// maxCacheApps bounds the per-app statistics: the app is a name a caller
// chooses, so each new one would otherwise grow the namenode for good
// (90 MB from a loop of CacheAccess calls). A cluster runs a handful of
// applications; past the bound the least recently used app's counters
// go (the cache's decisions do not depend on them).
const maxCacheApps = 256

// makeRoomForApp drops the least recently used apps' statistics so that
// one more fits under maxCacheApps. Configured apps stay listed (from the
// configuration) whatever happens to their counters.
func (m *cacheManager) makeRoomForApp(now time.Time) {
	for len(m.apps) >= maxCacheApps {
		oldest, at := "", now
		for name, a := range m.apps {
			if oldest == "" || a.last.Before(at) {
				oldest, at = name, a.last
			}
		}
		delete(m.apps, oldest)
	}
}

func newCacheManager(cfg Config) (*cacheManager, error) {
	plan, err := cache.New(cfg.CachePolicy, cache.Options{Window: cfg.CacheWindow, TTL: cfg.CacheTTL})
	if err != nil {
		return nil, err
	}
	return &cacheManager{
		plan: plan, affinity: cfg.CacheAffinity,
		reported: map[string]map[uint64]bool{}, toCache: map[string][]uint64{}, toUncache: map[string][]uint64{},
		sent: map[string]map[uint64]int{}, unsent: map[string]map[uint64]int{}, beats: map[string]int{},
		jobs: map[string]*cacheJob{}, apps: map[string]*appCacheStats{},
	}, nil
}

// affinityOf is the CA of an access: the request's if it carries one
// (>= 0), else the configured one for the app, else 0.
func (m *cacheManager) affinityOf(app string, requested float64) float64 {
	if requested >= 0 {
		return min(requested, 1)
	}
	return m.affinity[app]
}

// queueLocked turns plan changes into queued commands. A cache and an
// uncache of the same block on the same node that were not sent yet
// cancel out.
func (nn *NameNode) queueCacheChangesLocked(changes []cache.Change) {
	m := nn.cache
	for _, c := range changes {
		if c.Cache {
			if q, ok := remove(m.toUncache[c.Node], c.Block); ok {
				m.toUncache[c.Node] = q
				continue
			}
			m.toCache[c.Node] = append(m.toCache[c.Node], c.Block)
			continue
		}
		delete(m.sent[c.Node], c.Block)
		if q, ok := remove(m.toCache[c.Node], c.Block); ok {
			m.toCache[c.Node] = q
			continue
		}
		m.toUncache[c.Node] = append(m.toUncache[c.Node], c.Block)
	}
}

func remove(q []uint64, id uint64) ([]uint64, bool) {
	i := slices.Index(q, id)
	if i < 0 {
		return q, false
	}
	return slices.Delete(q, i, i+1), true
}

// uncacheOnLocked stops caching a block on one node because its replica
// there is gone, bad or stale: the plan forgets it, and the datanode is
// told to drop it if it may hold it.
func (nn *NameNode) uncacheOnLocked(node string, id uint64) {
	m := nn.cache
	planned := m.plan.State().Drop(node, id)
	q, queued := remove(m.toCache[node], id)
	m.toCache[node] = q
	delete(m.sent[node], id)
	if planned && !queued || m.reported[node][id] {
		if !slices.Contains(m.toUncache[node], id) {
			m.toUncache[node] = append(m.toUncache[node], id)
		}
	}
}

// cacheForgetLocked drops a block that left the namespace everywhere.
func (nn *NameNode) cacheForgetLocked(id uint64) {
	m := nn.cache
	nn.queueCacheChangesLocked(m.plan.State().Forget(id))
	for node, blocks := range m.reported {
		if blocks[id] {
			nn.uncacheOnLocked(node, id)
		}
	}
	for node := range m.toCache {
		m.toCache[node], _ = remove(m.toCache[node], id)
	}
}

// cacheNodeGoneLocked forgets everything about a datanode's cache: it died
// or restarted, so its memory is empty.
func (nn *NameNode) cacheNodeGoneLocked(node string) {
	m := nn.cache
	m.plan.State().RemoveNode(node)
	for _, q := range []map[string][]uint64{m.toCache, m.toUncache} {
		delete(q, node)
	}
	for _, s := range []map[string]map[uint64]int{m.sent, m.unsent} {
		delete(s, node)
	}
	delete(m.reported, node)
	delete(m.beats, node)
}

// hasGoodReplicaLocked says whether node holds a good, current replica of
// a complete block: the only kind worth caching.
func (nn *NameNode) hasGoodReplicaLocked(node string, b *blockmap.Block) bool {
	return b != nil && b.State == blockmap.Complete && slices.Contains(b.Good(nn.isLive), node)
}

// cacheHeartbeatLocked reconciles a datanode's cache report with the plan
// and adds the queued cache commands to its heartbeat reply.
func (nn *NameNode) cacheHeartbeatLocked(dn *datanode, req *dfspb.HeartbeatRequest, resp *dfspb.HeartbeatResponse) {
	m, id := nn.cache, dn.info.Id
	m.beats[id]++
	beat := m.beats[id]
	st := m.plan.State()
	nn.queueCacheChangesLocked(st.SetNode(id, req.GetCacheCapacity()))
	reported := make(map[uint64]bool, len(req.GetCachedBlockIds()))
	for _, b := range req.GetCachedBlockIds() {
		reported[b] = true
	}
	m.reported[id] = reported
	for _, b := range st.Resident(id) {
		nn.reconcilePlannedLocked(id, b, beat)
	}
	for b := range reported {
		nn.reconcileReportedLocked(id, b, beat)
	}
	nn.sendCacheCommandsLocked(id, beat, resp)
}

// reconcilePlannedLocked checks one block the plan holds on a node.
func (nn *NameNode) reconcilePlannedLocked(node string, id uint64, beat int) {
	m := nn.cache
	switch sentAt, waiting := m.sent[node][id]; {
	case !nn.hasGoodReplicaLocked(node, nn.state.Blocks().Get(id)):
		nn.uncacheOnLocked(node, id)
	case m.reported[node][id]:
		delete(m.sent[node], id)
	case slices.Contains(m.toCache[node], id):
		// goes out with this reply
	case waiting && beat-sentAt <= cacheGraceBeats:
		// still caching
	default:
		// Caching failed, or the datanode dropped the block (bad
		// checksum, replica changed): forget it so the policy can reuse
		// the room.
		m.plan.State().Drop(node, id)
		delete(m.sent[node], id)
		nn.logger.Info("datanode does not report a block the cache plan holds; forgotten", "datanode", node, "block", id)
	}
}

// reconcileReportedLocked checks one block a node reports cached.
func (nn *NameNode) reconcileReportedLocked(node string, id uint64, beat int) {
	m := nn.cache
	if m.plan.State().IsResident(node, id) || slices.Contains(m.toUncache[node], id) {
		return
	}
	if at, ok := m.unsent[node][id]; ok && beat-at <= cacheGraceBeats {
		return // uncaching
	}
	b := nn.state.Blocks().Get(id)
	if nn.hasGoodReplicaLocked(node, b) && m.plan.Adopt(node, id, b.NumBytes) {
		return // cached before a namenode restart, say: the plan keeps it
	}
	m.toUncache[node] = append(m.toUncache[node], id)
}

// sendCacheCommandsLocked moves a node's queued commands into the reply.
// Cache commands for blocks that were deleted meanwhile are dropped.
func (nn *NameNode) sendCacheCommandsLocked(node string, beat int, resp *dfspb.HeartbeatResponse) {
	m := nn.cache
	var cacheIDs []uint64
	for _, id := range m.toCache[node] {
		if nn.hasGoodReplicaLocked(node, nn.state.Blocks().Get(id)) && m.plan.State().IsResident(node, id) {
			cacheIDs = append(cacheIDs, id)
			setBeat(m.sent, node, id, beat)
		}
	}
	uncacheIDs := m.toUncache[node]
	for _, id := range uncacheIDs {
		setBeat(m.unsent, node, id, beat)
	}
	delete(m.toCache, node)
	delete(m.toUncache, node)
	if len(uncacheIDs) > 0 {
		resp.Commands = append(resp.Commands, &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Uncache{
			Uncache: &dfspb.UncacheCommand{BlockIds: uncacheIDs}}})
		nn.metrics.cacheCommands.WithLabelValues("uncache").Add(float64(len(uncacheIDs)))
	}
	if len(cacheIDs) > 0 {
		resp.Commands = append(resp.Commands, &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Cache{
			Cache: &dfspb.CacheCommand{BlockIds: cacheIDs}}})
		nn.metrics.cacheCommands.WithLabelValues("cache").Add(float64(len(cacheIDs)))
	}
	for id, at := range m.unsent[node] {
		if !m.reported[node][id] || beat-at > cacheGraceBeats {
			delete(m.unsent[node], id)
		}
	}
}

func setBeat(s map[string]map[uint64]int, node string, id uint64, beat int) {
	if s[node] == nil {
		s[node] = map[uint64]int{}
	}
	s[node][id] = beat
}

// cachedOnLocked lists the live datanodes that report a block cached.
func (nn *NameNode) cachedOnLocked(id uint64) []string {
	var out []string
	for node, blocks := range nn.cache.reported {
		if blocks[id] && nn.isLive(node) {
			out = append(out, node)
		}
	}
	slices.Sort(out)
	return out
}

// cacheTick runs the policy's periodic work (TTL expiry; for pinned, the
// directives re-resolved against the current files and replicas) and
// forgets stale jobs.
func (nn *NameNode) cacheTick(now time.Time) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	m := nn.cache
	if m.plan.Name() == "pinned" {
		m.plan.State().SetPins(nn.resolveDirectivesLocked())
	}
	nn.queueCacheChangesLocked(m.plan.Tick(now))
	for id, j := range m.jobs {
		if now.Sub(j.seen) > cacheJobTTL {
			delete(m.jobs, id)
		}
	}
}

// resolveDirectivesLocked turns directives into pins: every complete
// block of the file, or of the files directly in the directory (as HDFS),
// on the live datanodes holding a good replica, those with the most free
// planned cache first. A path that no longer exists pins nothing.
func (nn *NameNode) resolveDirectivesLocked() []cache.Pin {
	st := nn.cache.plan.State()
	want := map[uint64]int{}
	var order []*blockmap.Block
	for _, d := range nn.state.Cache().Directives() {
		for _, b := range nn.directiveBlocksLocked(d.Path) {
			if b.State != blockmap.Complete {
				continue
			}
			if _, seen := want[b.ID]; !seen {
				order = append(order, b)
			}
			want[b.ID] = max(want[b.ID], d.Replication, 1)
		}
	}
	pins := make([]cache.Pin, 0, len(order))
	for _, b := range order {
		nodes := b.Good(nn.isLive)
		slices.SortStableFunc(nodes, func(x, y string) int {
			return int((st.Capacity(y) - st.Used(y)) - (st.Capacity(x) - st.Used(x)))
		})
		pins = append(pins, cache.Pin{Block: b.ID, Size: b.NumBytes, Replication: want[b.ID], Nodes: nodes})
	}
	return pins
}

// directiveBlocksLocked lists the blocks a directive path names.
func (nn *NameNode) directiveBlocksLocked(path string) []*blockmap.Block {
	n, err := nn.state.Tree().Lookup(path)
	if err != nil {
		return nil
	}
	if !n.IsDir() {
		return n.Blocks
	}
	var out []*blockmap.Block
	for _, c := range n.Children() {
		if !c.IsDir() {
			out = append(out, c.Blocks...)
		}
	}
	return out
}

// registerCacheGauges adds the cache gauges read from the manager's state.
func (nn *NameNode) registerCacheGauges(reg *prometheus.Registry, locked func(func() float64) func() float64) {
	const ns = "smarth_namenode"
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "cache_used_bytes",
			Help: "Bytes cached in datanode memory, as the live datanodes report it."}, locked(func() float64 {
			var n int64
			for _, dn := range nn.nodes {
				if dn.live {
					n += dn.info.CacheUsed
				}
			}
			return float64(n)
		})),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "cache_blocks",
			Help: "Block replicas cached in datanode memory, as the live datanodes report them."}, locked(func() float64 {
			n := 0
			for node, blocks := range nn.cache.reported {
				if nn.isLive(node) {
					n += len(blocks)
				}
			}
			return float64(n)
		})),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: ns, Name: "cache_evictions_total",
			Help: "Blocks the cache policy evicted to make room or because they expired."}, locked(func() float64 {
			return float64(nn.cache.plan.State().Evictions())
		})),
	)
}
