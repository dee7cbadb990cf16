package resourcemanager

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// fakeCacheStatus answers JobCacheStatus as the namenode's cache manager
// would, from a table, and records every request.
type fakeCacheStatus struct {
	mu     sync.Mutex // guards all
	answer map[string]client.JobCache
	err    error
	calls  [][]client.JobInput
}

func (f *fakeCacheStatus) JobCacheStatus(ctx context.Context, jobs []client.JobInput) (map[string]client.JobCache, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, jobs)
	return f.answer, f.err
}

func (f *fakeCacheStatus) last() []client.JobInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[len(f.calls)-1]
}

func newCacheRM(t *testing.T, scheduler string, src CacheStatusSource) *ResourceManager {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // callers assert their names here (secure_test.go covers secure)
	cfg.FS, cfg.Scheduler, cfg.CacheStatus = lfs, scheduler, src
	rm, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rm
}

// submitBlocks submits a map-only job with one split per block id, each
// block on hosts n1 and n2, the split i cached (at split time) on
// cached[i] if given.
func submitBlocks(t *testing.T, rm *ResourceManager, app string, blocks []uint64, cached ...string) string {
	t.Helper()
	req := &mrpb.SubmitJobRequest{App: app, Output: "/out-" + app}
	for i, b := range blocks {
		s := &mrpb.Split{Index: int32(i), Path: "/in", Offset: int64(i) * 10, Length: 10, BlockId: b,
			Hosts: []string{"n1", "n2"}, Racks: []string{"/r1", "/r1"}}
		if i < len(cached) && cached[i] != "" {
			s.CachedHosts = []string{cached[i]}
		}
		req.Splits = append(req.Splits, s)
	}
	resp, err := rm.SubmitJob(asUser("tester"), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetJobId()
}

func jobCounter(t *testing.T, rm *ResourceManager, id, name string) int64 {
	t.Helper()
	st, err := rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.GetCounters() {
		if c.GetGroup() == mapreduce.GroupJob && c.GetName() == name {
			return c.GetValue()
		}
	}
	return 0
}

func TestCacheStatusReachesCacheLocalPolicy(t *testing.T) {
	src := &fakeCacheStatus{}
	rm := newCacheRM(t, "cachelocal", src)
	id := submitBlocks(t, rm, "grep", []uint64{11, 12, 11})
	src.answer = map[string]client.JobCache{id: {CachedFraction: 1,
		CachedHosts: map[uint64][]string{11: {"n2"}, 12: {"n2"}}}}
	rm.refreshCache(context.Background(), src)

	want := []client.JobInput{{JobID: id, App: "grep", BlockIDs: []uint64{11, 12}}}
	if got := src.last(); !slices.EqualFunc(got, want, sameInput) {
		t.Fatalf("JobCacheStatus request = %+v, want %+v (each block once)", got, want)
	}
	st, _ := rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: id})
	if st.GetCachedFraction() != 1 {
		t.Fatalf("job status R_j = %v, want 1", st.GetCachedFraction())
	}

	// R_j = 1, C = 3: on n1 (node-local, cached on n2) the job waits.
	n1 := &fakeNode{t: t, rm: rm, id: "n1"}
	if ls := n1.heartbeat(1, 0); len(ls) != 0 {
		t.Fatalf("n1 launched %v; with its input cached on n2 the job should wait", kinds(ls))
	}
	// On n2 every map is cache-local and launches at once.
	n2 := &fakeNode{t: t, rm: rm, id: "n2"}
	if ls := n2.heartbeat(3, 0); len(ls) != 3 {
		t.Fatalf("n2 launched %v, want all three maps", kinds(ls))
	}
	if c, d := jobCounter(t, rm, id, mapreduce.CacheLocalMaps), jobCounter(t, rm, id, mapreduce.DataLocalMaps); c != 3 || d != 3 {
		t.Fatalf("CACHE_LOCAL_MAPS = %d, DATA_LOCAL_MAPS = %d, want 3 and 3 (cache-local maps are node-local too)", c, d)
	}

	// Once the job is over the namenode is told, once.
	if _, err := rm.KillJob(asUser("tester"), &mrpb.KillJobRequest{JobId: id}); err != nil {
		t.Fatal(err)
	}
	rm.refreshCache(context.Background(), src)
	if got := src.last(); len(got) != 1 || got[0].JobID != id || !got[0].Finished {
		t.Fatalf("after the kill the request was %+v, want %s finished", got, id)
	}
	calls := len(src.calls)
	rm.refreshCache(context.Background(), src)
	if len(src.calls) != calls {
		t.Fatalf("a call was made with no active job and nothing to forget: %+v", src.last())
	}
}

func sameInput(a, b client.JobInput) bool {
	return a.JobID == b.JobID && a.App == b.App && a.Finished == b.Finished && slices.Equal(a.BlockIDs, b.BlockIDs)
}

func TestCacheLocalCountedForDataLocalityPolicies(t *testing.T) {
	// fifo knows nothing of caches, but the resource manager counts its
	// launch on a caching node as cache-local: the baselines are measured
	// the same way. Here the cached hosts come from the splits (no
	// namenode answer yet).
	rm := newCacheRM(t, "fifo", nil)
	id := submitBlocks(t, rm, "wc", []uint64{21, 22}, "n1", "n2")
	n1 := &fakeNode{t: t, rm: rm, id: "n1"}
	if ls := n1.heartbeat(2, 0); len(ls) != 2 {
		t.Fatalf("n1 launched %v, want both maps", kinds(ls))
	}
	for name, want := range map[string]int64{mapreduce.CacheLocalMaps: 1, mapreduce.DataLocalMaps: 2, mapreduce.RackLocalMaps: 0} {
		if got := jobCounter(t, rm, id, name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

func TestCacheStatusUnavailableKeepsScheduling(t *testing.T) {
	src := &fakeCacheStatus{err: status.Error(codes.Unimplemented, "unknown method JobCacheStatus")}
	rm := newCacheRM(t, "cachelocal", src)
	id := submitBlocks(t, rm, "grep", []uint64{31, 32})
	for range 3 {
		rm.refreshCache(context.Background(), src)
	}
	if !rm.cacheFailing {
		t.Fatal("the failure was not noticed")
	}
	n1 := &fakeNode{t: t, rm: rm, id: "n1"}
	if ls := n1.heartbeat(2, 0); len(ls) != 2 {
		t.Fatalf("with no cache information n1 launched %v, want both node-local maps", kinds(ls))
	}
	// The namenode comes back and is told of the job.
	src.err = nil
	rm.refreshCache(context.Background(), src)
	if rm.cacheFailing {
		t.Fatal("recovery not noticed")
	}
	if got := src.last(); len(got) != 1 || got[0].JobID != id || got[0].Finished {
		t.Fatalf("request after recovery = %+v", got)
	}
}

func TestConfigValidateCacheKeys(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Scheduler = "cache-local" }, "known: cachelocal, delay, fifo"},
		{func(c *Config) { c.CacheSkips = -1 }, "cache_skips -1 must not be negative"},
		{func(c *Config) { c.MaxAllocations = 0 }, "max_allocations 0 must be at least 1"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
		}
	}
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // no identity secret or credential at hand
	cfg.Scheduler, cfg.CacheSkips = "cachelocal", 0
	if err := cfg.Validate(); err != nil {
		t.Fatalf("cachelocal with cache_skips 0 (no cache wait): %v", err)
	}
}
