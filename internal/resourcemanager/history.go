package resourcemanager

import (
	"net"
	"os"
	"slices"
	"time"

	"smarth/internal/pki"
	"smarth/internal/rpc/mrpb"
)

// Attempt states as job status and the web pages show them (YARN's words).
const (
	attemptRunning   = "RUNNING"
	attemptSucceeded = "SUCCEEDED"
	attemptFailed    = "FAILED"
	attemptKilled    = "KILLED"
)

// finish closes a running attempt's record; a later report changes nothing.
func (a *attempt) finish(state, why string, now time.Time) {
	if a.state != attemptRunning {
		return
	}
	a.state, a.err, a.end = state, why, now
}

// recordAttempt keeps the outcome of a reported attempt in its task's
// history, for job status and logs, whatever the job's state: an attempt
// of a job that already ended still ran somewhere and left its logs there.
func recordAttempt(j *job, r *mrpb.TaskReport) {
	ts := j.tasks(r.GetIsMap())
	if r.GetIndex() < 0 || int(r.GetIndex()) >= len(ts) {
		return
	}
	for _, a := range ts[r.GetIndex()].attempts {
		if a.id != r.GetAttemptId() {
			continue
		}
		switch r.GetState() {
		case mrpb.TaskState_TASK_SUCCEEDED:
			a.finish(attemptSucceeded, "", time.Now())
		case mrpb.TaskState_TASK_FAILED:
			a.finish(attemptFailed, r.GetError(), time.Now())
		case mrpb.TaskState_TASK_KILLED:
			a.finish(attemptKilled, r.GetError(), time.Now())
		}
		return
	}
}

// closeAttempts ends the records of attempts that will never report (the
// job is over and its nodes were told to kill them, or the node is gone).
func (j *job) closeAttempts(why string, now time.Time) {
	for _, ts := range [][]*task{j.maps, j.reduces} {
		for _, t := range ts {
			for _, a := range t.attempts {
				a.finish(attemptKilled, why, now)
			}
		}
	}
}

func taskState(t *task) string {
	switch t.state {
	case taskRunning:
		return "RUNNING"
	case taskDone:
		return "SUCCEEDED"
	}
	return "PENDING"
}

// taskStatuses lists j's tasks, maps first, with every attempt.
func (j *job) taskStatuses() []*mrpb.TaskStatus {
	var out []*mrpb.TaskStatus
	for _, ts := range [][]*task{j.maps, j.reduces} {
		for _, t := range ts {
			s := &mrpb.TaskStatus{IsMap: t.isMap, Index: int32(t.index), State: taskState(t)}
			for _, a := range t.attempts {
				as := &mrpb.AttemptStatus{AttemptId: a.id, NodeId: a.node, NodeHost: a.host, NodeHttpAddr: a.httpAddr,
					State: a.state, StartTimeMs: a.start.UnixMilli(), Error: a.err}
				if !a.end.IsZero() {
					as.FinishTimeMs = a.end.UnixMilli()
				}
				s.Attempts = append(s.Attempts, as)
			}
			out = append(out, s)
		}
	}
	return out
}

// stateWanted: states is a ListJobs filter (empty keeps every job).
func stateWanted(states []string, state string) bool {
	return len(states) == 0 || slices.Contains(states, state)
}

// webBase is the resource manager's web address as others can reach it:
// a wildcard bind is replaced by this host's name.
func (rm *ResourceManager) webBase() string {
	a := rm.HTTPAddr()
	if a == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(a)
	scheme := pki.Scheme(rm.srvTLS)
	if err != nil {
		return scheme + "://" + a
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// trackingURL is the web page of a job (empty without a web server).
func (rm *ResourceManager) trackingURL(id string) string {
	if b := rm.webBase(); b != "" {
		return b + "/job/" + id
	}
	return ""
}

// jobStatus is j's status as clients get it, with its tracking URL.
func (rm *ResourceManager) jobStatus(j *job, withTasks bool) *mrpb.JobStatus {
	st := j.status()
	st.TrackingUrl = rm.trackingURL(j.id)
	st.AggregatedLogDir = rm.aggregatedDir(j.user, j.id)
	if withTasks {
		st.Tasks = j.taskStatuses()
	}
	return st
}
