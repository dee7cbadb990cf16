package namenode

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
)

// cacheCluster starts a namenode with the given cache policy and three
// fake datanodes on one rack, each with room for capBlocks 1 MiB blocks.
func cacheCluster(t *testing.T, policy string, capBlocks int64) (*NameNode, *fakeCluster, *rpcClient) {
	t.Helper()
	cfg := testConfig(t)
	cfg.CachePolicy = policy
	cfg.CacheAffinity = map[string]float64{"grep": 0.638}
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		d := fc.add(fmt.Sprintf("dn%d", i), "/r")
		d.mu.Lock()
		d.cacheCap = capBlocks << 20
		d.mu.Unlock()
	}
	return nn, fc, dial(t, nn.Addr(), "hdfs")
}

func (d *fakeDN) isCached(id uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cached[id]
}

func (d *fakeDN) logged(prefix string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.ContainsFunc(d.commands, func(c string) bool { return strings.HasPrefix(c, prefix) })
}

func locate(t *testing.T, c *rpcClient, path string) *dfspb.LocatedBlock {
	t.Helper()
	r, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: path, ClientHost: "client-host"})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetLocations().GetBlocks()[0]
}

func access(t *testing.T, c *rpcClient, block uint64, reader string) *dfspb.CacheAccessResponse {
	t.Helper()
	r, err := c.cp.CacheAccess(c.ctx(), &dfspb.CacheAccessRequest{BlockId: block, App: "grep", JobId: "job_1", ReaderHost: reader, Affinity: -1})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An access caches the block on the reader's datanode through a heartbeat
// command; once the datanode reports it, locations list it cached and
// first; an access that needs room evicts with an uncache command.
func TestCacheAccessCommandsAndCachedLocations(t *testing.T) {
	nn, fc, c := cacheCluster(t, "lru", 1)
	b1 := writeFile(t, c, fc, "/in/a", 3, 1<<20)[0].GetBlock().GetBlockId()
	b2 := writeFile(t, c, fc, "/in/b", 3, 1<<20)[0].GetBlock().GetBlockId()
	dn2 := fc.node("id-dn2")
	waitFor(t, "dn2's cache capacity known", func() bool {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return nn.cache.State().Capacity("id-dn2") == 1<<20
	})

	if r := access(t, c, b1, "dn2"); !r.GetCached() || r.GetCachedOn() != "id-dn2" {
		t.Fatalf("access from dn2: %v; want cached on id-dn2", r)
	}
	// Commanded is not cached: only the datanode's report counts.
	waitFor(t, "dn2 caches block 1 and reports it", func() bool {
		lb := locate(t, c, "/in/a")
		return dn2.isCached(b1) && slices.Equal(lb.GetCachedOn(), []string{"id-dn2"})
	})
	for range 20 { // equally near replicas: the cached one always first
		if lb := locate(t, c, "/in/a"); ids(lb)[0] != "id-dn2" {
			t.Fatalf("locations %v: the cached replica is not first", ids(lb))
		}
	}
	// R_j: one of the job's two blocks is cached, on host dn2.
	js, err := c.cp.JobCacheStatus(c.ctx(), &dfspb.JobCacheStatusRequest{Jobs: []*dfspb.JobCacheStatusRequest_Job{{JobId: "job_1", App: "grep", BlockIds: []uint64{b1, b2}}}})
	if err != nil {
		t.Fatal(err)
	}
	j := js.GetJobs()[0]
	if j.GetCachedFraction() != 0.5 || len(j.GetBlocks()) != 1 || !slices.Equal(j.GetBlocks()[0].GetHosts(), []string{"dn2"}) {
		t.Fatalf("job cache status %v; want R_j 0.5 and block 1 on dn2", j)
	}
	// Block 2 read on dn2: LRU evicts block 1 there (one block fits).
	access(t, c, b2, "dn2")
	waitFor(t, "dn2 uncaches block 1 and caches block 2", func() bool {
		return !dn2.isCached(b1) && dn2.isCached(b2) && dn2.logged("uncache")
	})
	waitFor(t, "locations follow the report", func() bool { return len(locate(t, c, "/in/a").GetCachedOn()) == 0 })

	st, err := c.cp.GetCacheStats(c.ctx(), &dfspb.GetCacheStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetPolicy() != "lru" || st.GetEvictions() != 1 || st.GetHits()+st.GetMisses() != 2 || len(st.GetJobs()) != 1 {
		t.Errorf("cache stats %v", st)
	}
	if a := st.GetApps()[0]; a.GetApp() != "grep" || a.GetAffinity() != 0.638 || a.GetAccesses() != 2 || a.GetCachedBlocks() != 1 {
		t.Errorf("app stats %v; want grep with CA 0.638, 2 accesses, 1 cached block", a)
	}
	// A finished job is forgotten.
	c.cp.JobCacheStatus(c.ctx(), &dfspb.JobCacheStatusRequest{Jobs: []*dfspb.JobCacheStatusRequest_Job{{JobId: "job_1", Finished: true}}})
	if st, _ := c.cp.GetCacheStats(c.ctx(), &dfspb.GetCacheStatsRequest{}); len(st.GetJobs()) != 0 {
		t.Errorf("finished job still listed: %v", st.GetJobs())
	}
}

// A remote read caches on the datanode that served it; an unknown block
// is NotFound and records nothing.
func TestCacheAccessRemoteAndUnknown(t *testing.T) {
	nn, fc, c := cacheCluster(t, "bg", 4)
	b := writeFile(t, c, fc, "/x", 3, 1<<20)[0].GetBlock().GetBlockId()
	waitFor(t, "cache capacities known", func() bool {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return nn.cache.State().Capacity("id-dn3") > 0
	})
	r, err := c.cp.CacheAccess(c.ctx(), &dfspb.CacheAccessRequest{BlockId: b, App: "wc", ReaderHost: "elsewhere", DatanodeId: "id-dn3", Affinity: 0.2})
	if err != nil || r.GetCachedOn() != "id-dn3" {
		t.Fatalf("remote read served by dn3: %v %v", r, err)
	}
	_, err = c.cp.CacheAccess(c.ctx(), &dfspb.CacheAccessRequest{BlockId: 12345, App: "wc"})
	wantErr(t, err, codes.NotFound, "cache access: block 12345 does not exist")
	st, _ := c.cp.GetCacheStats(c.ctx(), &dfspb.GetCacheStatsRequest{})
	if st.GetHits()+st.GetMisses() != 1 {
		t.Errorf("accesses counted %d; want 1 (the unknown block records nothing)", st.GetHits()+st.GetMisses())
	}
}

// A datanode that restarts comes back with an empty cache: the namenode
// drops its plan and its cached locations.
func TestCacheReregisterEmptiesNode(t *testing.T) {
	nn, fc, c := cacheCluster(t, "lru", 2)
	b := writeFile(t, c, fc, "/y", 3, 1<<20)[0].GetBlock().GetBlockId()
	dn1 := fc.node("id-dn1")
	waitFor(t, "capacity known", func() bool {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return nn.cache.State().Capacity("id-dn1") > 0
	})
	access(t, c, b, "dn1")
	waitFor(t, "block cached on dn1", func() bool { return len(locate(t, c, "/y").GetCachedOn()) == 1 })
	// Restart: memory is gone, the process registers again (and no
	// heartbeat of the old process arrives after that).
	dn1.beating.Lock()
	dn1.mu.Lock()
	dn1.cached = map[uint64]bool{}
	dn1.mu.Unlock()
	dn1.register()
	dn1.beating.Unlock()
	nn.mu.RLock()
	planned := nn.cache.State().Resident("id-dn1")
	nn.mu.RUnlock()
	if len(planned) != 0 {
		t.Fatalf("after re-registration the plan still holds %v on dn1", planned)
	}
	if lb := locate(t, c, "/y"); len(lb.GetCachedOn()) != 0 {
		t.Fatalf("cached_on %v after the datanode restarted", lb.GetCachedOn())
	}
	// The next access, once the node's capacity is known again, caches
	// it again.
	waitFor(t, "capacity known again", func() bool {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return nn.cache.State().Capacity("id-dn1") > 0
	})
	access(t, c, b, "dn1")
	waitFor(t, "block cached again", func() bool { return dn1.isCached(b) })
}

// Deleting a cached file uncaches it; a cache command that raced with the
// delete is harmless.
func TestCacheDeleteUncaches(t *testing.T) {
	nn, fc, c := cacheCluster(t, "lru", 2)
	b := writeFile(t, c, fc, "/z", 3, 1<<20)[0].GetBlock().GetBlockId()
	waitFor(t, "capacity known", func() bool {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return nn.cache.State().Capacity("id-dn1") > 0
	})
	access(t, c, b, "dn1")
	waitFor(t, "cached", func() bool { return fc.node("id-dn1").isCached(b) })
	if _, err := c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/z"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "uncached and forgotten after the delete", func() bool {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return !fc.node("id-dn1").isCached(b) && len(nn.cache.State().On(b)) == 0 && len(nn.cache.CachedOnLocked(b)) == 0
	})
	// A block queued for caching and deleted before the heartbeat: the
	// command is dropped (and a datanode ignores unknown blocks anyway).
	// (cachemgr's TestQueuedCacheOfDeletedBlockNotSent makes sure the
	// command was queued and not sent yet.)
	b2 := writeFile(t, c, fc, "/z2", 3, 1<<20)[0].GetBlock().GetBlockId()
	access(t, c, b2, "dn2")
	c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/z2"})
	resp := nn.heartbeat(&dfspb.HeartbeatRequest{DatanodeId: "id-dn2", CacheCapacity: 2 << 20})
	for _, cmd := range resp.GetCommands() {
		if cmd.GetCache() != nil && slices.Contains(cmd.GetCache().GetBlockIds(), b2) {
			t.Fatalf("cache command for deleted block %d sent", b2)
		}
	}
	_, err := c.cp.CacheAccess(c.ctx(), &dfspb.CacheAccessRequest{BlockId: b2, App: "grep"})
	wantErr(t, err, codes.NotFound, fmt.Sprintf("block %d does not exist", b2))
}

