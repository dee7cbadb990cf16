package cachemgr

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
)

var t0 = time.Unix(1_700_000_000, 0)

// feed adds n hot and n cold reads of 64 MiB whose times per byte have
// the ratio 1-ca, each with up to ±noise of independent jitter, one
// second apart from at.
func feed(e *affinityEstimator, rng *rand.Rand, user, app string, ca, noise float64, n int, at time.Time) time.Time {
	const bytes = 64 << 20
	cold := 640 * time.Millisecond // 100 MiB/s
	for i := range n {
		j := func() float64 { return 1 + noise*(2*rng.Float64()-1) }
		e.add(user, app, false, bytes, time.Duration(float64(cold)*j()), 0, at)
		e.add(user, app, true, bytes, time.Duration(float64(cold)*(1-ca)*j()), 0, at)
		at = at.Add(time.Second)
		_ = i
	}
	return at
}

// The estimate converges on the affinity the reads were drawn with, from
// samples jittered by ±30% each, and is used only once 3 of each kind
// back it.
func TestAffinityEstimateConverges(t *testing.T) {
	for _, ca := range []float64{0, 0.32, 0.55, 0.9} {
		e := newAffinityEstimator(30 * time.Minute)
		rng := rand.New(rand.NewPCG(1, uint64(ca*100)))
		at := feed(e, rng, "alice", "agg", ca, 0.3, 2, t0)
		if est, _ := e.estimate("alice", "agg", at); est.Used || est.Hot != 2 || est.Cold != 2 {
			t.Errorf("ca %.2f: 2 samples a kind: %+v, want counted but not used", ca, est)
		}
		at = feed(e, rng, "alice", "agg", ca, 0.3, 200, at)
		est, ok := e.estimate("alice", "agg", at)
		if !ok || !est.Used || est.Hot != AffinitySamples || est.Cold != AffinitySamples {
			t.Fatalf("ca %.2f: %+v, want %d samples a kind, used", ca, est, AffinitySamples)
		}
		if math.Abs(est.Affinity-ca) > 0.05 {
			t.Errorf("ca %.2f: estimated %.3f from %d+%d jittered reads, want within 0.05", ca, est.Affinity, est.Hot, est.Cold)
		}
		if math.Abs(est.ColdMiBps-100) > 10 {
			t.Errorf("ca %.2f: cold median %.1f MiB/s, want about 100", ca, est.ColdMiBps)
		}
	}
}

// With task times, the estimate is the share of a cold task's time that
// memory saves, not the read speed-up: two apps whose reads gain alike
// from memory (10x here, what a throttled disk gives every app) but that
// compute 0.5 and 40 ms per MiB are told apart, each estimated at its
// tasks' own 1 - T_hot/T_cold. Read times alone would put both near 0.9.
// A task time shorter than its read is no task time.
func TestAffinityFromTaskTimes(t *testing.T) {
	const bytes = 64 << 20
	coldRead, hotRead := 10*time.Millisecond, time.Millisecond // per MiB
	for _, c := range []struct {
		app     string
		compute time.Duration // per MiB
	}{{"grep", 500 * time.Microsecond}, {"aggregation", 40 * time.Millisecond}} {
		e := newAffinityEstimator(time.Hour)
		rng := rand.New(rand.NewPCG(4, uint64(c.compute)))
		at := t0
		for range 40 {
			j := func(d time.Duration) time.Duration { return time.Duration(float64(d*64) * (0.8 + 0.4*rng.Float64())) }
			cr, hr, comp := j(coldRead), j(hotRead), j(c.compute)
			e.add("alice", c.app, false, bytes, cr, cr+comp, at)
			e.add("alice", c.app, true, bytes, hr, hr+j(c.compute), at)
			at = at.Add(time.Second)
		}
		want := 1 - float64(hotRead+c.compute)/float64(coldRead+c.compute)
		est, _ := e.estimate("alice", c.app, at)
		if !est.Used || est.ColdTasks != 40 || math.Abs(est.Affinity-want) > 0.05 {
			t.Errorf("%s: %+v, want affinity %.3f (1 - T_hot/T_cold of its tasks) from 40 cold task times", c.app, est, want)
		}
		if math.Abs(est.ColdTaskMiBps*(coldRead+c.compute).Seconds()-1) > 0.1 {
			t.Errorf("%s: cold tasks at %.1f MiB/s, want about %.1f", c.app, est.ColdTaskMiBps, 1/(coldRead+c.compute).Seconds())
		}
	}
	e := newAffinityEstimator(time.Hour)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Second)
		e.add("alice", "odd", false, bytes, 640*time.Millisecond, 100*time.Millisecond, at)
		e.add("alice", "odd", true, bytes, 64*time.Millisecond, 0, at)
	}
	if est, _ := e.estimate("alice", "odd", t0.Add(time.Minute)); est.ColdTasks != 0 || math.Abs(est.Affinity-0.9) > 1e-9 {
		t.Errorf("task times shorter than their reads: %+v, want none counted and 1 - hot/cold read (0.9)", est)
	}
}

