package cachemgr

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/cache"
	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
)

// cacheGraceBeats is how many heartbeats a datanode has to report a block
// it was told to cache before the plan forgets it (caching failed: bad
// checksum, no memory). Generous, because a datanode caches one block
// after another from a throttled disk.
const cacheGraceBeats = 10

// cacheJobTTL forgets a job whose input the resource manager stopped
// refreshing (it died without saying the job finished).
const cacheJobTTL = 3 * time.Minute

// Config is the manager's part of the namenode's configuration.
type Config struct {
	Policy         string             // cache_policy: a name in cache.Policies
	Window, TTL    time.Duration      // cache_window, cache_ttl (0: the policy's defaults)
	Affinity       map[string]float64 // cache_affinity: configured CA per app
	AffinitySource string             // cache_affinity_source: AffinityLearned (default) or AffinityTable
	MaxReplication int                // bounds a directive's replication
}

// Manager is the namenode's cache manager. Create it with New.
type Manager struct {
	nn      Namenode
	mu      *sync.RWMutex // the namenode's lock: guards the fields below and what nn reads
	clock   func() time.Time
	logger  *slog.Logger
	metrics metrics
	cfg     Config

	plan *cache.Plan

	reported  map[string]map[uint64]bool // datanode id -> blocks it reports cached
	toCache   map[string][]uint64        // queued cache commands, not sent yet
	toUncache map[string][]uint64        // queued uncache commands, not sent yet
	sent      map[string]map[uint64]int  // cache commands sent, not yet reported: beat number
	unsent    map[string]map[uint64]int  // uncache commands sent, still reported: beat number
	beats     map[string]int             // heartbeats since (re)registration

	jobs         map[string]*cacheJob
	apps         map[string]*appCacheStats
	learned      *affinityEstimator
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

// MaxApps bounds the per-app statistics: the app is a name a caller
// chooses, so each new one would otherwise grow the namenode for good
// (90 MB from a loop of CacheAccess calls). A cluster runs a handful of
// applications; past the bound the least recently used app's counters
// go (the cache's decisions do not depend on them).
const MaxApps = 256

// makeRoomForApp drops the least recently used apps' statistics so that
// one more fits under MaxApps. Configured apps stay listed (from the
// configuration) whatever happens to their counters.
func (m *Manager) makeRoomForApp(now time.Time) {
	for len(m.apps) >= MaxApps {
		oldest, at := "", now
		for name, a := range m.apps {
			if oldest == "" || a.last.Before(at) {
				oldest, at = name, a.last
			}
		}
		delete(m.apps, oldest)
	}
}

// New makes a manager with the policy cfg names. mu is the namenode's
// lock, held while the manager reads nn; the manager's state is guarded by
// it too, so that a heartbeat's reply reads one consistent state.
func New(cfg Config, nn Namenode, mu *sync.RWMutex, clock func() time.Time, logger *slog.Logger) (*Manager, error) {
	plan, err := cache.New(cfg.Policy, cache.Options{Window: cfg.Window, TTL: cfg.TTL})
	if err != nil {
		return nil, err
	}
	switch cfg.AffinitySource {
	case "":
		cfg.AffinitySource = AffinityLearned
	case AffinityLearned, AffinityTable:
	default:
		return nil, fmt.Errorf("cache_affinity_source: %q is neither %s nor %s", cfg.AffinitySource, AffinityLearned, AffinityTable)
	}
	window := cfg.Window
	if window <= 0 {
		window = cache.DefaultWindow
	}
	return &Manager{
		nn: nn, mu: mu, clock: clock, logger: logger, metrics: newMetrics(), cfg: cfg,
		plan:     plan,
		reported: map[string]map[uint64]bool{}, toCache: map[string][]uint64{}, toUncache: map[string][]uint64{},
		sent: map[string]map[uint64]int{}, unsent: map[string]map[uint64]int{}, beats: map[string]int{},
		jobs: map[string]*cacheJob{}, apps: map[string]*appCacheStats{}, learned: newAffinityEstimator(window),
	}, nil
}

// affinityOf is the CA of user's access for app: with the learned source,
// the estimate once it is backed by AffinityMinSamples hot and cold reads;
// else (and always with the table source, the paper's) the request's if
// it carries one (>= 0), else the configured one for the app, else 0.
func (m *Manager) affinityOf(user, app string, requested float64, now time.Time) float64 {
	if m.cfg.AffinitySource == AffinityLearned {
		if est, ok := m.learned.estimate(user, app, now); ok && est.Used {
			return est.Affinity
		}
	}
	if requested >= 0 {
		return min(requested, 1)
	}
	return m.cfg.Affinity[app]
}

// queueLocked turns plan changes into queued commands. A cache and an
// uncache of the same block on the same node that were not sent yet
// cancel out.
func (m *Manager) queueLocked(changes []cache.Change) {
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

// UncacheOnLocked stops caching a block on one node because its replica
// there is gone, bad or stale: the plan forgets it, and the datanode is
// told to drop it if it may hold it.
func (m *Manager) UncacheOnLocked(node string, id uint64) {
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

// ForgetLocked drops a block that left the namespace everywhere.
func (m *Manager) ForgetLocked(id uint64) {
	m.queueLocked(m.plan.State().Forget(id))
	for node, blocks := range m.reported {
		if blocks[id] {
			m.UncacheOnLocked(node, id)
		}
	}
	for node := range m.toCache {
		m.toCache[node], _ = remove(m.toCache[node], id)
	}
}

// NodeGoneLocked forgets everything about a datanode's cache: it died
// or restarted, so its memory is empty.
func (m *Manager) NodeGoneLocked(node string) {
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

// NodeRegisteredLocked starts a (re)registering datanode process with an
// empty cache of the capacity it registers with.
func (m *Manager) NodeRegisteredLocked(node string, capacity int64) {
	m.NodeGoneLocked(node)
	if capacity > 0 {
		m.plan.State().SetNode(node, capacity)
	}
}

// hasGoodReplicaLocked says whether node holds a good, current replica of
// a complete block: the only kind worth caching.
func (m *Manager) hasGoodReplicaLocked(node string, b *blockmap.Block) bool {
	return b != nil && b.State == blockmap.Complete && slices.Contains(b.Good(m.nn.IsLive), node)
}

// HeartbeatLocked reconciles a datanode's cache report with the plan
// and adds the queued cache commands to its heartbeat reply.
func (m *Manager) HeartbeatLocked(id string, req *dfspb.HeartbeatRequest, resp *dfspb.HeartbeatResponse) {
	m.beats[id]++
	beat := m.beats[id]
	st := m.plan.State()
	m.queueLocked(st.SetNode(id, req.GetCacheCapacity()))
	reported := make(map[uint64]bool, len(req.GetCachedBlockIds()))
	for _, b := range req.GetCachedBlockIds() {
		reported[b] = true
	}
	m.reported[id] = reported
	for _, b := range st.Resident(id) {
		m.reconcilePlannedLocked(id, b, beat)
	}
	for b := range reported {
		m.reconcileReportedLocked(id, b, beat)
	}
	m.sendCacheCommandsLocked(id, beat, resp)
}

// reconcilePlannedLocked checks one block the plan holds on a node.
func (m *Manager) reconcilePlannedLocked(node string, id uint64, beat int) {
	switch sentAt, waiting := m.sent[node][id]; {
	case !m.hasGoodReplicaLocked(node, m.nn.Block(id)):
		m.UncacheOnLocked(node, id)
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
		m.logger.Info("datanode does not report a block the cache plan holds; forgotten", "datanode", node, "block", id)
	}
}

// reconcileReportedLocked checks one block a node reports cached.
func (m *Manager) reconcileReportedLocked(node string, id uint64, beat int) {
	if m.plan.State().IsResident(node, id) || slices.Contains(m.toUncache[node], id) {
		return
	}
	if at, ok := m.unsent[node][id]; ok && beat-at <= cacheGraceBeats {
		return // uncaching
	}
	b := m.nn.Block(id)
	if m.hasGoodReplicaLocked(node, b) && m.plan.Adopt(node, id, b.NumBytes) {
		return // cached before a namenode restart, say: the plan keeps it
	}
	m.toUncache[node] = append(m.toUncache[node], id)
}

// sendCacheCommandsLocked moves a node's queued commands into the reply.
// Cache commands for blocks that were deleted meanwhile are dropped.
func (m *Manager) sendCacheCommandsLocked(node string, beat int, resp *dfspb.HeartbeatResponse) {
	var cacheIDs []uint64
	for _, id := range m.toCache[node] {
		if m.hasGoodReplicaLocked(node, m.nn.Block(id)) && m.plan.State().IsResident(node, id) {
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
		m.metrics.commands.WithLabelValues("uncache").Add(float64(len(uncacheIDs)))
	}
	if len(cacheIDs) > 0 {
		resp.Commands = append(resp.Commands, &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Cache{
			Cache: &dfspb.CacheCommand{BlockIds: cacheIDs}}})
		m.metrics.commands.WithLabelValues("cache").Add(float64(len(cacheIDs)))
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

// CachedOnLocked lists the live datanodes that report a block cached.
func (m *Manager) CachedOnLocked(id uint64) []string {
	var out []string
	for node, blocks := range m.reported {
		if blocks[id] && m.nn.IsLive(node) {
			out = append(out, node)
		}
	}
	slices.Sort(out)
	return out
}

// Tick runs the policy's periodic work (TTL expiry; for pinned, the
// directives re-resolved against the current files and replicas) and
// forgets stale jobs.
func (m *Manager) Tick(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.plan.Name() == "pinned" {
		m.plan.State().SetPins(m.resolveDirectivesLocked())
	}
	m.queueLocked(m.plan.Tick(now))
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
func (m *Manager) resolveDirectivesLocked() []cache.Pin {
	st := m.plan.State()
	want := map[uint64]int{}
	var order []*blockmap.Block
	for _, d := range m.nn.Dirs().Directives {
		for _, b := range m.directiveBlocksLocked(d.Path) {
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
		nodes := b.Good(m.nn.IsLive)
		slices.SortStableFunc(nodes, func(x, y string) int {
			return int((st.Capacity(y) - st.Used(y)) - (st.Capacity(x) - st.Used(x)))
		})
		pins = append(pins, cache.Pin{Block: b.ID, Size: b.NumBytes, Replication: want[b.ID], Nodes: nodes})
	}
	return pins
}

// directiveBlocksLocked lists the blocks a directive path names.
func (m *Manager) directiveBlocksLocked(path string) []*blockmap.Block {
	n := m.nn.Lookup(path)
	if n == nil {
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

// metrics are the manager's counters; Register adds them, with gauges
// read from the manager's state, to the namenode's registry.
type metrics struct {
	hits, misses prometheus.Counter
	commands     *prometheus.CounterVec
}

const metricsNamespace = "smarth_namenode"

func newMetrics() metrics {
	return metrics{
		hits:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: metricsNamespace, Name: "cache_hits_total", Help: "Cache accesses that found the block cached on a datanode."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Namespace: metricsNamespace, Name: "cache_misses_total", Help: "Cache accesses that found the block in no datanode's memory."}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNamespace, Name: "cache_commands_total",
			Help: "Blocks in cache and uncache commands sent to datanodes, by kind."}, []string{"kind"}),
	}
}

// Register adds the manager's series to reg.
func (m *Manager) Register(reg prometheus.Registerer) {
	locked := func(f func() float64) func() float64 {
		return func() float64 {
			m.mu.RLock()
			defer m.mu.RUnlock()
			return f()
		}
	}
	reg.MustRegister(m.metrics.hits, m.metrics.misses, m.metrics.commands,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metricsNamespace, Name: "cache_used_bytes",
			Help: "Bytes cached in datanode memory, as the live datanodes report it."}, locked(func() float64 {
			var n int64
			for _, info := range m.nn.LiveDatanodes() {
				n += info.CacheUsed
			}
			return float64(n)
		})),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metricsNamespace, Name: "cache_blocks",
			Help: "Block replicas cached in datanode memory, as the live datanodes report them."}, locked(func() float64 {
			n := 0
			for node, blocks := range m.reported {
				if m.nn.IsLive(node) {
					n += len(blocks)
				}
			}
			return float64(n)
		})),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: metricsNamespace, Name: "cache_evictions_total",
			Help: "Blocks the cache policy evicted to make room or because they expired."}, locked(func() float64 {
			return float64(m.plan.State().Evictions())
		})),
	)
}

// State is the plan's state (which blocks the policy holds on which
// datanode, and the capacities it plans with): read it under the
// namenode's lock.
func (m *Manager) State() *cache.State { return m.plan.State() }