// Pools and directives: errors name what is wrong, nothing is added
// half-way, removing a pool removes its directives, everything survives
// a restart, and the pinned policy caches what the directives name.
func TestCachePoolsAndDirectives(t *testing.T) {
	cfg := testConfig(t)
	cfg.CachePolicy = "pinned"
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		d := fc.add(fmt.Sprintf("dn%d", i), "/r")
		d.mu.Lock()
		d.cacheCap = 8 << 20
		d.mu.Unlock()
	}
	c := dial(t, nn.Addr(), "hdfs")
	writeFile(t, c, fc, "/data/f1", 3, 1<<20, 1<<20)
	writeFile(t, c, fc, "/data/f2", 3, 1<<20)
	ctx := c.ctx()
	if _, err := c.cp.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "hot"}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.cp.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "hot"}})
	wantErr(t, err, codes.AlreadyExists, "cache pool hot already exists")
	_, err = c.cp.AddCacheDirective(ctx, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: "/missing", Pool: "hot"}})
	wantErr(t, err, codes.NotFound, "addDirective /missing: no such file or directory")
	_, err = c.cp.AddCacheDirective(ctx, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: "/data", Pool: "cold"}})
	wantErr(t, err, codes.NotFound, "cache pool cold does not exist")
	mallory := dial(t, nn.Addr(), "mallory")
	_, err = mallory.cp.AddCachePool(mallory.ctx(), &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "x"}})
	wantErr(t, err, codes.PermissionDenied, "not a superuser")

	r, err := c.cp.AddCacheDirective(ctx, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: "/data", Pool: "hot", Replication: 2}})
	if err != nil || r.GetId() != 1 {
		t.Fatalf("add directive: %v %v; want id 1", r, err)
	}
	// Pinned: the three blocks of /data's files, two copies each.
	waitFor(t, "directive's blocks cached twice", func() bool {
		l, err := c.cp.ListCacheDirectives(c.ctx(), &dfspb.ListCacheDirectivesRequest{})
		return err == nil && len(l.GetDirectives()) == 1 && l.GetDirectives()[0].GetBytesCached() == 6<<20
	})
	l, _ := c.cp.ListCacheDirectives(ctx, &dfspb.ListCacheDirectivesRequest{Pool: "hot"})
	if d := l.GetDirectives()[0]; d.GetBytesNeeded() != 6<<20 || d.GetFiles() != 2 || d.GetReplication() != 2 {
		t.Errorf("directive stats %v", d)
	}
	c.cp.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "tmp", Limit: 1 << 30}})
	c.cp.AddCacheDirective(ctx, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: "/data/f2", Pool: "tmp"}})
	if _, err := c.cp.RemoveCachePool(ctx, &dfspb.RemoveCachePoolRequest{Name: "tmp"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.cp.RemoveCacheDirective(ctx, &dfspb.RemoveCacheDirectiveRequest{Id: 2})
	wantErr(t, err, codes.NotFound, "cache directive 2 does not exist")

	before := listCacheNamespace(t, c)
	if want := "pool hot owner=hdfs mode=0755 limit=0\ndirective 1 /data pool=hot replication=2"; before != want {
		t.Fatalf("pools and directives:\n%s\nwant:\n%s", before, want)
	}
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, cfg)
	c2 := dial(t, nn2.Addr(), "hdfs")
	if after := listCacheNamespace(t, c2); after != before {
		t.Fatalf("after a restart:\n%s\nbefore:\n%s", after, before)
	}
	// Ids are never reused after a restart.
	nn2.mu.RLock()
	last := nn2.state.Cache().LastID()
	nn2.mu.RUnlock()
	if last != 2 {
		t.Errorf("last directive id %d after restart; want 2", last)
	}
}