// Samples older than the window are forgotten: an app whose reads change
// is re-learned from the new ones, and one that stops reading loses its
// estimate (the table's value stands again). A hot read slower than the
// cold ones is affinity 0, never negative.
func TestAffinityEstimateDecays(t *testing.T) {
	e := newAffinityEstimator(10 * time.Minute)
	rng := rand.New(rand.NewPCG(2, 2))
	at := feed(e, rng, "alice", "grep", 0.8, 0.1, 30, t0)
	at = feed(e, rng, "alice", "grep", 0.2, 0.1, 30, at.Add(11*time.Minute))
	if est, _ := e.estimate("alice", "grep", at); math.Abs(est.Affinity-0.2) > 0.05 || est.Hot != 30 {
		t.Errorf("after the window: %+v, want about 0.2 from the 30 new samples a kind", est)
	}
	if est, _ := e.estimate("alice", "grep", at.Add(11*time.Minute)); est.Used || est.Hot != 0 || est.Cold != 0 {
		t.Errorf("a window after the last read: %+v, want no samples, not used", est)
	}
	feed(e, rng, "alice", "slow", -0.5, 0, 5, t0)
	if est, _ := e.estimate("alice", "slow", t0.Add(time.Minute)); est.Affinity != 0 || !est.Used {
		t.Errorf("hot reads slower than cold: %+v, want affinity 0", est)
	}
}

// Everything is bounded: samples per kind, apps per user (a user's own
// oldest goes, never another user's), apps in all; reads too short to
// measure throughput are ignored.
func TestAffinityEstimatorBounded(t *testing.T) {
	e := newAffinityEstimator(time.Hour)
	rng := rand.New(rand.NewPCG(3, 3))
	at := feed(e, rng, "bob", "wordcount", 0.5, 0, 5, t0)
	for i := range 10 * MaxAffinityAppsPerUser {
		at = feed(e, rng, "mallory", fmt.Sprintf("app-%d", i), 1, 0, 1, at)
	}
	if est, ok := e.estimate("bob", "wordcount", at); !ok || !est.Used {
		t.Errorf("bob's estimate after mallory reported %d apps: %+v (kept %v)", 10*MaxAffinityAppsPerUser, est, ok)
	}
	if n := len(e.apps); n != MaxAffinityAppsPerUser+1 {
		t.Errorf("%d estimates held, want mallory's %d and bob's", n, MaxAffinityAppsPerUser)
	}
	for u := range 2 * MaxAffinityApps / MaxAffinityAppsPerUser {
		for a := range MaxAffinityAppsPerUser {
			at = feed(e, rng, fmt.Sprintf("user-%d", u), fmt.Sprintf("app-%d", a), 1, 0, 1, at)
		}
	}
	if len(e.apps) > MaxAffinityApps {
		t.Errorf("%d estimates held, want at most %d", len(e.apps), MaxAffinityApps)
	}
	e.add("carol", "tiny", true, minSampleBytes-1, time.Millisecond, 0, at)
	if _, ok := e.estimate("carol", "tiny", at); ok {
		t.Error("a read shorter than 64 KiB was sampled")
	}
	if r := e.apps[affinityKey{"user-0", "app-0"}]; r != nil && len(r.hot) > AffinitySamples {
		t.Errorf("%d samples held, want at most %d", len(r.hot), AffinitySamples)
	}
	feed(e, rng, "bob", "wordcount", 0.5, 0, 3*AffinitySamples, at)
	if r := e.apps[affinityKey{"bob", "wordcount"}]; len(r.hot) != AffinitySamples || len(r.cold) != AffinitySamples {
		t.Errorf("%d+%d samples held, want %d a kind", len(r.hot), len(r.cold), AffinitySamples)
	}
}

