package cachemgr

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// fakeNN is the namenode as the manager sees it: a real block map, a set
// of live datanodes, paths that exist, and pools and directives that
// Commit changes (recording each change) as the namenode's mutation would.
type fakeNN struct {
	blocks  *blockmap.Map
	live    map[string]bool
	paths   map[string]bool
	dirs    Dirs
	commits []Change
}

func (f *fakeNN) Block(id uint64) *blockmap.Block { return f.blocks.Get(id) }
func (f *fakeNN) IsLive(node string) bool         { return f.live[node] }
func (f *fakeNN) Location(node string) topology.Location {
	return topology.Location{Host: "host-" + node, IP: "ip-" + node, Rack: "/r"}
}

func (f *fakeNN) LiveDatanodes() []*dfspb.DatanodeInfo {
	var out []*dfspb.DatanodeInfo
	for _, node := range slices.Sorted(maps.Keys(f.live)) {
		if f.live[node] {
			out = append(out, &dfspb.DatanodeInfo{Id: node, Hostname: "host-" + node, CacheCapacity: 4 << 20})
		}
	}
	return out
}

func (f *fakeNN) SortByDistance(ids []string, readerHost string) {}
func (f *fakeNN) Lookup(path string) *namespace.INode            { return nil }

func (f *fakeNN) Stat(c namespace.Caller, op, path string) error {
	if !f.paths[path] {
		return status.Errorf(codes.NotFound, "%s %s: no such file or directory", op, path)
	}
	return nil
}

func (f *fakeNN) Dirs() Dirs { return f.dirs }

func (f *fakeNN) Commit(_ context.Context, c namespace.Caller, ch *Change, check func() error, after func()) error {
	if err := check(); err != nil {
		return err
	}
	f.commits = append(f.commits, *ch)
	switch ch.Kind {
	case AddPool:
		f.dirs.Pools = append(f.dirs.Pools, ch.Pool)
	case AddDirective:
		f.dirs.Directives = append(f.dirs.Directives, ch.Directive)
		f.dirs.LastID = ch.Directive.ID
	}
	if after != nil {
		after()
	}
	return nil
}