func listCacheNamespace(t *testing.T, c *rpcClient) string {
	t.Helper()
	pools, err := c.cp.ListCachePools(c.ctx(), &dfspb.ListCachePoolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := c.cp.ListCacheDirectives(c.ctx(), &dfspb.ListCacheDirectivesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range pools.GetPools() {
		lines = append(lines, fmt.Sprintf("pool %s owner=%s mode=%#o limit=%d", p.GetName(), p.GetOwner(), p.GetMode(), p.GetLimit()))
	}
	for _, d := range dirs.GetDirectives() {
		lines = append(lines, fmt.Sprintf("directive %d %s pool=%s replication=%d", d.GetId(), d.GetPath(), d.GetPool(), d.GetReplication()))
	}
	return strings.Join(lines, "\n")
}

func TestCacheConfigErrors(t *testing.T) {
	cfg := testConfig(t)
	cfg.CachePolicy = "mru"
	cfg.CacheAffinity = map[string]float64{"grep": 1.5}
	err := cfg.Validate()
	for _, want := range []string{`cache_policy: unknown cache policy "mru" (known: bg, ca, lru, none, pinned)`, "cache_affinity: grep: 1.5 must be between 0 and 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want %q", err, want)
		}
	}
}

// The learned affinity over RPC, as an attacker with a login of their
// own would try it: mallory's read times under alice's app name land in
// mallory's estimate, never alice's; each sees only their own estimates
// in cache stats (a service, here the superuser, sees both); a negative
// read time is refused with a message naming it.
func TestLearnedAffinityPerUser(t *testing.T) {
	// Policy none: nothing is ever cached, so every read is cold
	// whatever the fake datanodes' heartbeats do meanwhile.
	nn, fc, c := cacheCluster(t, "none", 4)
	b := writeFile(t, c, fc, "/in/a", 3, 1<<20)[0].GetBlock().GetBlockId()
	read := func(cl *rpcClient, nanos int64) error {
		_, err := cl.cp.CacheAccess(cl.ctx(), &dfspb.CacheAccessRequest{BlockId: b, App: "grep", JobId: "job_1",
			ReaderHost: "dn1", DatanodeId: "id-dn1", Affinity: -1, ReadBytes: 1 << 20, ReadNanos: nanos})
		return err
	}
	alice, mallory := dial(t, nn.Addr(), "alice"), dial(t, nn.Addr(), "mallory")
	for range 3 {
		if err := read(alice, 10e6); err != nil {
			t.Fatal(err)
		}
		if err := read(mallory, 1e6); err != nil {
			t.Fatal(err)
		}
	}
	if err := read(mallory, -5); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "read_nanos -5") {
		t.Errorf("negative read time: %v, want InvalidArgument naming read_nanos", err)
	}
	rows := func(cl *rpcClient) map[string]*dfspb.AffinityEstimate {
		st, err := cl.cp.GetCacheStats(cl.ctx(), &dfspb.GetCacheStatsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*dfspb.AffinityEstimate{}
		for _, e := range st.GetAffinityEstimates() {
			out[e.GetUser()+"/"+e.GetApp()] = e
		}
		return out
	}
	a := rows(alice)
	if len(a) != 1 || a["alice/grep"].GetColdSamples() != 3 || int(a["alice/grep"].GetColdMibPerSec()+0.5) != 100 {
		t.Errorf("alice's stats: %v, want only her grep: 3 cold reads at 100 MiB/s (mallory's 1000 MiB/s not among them)", a)
	}
	if m := rows(mallory); len(m) != 1 || m["mallory/grep"] == nil {
		t.Errorf("mallory's stats: %v, want only her own grep", m)
	}
	if s := rows(c); len(s) != 2 {
		t.Errorf("the superuser's stats: %v, want both users' estimates", s)
	}
}
