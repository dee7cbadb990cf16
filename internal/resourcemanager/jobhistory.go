package resourcemanager

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/applogs"
	"smarth/internal/rpc/mrpb"
)

// Job history (history_dir, jobstore.go): the jobs in memory (rm.jobs,
// at most retain_jobs finished ones) are the live view; the store is what
// a restart and an old job fall back to. GetJob and ListJobs answer from
// memory first, then from the store, under the same view rule (mayView:
// the job's owner or an admin). Retention (history_retention) deletes a
// finished job's entry together with its aggregated logs, the latter as
// the job's user.

// lostOnRestart is the diagnostics of a job that was running when the
// resource manager stopped: nothing resumes it (YARN without work-preserving
// recovery fails such an application).
const lostOnRestart = "the resource manager restarted while the job ran; the job was lost (its output directory may hold partial output: remove it and resubmit)"

// aggregatedDir is where job id's logs are aggregated ("" when off).
func (rm *ResourceManager) aggregatedDir(user, id string) string {
	if !rm.cfg.LogAggregation {
		return ""
	}
	return applogs.Dir(rm.cfg.RemoteAppLogDir, user, id)
}

// historyRecord is j as the store keeps it (under rm.mu, or before j is
// shared).
func (rm *ResourceManager) historyRecord(j *job) *mrpb.JobHistoryRecord {
	st := j.status()
	st.Tasks = j.taskStatuses()
	st.AggregatedLogDir = rm.aggregatedDir(j.user, j.id)
	return &mrpb.JobHistoryRecord{Spec: j.spec, Status: st}
}

// record writes j to the store (a no-op without one).
func (rm *ResourceManager) record(j *job) error {
	if rm.history == nil {
		return nil
	}
	return rm.history.put(rm.historyRecord(j))
}

// recoverHistory opens history_dir and fails the jobs that were running
// when the resource manager stopped; their nodes are asked to clean up
// and aggregate their logs as they register (lostJobs).
func (rm *ResourceManager) recoverHistory() error {
	st, err := openJobStore(rm.cfg.HistoryDir, rm.log)
	if err != nil {
		return err
	}
	sums, err := st.summaries()
	if err != nil {
		st.close()
		return err
	}
	now := time.Now()
	prefix := "job_" + rm.epoch + "_"
	for _, s := range sums {
		// A restart within the same second as the last start would reuse
		// its job ids: continue its numbering.
		if n, err := strconv.ParseInt(strings.TrimPrefix(s.GetJobId(), prefix), 10, 64); err == nil && strings.HasPrefix(s.GetJobId(), prefix) {
			rm.seq = max(rm.seq, n)
		}
		if terminalState(s.GetState()) {
			continue
		}
		rec, err := st.get(s.GetJobId())
		if err != nil || rec == nil {
			continue
		}
		markLost(rec.Status, now)
		if err := st.put(rec); err != nil {
			st.close()
			return err
		}
		rm.log.Warn("job lost: it was running when the resource manager stopped", "job", s.GetJobId(), "user", s.GetUser())
		rm.lostJobs = append(rm.lostJobs, &mrpb.AggregateLogs{JobId: s.GetJobId(), User: s.GetUser(), Dir: rec.Status.GetAggregatedLogDir()})
	}
	rm.history = st
	rm.log.Info("job history", "dir", rm.cfg.HistoryDir, "jobs", len(sums), "lost", len(rm.lostJobs))
	return nil
}

// markLost ends a recorded job that will never finish.
func markLost(st *mrpb.JobStatus, now time.Time) {
	st.State, st.FinishTimeMs = mapreduce.StateFailed, now.UnixMilli()
	st.Error = lostOnRestart
	st.MapsRunning, st.ReducesRunning = 0, 0
	for _, t := range st.GetTasks() {
		for _, a := range t.GetAttempts() {
			if a.GetState() == attemptRunning {
				a.State, a.Error, a.FinishTimeMs = attemptKilled, "resource manager restarted", now.UnixMilli()
			}
		}
	}
}

func terminalState(s string) bool {
	switch s {
	case mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled:
		return true
	}
	return false
}

// registered tells a node manager that just registered about the jobs
// lost at this resource manager's start: it drops their map output and
// aggregates their logs (under rm.mu).
func (rm *ResourceManager) registered(n *node) {
	for _, l := range rm.lostJobs {
		n.cleanup = append(n.cleanup, l.GetJobId())
		if l.GetDir() != "" {
			n.aggregate = append(n.aggregate, l)
		}
	}
}

