package resourcemanager

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// historyRM starts a resource manager over lfs keeping its job history
// in dir.
func historyRM(t *testing.T, lfs *mapreduce.LocalFS, dir string) *ResourceManager {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple
	cfg.FS, cfg.Scheduler, cfg.HistoryDir = lfs, "fifo", dir
	cfg.RPCAddr, cfg.HTTPAddr = "127.0.0.1:0", ""
	rm, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Close() })
	return rm
}

func getJob(t *testing.T, rm *ResourceManager, user, id string) *mrpb.JobStatus {
	t.Helper()
	st, err := rm.GetJob(asUser(user), &mrpb.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatalf("GetJob %s as %s: %v", id, user, err)
	}
	st = proto.Clone(st).(*mrpb.JobStatus)
	st.TrackingUrl = ""
	return st
}

func listed(t *testing.T, rm *ResourceManager, user string) []string {
	t.Helper()
	l, err := rm.ListJobs(asUser(user), &mrpb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range l.GetJobs() {
		ids = append(ids, j.GetJobId())
	}
	return ids
}

// A job that ended before the resource manager stopped is, after its
// restart, what it was: state, counters, every attempt with its node;
// a job that was running is FAILED as lost, and the first node to
// register is told to clean it up and aggregate its logs. Only the owner
// sees either.
func TestHistorySurvivesRestart(t *testing.T) {
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "history")
	rm := historyRM(t, lfs, dir)
	ended := submit(t, rm, 1, 0)
	n := &fakeNode{t: t, rm: rm, id: "n1"}
	for _, l := range n.heartbeat(1, 0) {
		n.done(l)
	}
	n.heartbeat(0, 0)
	var before *mrpb.JobStatus
	waitCond(t, "job "+ended+" to end", func() bool {
		before = getJob(t, rm, "tester", ended)
		return terminalState(before.GetState())
	})
	req := &mrpb.SubmitJobRequest{App: "wc", Output: "/out2", NumReduces: 1, Params: map[string]string{"k": "v"},
		Splits: []*mrpb.Split{{Path: "/in", Length: 10}}}
	resp, err := rm.SubmitJob(asUser("tester"), req)
	if err != nil {
		t.Fatal(err)
	}
	running := resp.GetJobId()
	n.heartbeat(1, 0) // its map runs on n1 when the resource manager stops
	rm.Close()

	rm = historyRM(t, lfs, dir)
	after := getJob(t, rm, "tester", ended)
	if !proto.Equal(before, after) {
		t.Fatalf("job %s after the restart:\n%v\nbefore:\n%v", ended, after, before)
	}
	if len(after.GetTasks()) != 1 || len(after.GetTasks()[0].GetAttempts()) != 1 || after.GetTasks()[0].GetAttempts()[0].GetNodeId() != "n1" {
		t.Fatalf("job %s's attempts after the restart: %v", ended, after.GetTasks())
	}
	lost := getJob(t, rm, "tester", running)
	if lost.GetState() != mapreduce.StateFailed || lost.GetError() != lostOnRestart || lost.GetFinishTimeMs() == 0 {
		t.Fatalf("job %s, running at the restart: %s %q", running, lost.GetState(), lost.GetError())
	}
	if ids := listed(t, rm, "tester"); !slices.Equal(ids, []string{running, ended}) {
		t.Fatalf("tester's job list after the restart: %v, want newest first [%s %s]", ids, running, ended)
	}
	for _, id := range []string{ended, running} {
		_, err := rm.GetJob(asUser("mallory"), &mrpb.GetJobRequest{JobId: id})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("mallory's GetJob %s from the history: %v, want PermissionDenied", id, err)
		}
	}
	if ids := listed(t, rm, "mallory"); len(ids) != 0 {
		t.Errorf("mallory's job list shows %v", ids)
	}
	if _, err := rm.KillJob(asUser("tester"), &mrpb.KillJobRequest{JobId: ended}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("killing a job of the history: %v, want FailedPrecondition (already finished)", err)
	}
	hb, err := rm.Heartbeat(context.Background(), &mrpb.HeartbeatRequest{NodeId: "n1", Hostname: "n1", ShuffleAddr: "n1:1", MapSlots: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(hb.GetFinishedJobs(), running) || len(hb.GetAggregateLogs()) != 1 ||
		hb.GetAggregateLogs()[0].GetDir() != "/app-logs/tester/"+running || hb.GetAggregateLogs()[0].GetUser() != "tester" {
		t.Fatalf("a node registering after the restart is not told to clean up and aggregate the lost job: %v", hb)
	}
	// A new job does not reuse a recorded id, even within the same second.
	r, err := rm.SubmitJob(asUser("tester"), &mrpb.SubmitJobRequest{App: "wc", Output: "/out3"})
	if err != nil {
		t.Fatal(err)
	}
	if id := r.GetJobId(); id == ended || id == running {
		t.Fatalf("new job %s reuses a recorded id", id)
	}
	// Its commit runs in the background: done before the test's files go.
	waitCond(t, "job "+r.GetJobId()+" to end", func() bool {
		return terminalState(getJob(t, rm, "tester", r.GetJobId()).GetState())
	})
}

// Retention deletes a job that ended longer ago than history_retention,
// entry and aggregated logs, and keeps a recent one and a running one.
func TestHistoryRetention(t *testing.T) {
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	rm := historyRM(t, lfs, filepath.Join(t.TempDir(), "history"))
	now := time.Now()
	put := func(id, state string, finished time.Time) string {
		dir := "/app-logs/tester/" + id
		if err := lfs.MkdirAll(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		st := &mrpb.JobStatus{JobId: id, User: "tester", State: state, SubmitTimeMs: finished.Add(-time.Minute).UnixMilli(),
			AggregatedLogDir: dir}
		if state != mapreduce.StateRunning {
			st.FinishTimeMs = finished.UnixMilli()
		}
		if err := rm.history.put(&mrpb.JobHistoryRecord{Status: st}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	old := put("job_1_0001", mapreduce.StateSucceeded, now.Add(-8*24*time.Hour))
	recent := put("job_1_0002", mapreduce.StateFailed, now.Add(-6*24*time.Hour))
	run := put("job_1_0003", mapreduce.StateRunning, now.Add(-30*24*time.Hour))
	rm.pruneHistory(now)
	if ids := listed(t, rm, "tester"); !slices.Equal(ids, []string{"job_1_0002", "job_1_0003"}) {
		t.Fatalf("jobs after retention: %v, want the recent and the running one", ids)
	}
	if _, err := lfs.Stat(context.Background(), old); err == nil {
		t.Errorf("%s kept after its job's retention", old)
	}
	for _, d := range []string{recent, run} {
		if _, err := lfs.Stat(context.Background(), d); err != nil {
			t.Errorf("%s deleted: %v", d, err)
		}
	}
	if _, err := rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: "job_1_0001"}); status.Code(err) != codes.NotFound ||
		!strings.Contains(err.Error(), "no job job_1_0001") {
		t.Errorf("GetJob of a pruned job: %v", err)
	}
}

// waitCond polls cond with a deadline, failing with what it waited for.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval of a condition with a deadline
	}
}
