package resourcemanager

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// fakeNode drives the resource manager's RPC handlers directly, as a
// node manager's heartbeats would, so the job life cycle is scripted
// without any node manager running.
type fakeNode struct {
	t       *testing.T
	rm      *ResourceManager
	id      string
	reports []*mrpb.TaskReport
}

func (n *fakeNode) heartbeat(freeMaps, freeReduces int) []*mrpb.TaskLaunch {
	n.t.Helper()
	resp, err := n.rm.Heartbeat(context.Background(), &mrpb.HeartbeatRequest{NodeId: n.id, Hostname: n.id,
		ShuffleAddr: n.id + ":1", MapSlots: 4, ReduceSlots: 1, FreeMapSlots: int32(freeMaps),
		FreeReduceSlots: int32(freeReduces), Tasks: n.reports})
	if err != nil {
		n.t.Fatal(err)
	}
	n.reports = nil
	return resp.GetLaunches()
}

func (n *fakeNode) done(l *mrpb.TaskLaunch) {
	n.reports = append(n.reports, &mrpb.TaskReport{JobId: l.JobId, AttemptId: l.AttemptId, IsMap: l.IsMap,
		Index: l.Index, State: mrpb.TaskState_TASK_SUCCEEDED})
}

func (n *fakeNode) fetchFailed(l *mrpb.TaskLaunch, mapIndex int32, mapAttempt string) {
	n.reports = append(n.reports, &mrpb.TaskReport{JobId: l.JobId, AttemptId: l.AttemptId, Index: l.Index,
		State: mrpb.TaskState_TASK_FAILED, Error: "connection refused", FetchFailedMap: mapIndex, FetchFailedAttempt: mapAttempt})
}