// An access's read is hot only when the datanode that served it reports
// the block in memory (the namenode decides, not the task), counts for
// the calling user alone, and is refused when negative.
func TestAccessSamplesReadTimes(t *testing.T) {
	m, _ := newTestManager(t, "lru")
	heartbeat(m, "n1", 1) // n1 reports block 1 in memory (adopted)
	read := func(user, served string, nanos int64) error {
		_, err := m.Access(&dfspb.CacheAccessRequest{BlockId: 1, App: "grep", ReaderHost: "host-" + served, DatanodeId: served,
			Affinity: -1, ReadBytes: 1 << 20, ReadNanos: nanos}, user, allow)
		return err
	}
	for range 3 {
		for _, err := range []error{read("alice", "n1", 2e6), read("alice", "n2", 10e6), read("mallory", "n2", 1e6), read("mallory", "n1", 50e6)} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	m.mu.Lock()
	est, _ := m.learned.estimate("alice", "grep", m.clock())
	m.mu.Unlock()
	if est.Hot != 3 || est.Cold != 3 || math.Abs(est.Affinity-0.8) > 1e-9 {
		t.Errorf("alice's grep: %+v, want 3 hot (served by n1, which caches it) and 3 cold, affinity 0.8", est)
	}
	if err := read("alice", "n1", -1); status.Code(err) != codes.InvalidArgument {
		t.Errorf("negative read time: %v, want InvalidArgument", err)
	}
	st := m.Stats()
	if len(st.AffinityEstimates) != 2 || st.AffinitySource != AffinityLearned {
		t.Fatalf("stats: %v estimates, source %q", st.AffinityEstimates, st.AffinitySource)
	}
	if a := st.AffinityEstimates[0]; a.User != "alice" || a.HotSamples != 3 || !a.Used {
		t.Errorf("stats row %+v", a)
	}
}

// newSqueezedManager is a bg manager whose datanode n1 has room for one
// 3 MiB block: block 1 belongs to app "low" (the table says 0.9), block 2
// to "high" (the table says 0.1).
func newSqueezedManager(t *testing.T, source string) *Manager {
	t.Helper()
	f := &fakeNN{blocks: blockmap.New(), live: map[string]bool{"n1": true}, paths: map[string]bool{}}
	for _, id := range []uint64{1, 2} {
		f.blocks.Add(&blockmap.Block{ID: id, GS: 1000, NumBytes: 3 << 20, Expected: 1, State: blockmap.Complete})
		f.blocks.AddReplica("n1", blockmap.Reported{ID: id, GS: 1000, NumBytes: 3 << 20, State: blockmap.Finalized})
	}
	m, err := New(Config{Policy: "bg", Window: time.Hour, TTL: time.Hour, MaxReplication: 1, AffinitySource: source,
		Affinity: map[string]float64{"low": 0.9, "high": 0.1}}, f, &sync.RWMutex{},
		func() time.Time { return t0 }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	heartbeat(m, "n1")
	rng := rand.New(rand.NewPCG(4, 4))
	feed(m.learned, rng, "alice", "low", 0.1, 0.05, 10, t0.Add(-time.Minute))
	feed(m.learned, rng, "alice", "high", 0.8, 0.05, 10, t0.Add(-time.Minute))
	return m
}

// BG steers by the learned affinity: with it, "high"'s block (learned 0.8)
// displaces "low"'s (learned 0.1) on the full node; with the paper's
// table (0.9 against 0.1) the same accesses keep "low"'s block. The
// affinity recorded with each access is the one used.
func TestBGUsesLearnedAffinity(t *testing.T) {
	for _, tc := range []struct {
		source string
		keep   uint64
		aff    float64
	}{{AffinityLearned, 2, 0.8}, {AffinityTable, 1, 0.1}} {
		m := newSqueezedManager(t, tc.source)
		for _, a := range []struct {
			block uint64
			app   string
		}{{1, "low"}, {2, "high"}} {
			if _, err := m.Access(&dfspb.CacheAccessRequest{BlockId: a.block, App: a.app, ReaderHost: "host-n1", Affinity: -1}, "alice", allow); err != nil {
				t.Fatal(err)
			}
		}
		st := m.State()
		if got := st.Resident("n1"); len(got) != 1 || got[0] != tc.keep {
			t.Errorf("%s: n1 holds %v, want block %d", tc.source, got, tc.keep)
		}
		if got := st.LastAccess(2).Affinity; math.Abs(got-tc.aff) > 0.05 {
			t.Errorf("%s: high's access carried affinity %.3f, want about %.2f", tc.source, got, tc.aff)
		}
	}
	if _, err := New(Config{Policy: "bg", AffinitySource: "guess"}, nil, &sync.RWMutex{}, time.Now, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("cache_affinity_source guess accepted")
	}
}