// pastJob answers GetJob for a job no longer (or not yet, after a
// restart) in memory, from the store.
func (rm *ResourceManager) pastJob(caller, id string) (*mrpb.JobHistoryRecord, error) {
	if rm.history == nil {
		return nil, status.Errorf(codes.NotFound, "no job %s", id)
	}
	rec, err := rm.history.get(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if rec == nil {
		return nil, status.Errorf(codes.NotFound, "no job %s", id)
	}
	if err := rm.mayView(rec.GetStatus().GetJobId(), rec.GetStatus().GetUser(), caller); err != nil {
		return nil, err
	}
	rec.Status.TrackingUrl = rm.trackingURL(id)
	return rec, nil
}

// pastJobs are the stored jobs not in memory that caller may view.
func (rm *ResourceManager) pastJobs(caller string, all bool, states []string, inMemory map[string]bool) ([]*mrpb.JobStatus, error) {
	if rm.history == nil {
		return nil, nil
	}
	sums, err := rm.history.summaries()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	var out []*mrpb.JobStatus
	for _, s := range sums {
		if inMemory[s.GetJobId()] || !(all || s.GetUser() == caller) || !stateWanted(states, s.GetState()) {
			continue
		}
		s.TrackingUrl = rm.trackingURL(s.GetJobId())
		out = append(out, s)
	}
	return out, nil
}

// newestFirst orders a job listing by submission, newest first.
func newestFirst(jobs []*mrpb.JobStatus) {
	sort.SliceStable(jobs, func(a, b int) bool {
		if jobs[a].GetSubmitTimeMs() != jobs[b].GetSubmitTimeMs() {
			return jobs[a].GetSubmitTimeMs() > jobs[b].GetSubmitTimeMs()
		}
		return jobs[a].GetJobId() > jobs[b].GetJobId()
	})
}

// pruneEvery is how often retention runs: a tenth of it, between a
// second and an hour.
func pruneEvery(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Second), time.Hour)
}

// pruneLoop applies history_retention until the resource manager stops.
func (rm *ResourceManager) pruneLoop() {
	t := time.NewTicker(pruneEvery(rm.cfg.HistoryRetention))
	defer t.Stop()
	for {
		rm.pruneHistory(time.Now())
		select {
		case <-rm.stop:
			return
		case <-t.C:
		}
	}
}

// pruneHistory deletes the finished jobs that ended more than
// history_retention before now: their aggregated logs (as the job's
// user: the resource manager has no right to other users' files beyond
// theirs), then their entry. An entry whose logs could not be deleted is
// kept, and tried again next round.
func (rm *ResourceManager) pruneHistory(now time.Time) {
	sums, err := rm.history.summaries()
	if err != nil {
		rm.log.Error("job history retention", "err", err)
		return
	}
	cutoff := now.Add(-rm.cfg.HistoryRetention).UnixMilli()
	var gone []string
	for _, s := range sums {
		if !terminalState(s.GetState()) || s.GetFinishTimeMs() == 0 || s.GetFinishTimeMs() > cutoff {
			continue
		}
		if dir := s.GetAggregatedLogDir(); dir != "" {
			if err := rm.deleteAggregated(s.GetUser(), dir); err != nil {
				rm.log.Warn("aggregated logs past history_retention not deleted; trying again later", "job", s.GetJobId(), "dir", dir, "err", err)
				continue
			}
		}
		gone = append(gone, s.GetJobId())
	}
	if len(gone) == 0 {
		return
	}
	if err := rm.history.remove(gone); err != nil {
		rm.log.Error("job history retention", "err", err)
		return
	}
	rm.mu.Lock()
	for _, id := range gone {
		if j := rm.jobs[id]; j != nil && j.terminal() {
			delete(rm.jobs, id)
			rm.order = slices.DeleteFunc(rm.order, func(o *job) bool { return o == j })
		}
	}
	rm.mu.Unlock()
	rm.log.Info("jobs past history_retention deleted with their aggregated logs", "jobs", len(gone), "retention", rm.cfg.HistoryRetention)
}

func (rm *ResourceManager) deleteAggregated(user, dir string) error {
	if path.Base(path.Dir(dir)) != user {
		return errors.New("not a directory of the job's user")
	}
	fsys, err := rm.users.For(user)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := fsys.Delete(ctx, dir, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// forget removes a job that was recorded but never set up.
func (rm *ResourceManager) forget(id string) {
	if rm.history == nil {
		return
	}
	if err := rm.history.remove([]string{id}); err != nil {
		rm.log.Warn("job history", "job", id, "err", err)
	}
}

// closeHistory closes the store. rm.history stays set: a commit still
// finishing in the background (maybeFinish) may record its job after
// Close, which bbolt refuses (database not open) and finishJob logs.
func (rm *ResourceManager) closeHistory() {
	if rm.history != nil {
		rm.history.close()
	}
}

// nodesRan are the nodes j's attempts ran on: those that hold its logs.
func (j *job) nodesRan() map[string]bool {
	out := map[string]bool{}
	for _, ts := range [][]*task{j.maps, j.reduces} {
		for _, t := range ts {
			for _, a := range t.attempts {
				out[a.node] = true
			}
		}
	}
	return out
}