func kinds(ls []*mrpb.TaskLaunch) string {
	var s []string
	for _, l := range ls {
		k := "r"
		if l.IsMap {
			k = "m"
		}
		s = append(s, k+string(rune('0'+l.Index)))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

func newTestRM(t *testing.T, slowStart float64) *ResourceManager {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // callers assert their names here (secure_test.go covers secure)
	cfg.FS, cfg.Scheduler, cfg.ReduceSlowStart, cfg.MaxFetchFailures = lfs, "fifo", slowStart, 2
	rm, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rm
}

func submit(t *testing.T, rm *ResourceManager, maps, reduces int) string {
	t.Helper()
	req := &mrpb.SubmitJobRequest{App: "wc", Output: "/out", NumReduces: int32(reduces)}
	for i := range maps {
		req.Splits = append(req.Splits, &mrpb.Split{Index: int32(i), Path: "/in", Length: 10})
	}
	resp, err := rm.SubmitJob(asUser("tester"), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetJobId()
}

func mapOutputs(t *testing.T, rm *ResourceManager, job, attempt string) (*mrpb.GetMapOutputsResponse, []int32) {
	t.Helper()
	resp, err := rm.GetMapOutputs(context.Background(), &mrpb.GetMapOutputsRequest{JobId: job, AttemptId: attempt, Known: -1})
	if err != nil {
		t.Fatal(err)
	}
	var idx []int32
	for _, o := range resp.GetOutputs() {
		idx = append(idx, o.GetMapIndex())
	}
	slices.Sort(idx)
	return resp, idx
}

func TestSlowStartLaunchesReducesEarly(t *testing.T) {
	rm := newTestRM(t, 0.5) // reduces once 2 of 4 maps are done
	job := submit(t, rm, 4, 1)
	n := &fakeNode{t: t, rm: rm, id: "n1"}
	ls := n.heartbeat(2, 1)
	if got := kinds(ls); got != "m0 m1" {
		t.Fatalf("first heartbeat launched %q, want two maps and no reduce yet", got)
	}
	n.done(ls[0])
	ls2 := n.heartbeat(1, 1)
	if got := kinds(ls2); got != "m2" {
		t.Fatalf("after 1 of 4 maps: launched %q, want m2 only", got)
	}
	n.done(ls[1])
	ls3 := n.heartbeat(1, 1)
	if got := kinds(ls3); got != "m3 r0" {
		t.Fatalf("after 2 of 4 maps: launched %q, want m3 and the reduce", got)
	}
	var red, m3 *mrpb.TaskLaunch
	for _, l := range ls3 {
		if l.IsMap {
			m3 = l
		} else {
			red = l
		}
	}
	if len(red.MapOutputs) != 2 {
		t.Errorf("reduce launched knowing %d map outputs, want the 2 finished", len(red.MapOutputs))
	}
	if resp, idx := mapOutputs(t, rm, job, red.AttemptId); resp.Stop || !slices.Equal(idx, []int32{0, 1}) || resp.NumMaps != 4 {
		t.Fatalf("GetMapOutputs = %v (maps %v), want maps 0 1 of 4", resp, idx)
	}
	// A reduce that knows both finished maps waits for the next one.
	polled := make(chan []int32)
	go func() {
		resp, err := rm.GetMapOutputs(context.Background(), &mrpb.GetMapOutputsRequest{JobId: job,
			AttemptId: red.AttemptId, Known: 2, WaitMs: 60_000})
		var idx []int32
		for _, o := range resp.GetOutputs() {
			idx = append(idx, o.GetMapIndex())
		}
		if err != nil {
			t.Error(err)
		}
		slices.Sort(idx)
		polled <- idx
	}()
	n.done(ls2[0])
	n.heartbeat(0, 0)
	if idx := <-polled; !slices.Equal(idx, []int32{0, 1, 2}) {
		t.Fatalf("long poll answered with maps %v, want 0 1 2 once map 2 is done", idx)
	}
	n.done(m3)
	n.heartbeat(0, 0)
	if _, idx := mapOutputs(t, rm, job, red.AttemptId); !slices.Equal(idx, []int32{0, 1, 2, 3}) {
		t.Fatalf("after every map: outputs of maps %v", idx)
	}
	if resp, _ := mapOutputs(t, rm, job, "attempt_nobody"); !resp.Stop {
		t.Error("an attempt the resource manager does not wait for was not told to stop")
	}
}

func TestReduceFetchFailuresAreCapped(t *testing.T) {
	rm := newTestRM(t, 1)
	job := submit(t, rm, 1, 1)
	n := &fakeNode{t: t, rm: rm, id: "n1"}
	ls := n.heartbeat(1, 1)
	if kinds(ls) != "m0" {
		t.Fatalf("launched %q, want m0", kinds(ls))
	}
	mapAttempt := ls[0]
	n.done(mapAttempt)
	for failure := 1; failure <= 2; failure++ {
		ls = n.heartbeat(0, 1)
		if kinds(ls) != "r0" {
			t.Fatalf("fetch failure %d: launched %q, want the reduce", failure, kinds(ls))
		}
		n.fetchFailed(ls[0], 0, mapAttempt.AttemptId)
		ls = n.heartbeat(1, 0)
		if failure == 2 {
			break
		}
		// The map whose output could not be fetched runs again.
		if kinds(ls) != "m0" || ls[0].AttemptId == mapAttempt.AttemptId {
			t.Fatalf("after a fetch failure: launched %v, want a new attempt of m0", ls)
		}
		mapAttempt = ls[0]
		n.done(mapAttempt)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: job})
		if err != nil {
			t.Fatal(err)
		}
		if st.GetState() == mapreduce.StateFailed {
			if !strings.Contains(st.GetError(), "failed 2 times fetching map output") || !strings.Contains(st.GetError(), "connection refused") {
				t.Errorf("job error %q: want the fetch failures and their cause", st.GetError())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the job to fail after 2 fetch failures: %v", st)
		}
		time.Sleep(10 * time.Millisecond) // polling the job's state with a deadline
	}
}