// newTestManager makes a manager with policy over datanodes n1..n3, each
// holding a good replica of blocks 1 and 2 (1 MiB, complete).
func newTestManager(t *testing.T, policy string) (*Manager, *fakeNN) {
	t.Helper()
	f := &fakeNN{blocks: blockmap.New(), live: map[string]bool{"n1": true, "n2": true, "n3": true}, paths: map[string]bool{}}
	for _, id := range []uint64{1, 2} {
		f.blocks.Add(&blockmap.Block{ID: id, GS: 1000, NumBytes: 1 << 20, Expected: 3, State: blockmap.Complete})
		for node := range f.live {
			f.blocks.AddReplica(node, blockmap.Reported{ID: id, GS: 1000, NumBytes: 1 << 20, State: blockmap.Finalized})
		}
	}
	now := time.Unix(1_700_000_000, 0)
	m, err := New(Config{Policy: policy, Window: time.Hour, TTL: time.Hour, MaxReplication: 3}, f, &sync.RWMutex{},
		func() time.Time { return now }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

// heartbeat sends one heartbeat of node reporting cached blocks and
// returns the blocks of the cache commands in its reply.
func heartbeat(m *Manager, node string, cached ...uint64) []uint64 {
	resp := &dfspb.HeartbeatResponse{}
	m.mu.Lock()
	m.HeartbeatLocked(node, &dfspb.HeartbeatRequest{CacheCapacity: 4 << 20, CachedBlockIds: cached}, resp)
	m.mu.Unlock()
	var out []uint64
	for _, c := range resp.GetCommands() {
		out = append(out, c.GetCache().GetBlockIds()...)
	}
	return out
}

func allow(*blockmap.Block) error { return nil }

// A block queued for caching that leaves the namespace before the
// datanode's next heartbeat gets no cache command; a block queued beside
// it still does (the queue was not simply lost).
func TestQueuedCacheOfDeletedBlockNotSent(t *testing.T) {
	m, f := newTestManager(t, "lru")
	heartbeat(m, "n1")
	for _, id := range []uint64{1, 2} {
		r, err := m.Access(&dfspb.CacheAccessRequest{BlockId: id, App: "grep", ReaderHost: "host-n1", Affinity: -1}, "alice", allow)
		if err != nil || r.GetCachedOn() != "n1" {
			t.Fatalf("access to block %d from n1: %v %v; want planned on n1", id, r, err)
		}
	}
	// The namenode deletes block 1: the block map drops it, then it tells
	// the manager (afterApplyLocked).
	f.blocks.Remove(1)
	m.mu.Lock()
	m.ForgetLocked(1)
	m.mu.Unlock()
	if got := heartbeat(m, "n1"); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("cache commands %v; want block 2 only", got)
	}
}

// Only blocks a live datanode reports count as cached: R_j and the
// statistics follow reports, and a dead node's report stops counting.
func TestJobStatusFollowsLiveReports(t *testing.T) {
	m, f := newTestManager(t, "lru")
	heartbeat(m, "n1", 1)
	job := &dfspb.JobCacheStatusRequest{Jobs: []*dfspb.JobCacheStatusRequest_Job{{JobId: "job_1", App: "grep", BlockIds: []uint64{1, 2}}}}
	j := m.JobStatus(job).GetJobs()[0]
	if j.GetCachedFraction() != 0.5 || len(j.GetBlocks()) != 1 || !slices.Equal(j.GetBlocks()[0].GetHosts(), []string{"host-n1"}) {
		t.Fatalf("job status %v; want R_j 0.5, block 1 on host-n1", j)
	}
	st := m.Stats()
	if len(st.GetNodes()) != 3 || st.GetNodes()[0].GetBlocks() != 1 || len(st.GetJobs()) != 1 {
		t.Fatalf("stats %v; want 3 nodes, n1 with 1 cached block, 1 job", st)
	}
	f.live["n1"] = false
	if j := m.JobStatus(job).GetJobs()[0]; j.GetCachedFraction() != 0 {
		t.Fatalf("job status %v after n1 died; want R_j 0", j)
	}
}

// The pool and directive calls check their arguments before asking the
// namenode, fill a pool's defaults from its creator, and give a new
// directive the id after the last one ever handed out.
func TestPoolAndDirectiveArguments(t *testing.T) {
	m, f := newTestManager(t, "pinned")
	alice := namespace.Caller{User: "alice", Groups: []string{"staff", "dev"}}
	for _, tc := range []struct {
		in   *dfspb.CachePoolInfo
		code codes.Code
		msg  string
	}{
		{&dfspb.CachePoolInfo{}, codes.InvalidArgument, "addPool: a pool needs a name"},
		{&dfspb.CachePoolInfo{Name: "p", Limit: -1}, codes.InvalidArgument, "addPool p: limit -1 must not be negative"},
	} {
		wantCode(t, m.AddPool(context.Background(), alice, tc.in), tc.code, tc.msg)
	}
	if len(f.commits) != 0 {
		t.Fatalf("bad arguments reached the namenode: %v", f.commits)
	}
	if err := m.AddPool(context.Background(), alice, &dfspb.CachePoolInfo{Name: "hot"}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddPool(context.Background(), namespace.Caller{User: "bob"}, &dfspb.CachePoolInfo{Name: "bobs"}); err != nil {
		t.Fatal(err)
	}
	want := []Pool{{Name: "hot", Owner: "alice", Group: "staff", Mode: 0o755}, {Name: "bobs", Owner: "bob", Group: "bob", Mode: 0o755}}
	if !slices.Equal(f.dirs.Pools, want) {
		t.Fatalf("pools %+v; want %+v", f.dirs.Pools, want)
	}
	wantCode(t, m.AddPool(context.Background(), alice, &dfspb.CachePoolInfo{Name: "hot"}), codes.AlreadyExists, "cache pool hot already exists")
	wantCode(t, m.RemovePool(context.Background(), alice, "cold"), codes.NotFound, "cache pool cold does not exist")

	_, err := m.AddDirective(context.Background(), alice, &dfspb.CacheDirectiveInfo{Path: "/d", Pool: "hot", Replication: 4})
	wantCode(t, err, codes.InvalidArgument, "addDirective /d: replication 4 is outside [1, 3]")
	_, err = m.AddDirective(context.Background(), alice, &dfspb.CacheDirectiveInfo{Path: "/d/../e", Pool: "hot"})
	wantCode(t, err, codes.InvalidArgument, "addDirective /d/../e: invalid path component")
	_, err = m.AddDirective(context.Background(), alice, &dfspb.CacheDirectiveInfo{Path: "/d", Pool: "hot"})
	wantCode(t, err, codes.NotFound, "addDirective /d: no such file or directory")
	f.paths["/d"] = true
	f.dirs.LastID = 7 // ids of removed directives are never reused
	id, err := m.AddDirective(context.Background(), alice, &dfspb.CacheDirectiveInfo{Path: "/d/", Pool: "hot"})
	if err != nil || id != 8 {
		t.Fatalf("add directive: id %d, %v; want id 8", id, err)
	}
	if d := f.dirs.Directives[0]; d != (Directive{ID: 8, Path: "/d", Pool: "hot", Replication: 1}) {
		t.Fatalf("directive %+v; want id 8 on /d, replication 1", d)
	}
	wantCode(t, m.RemoveDirective(context.Background(), alice, 9), codes.NotFound, "cache directive 9 does not exist")
}

func wantCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("got error %v; want code %v with message containing %q", err, code, msg)
	}
}
