package resourcemanager

import (
	"context"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/sched"
)

// Heartbeat takes a node manager's task reports and free slots and
// answers with the tasks it should launch and kill.
func (rm *ResourceManager) Heartbeat(ctx context.Context, req *mrpb.HeartbeatRequest) (*mrpb.HeartbeatResponse, error) {
	if req.GetNodeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "heartbeat without node id")
	}
	rm.heartbeats.Inc()
	// Who the node manager is comes before anything it says is looked at.
	who, err := rm.nodeCaller(ctx, fmt.Sprintf("heartbeat from node %q", req.GetNodeId()))
	if err != nil {
		return nil, err
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if err := rm.bindNode(ctx, req.GetNodeId(), who); err != nil {
		return nil, err
	}
	resp := &mrpb.HeartbeatResponse{HeartbeatIntervalMs: rm.cfg.HeartbeatInterval.Milliseconds()}
	n := rm.nodes[req.GetNodeId()]
	if n == nil {
		n = &node{id: req.GetNodeId()}
		rm.nodes[n.id] = n
		delete(rm.lost, n.id)
		rm.log.Info("node manager registered", "node", n.id, "user", who, "host", req.GetHostname(), "rack", req.GetRack(),
			"map_slots", req.GetMapSlots(), "reduce_slots", req.GetReduceSlots())
		rm.registered(n)
	}
	if n.admin == "" && rm.excludedNode(n) {
		// Registered excluded (or it came back): decommission it at once.
		n.admin = NodeDecommissioning
		rm.log.Info("node manager decommissioning (it is in hosts_exclude_file)", "node", n.id, "host", req.GetHostname())
	}
	n.host, n.rack, n.shuffleAddr, n.httpAddr = req.GetHostname(), req.GetRack(), req.GetShuffleAddr(), req.GetHttpAddr()
	n.mapSlots, n.reduceSlots, n.lastSeen = int(req.GetMapSlots()), int(req.GetReduceSlots()), time.Now()

	for _, r := range req.GetTasks() {
		rm.report(n, r, resp)
	}
	resp.KillAttempts, n.kills = n.kills, nil
	resp.FinishedJobs, n.cleanup = n.cleanup, nil
	resp.AggregateLogs, n.aggregate = n.aggregate, nil
	if n.admin != "" {
		// Decommissioning: no new containers; what runs finishes.
		rm.decommissionTick()
		return resp, nil
	}
	rm.schedule(n, int(req.GetFreeMapSlots())-countKind(resp, true), int(req.GetFreeReduceSlots())-countKind(resp, false), resp)
	return resp, nil
}

func countKind(resp *mrpb.HeartbeatResponse, isMap bool) int {
	n := 0
	for _, l := range resp.Launches {
		if l.IsMap == isMap {
			n++
		}
	}
	return n
}

// report applies one task report.
func (rm *ResourceManager) report(n *node, r *mrpb.TaskReport, resp *mrpb.HeartbeatResponse) {
	j := rm.jobs[r.GetJobId()]
	if j != nil && r.GetState() != mrpb.TaskState_TASK_RUNNING {
		defer j.notify() // a finished map, or an attempt gone
	}
	if j != nil {
		recordAttempt(j, r)
	}
	if j == nil || j.terminal() {
		if r.GetState() == mrpb.TaskState_TASK_RUNNING {
			resp.KillAttempts = append(resp.KillAttempts, r.GetAttemptId())
		}
		return
	}
	ts := j.tasks(r.GetIsMap())
	if int(r.GetIndex()) >= len(ts) || r.GetIndex() < 0 {
		return
	}
	t := ts[r.GetIndex()]
	a := t.running[r.GetAttemptId()]
	if a != nil && a.node != n.id {
		// Only the node an attempt was launched on reports it: another
		// node's word that it succeeded (and where its output is) counts
		// for nothing.
		rm.log.Warn("task report from a node the attempt does not run on ignored", "attempt", a.id, "node", n.id, "runs_on", a.node)
		return
	}
	if a == nil {
		// Not an attempt we are waiting for (e.g. its node was declared
		// lost and it was rescheduled): stop it if it still runs.
		if r.GetState() == mrpb.TaskState_TASK_RUNNING {
			resp.KillAttempts = append(resp.KillAttempts, r.GetAttemptId())
		}
		return
	}
	switch r.GetState() {
	case mrpb.TaskState_TASK_RUNNING:
		t.read = r.GetBytesRead()
		if !j.active() {
			resp.KillAttempts = append(resp.KillAttempts, a.id)
		}
	case mrpb.TaskState_TASK_SUCCEEDED:
		delete(t.running, a.id)
		if t.state == taskDone || !j.active() {
			rm.maybeAbort(j)
			return
		}
		t.state, t.done, t.doneAddr, t.read = taskDone, a, n.shuffleAddr, 0
		for other := range t.running { // a duplicate attempt (none today; speculation later)
			n.kills = append(n.kills, other)
		}
		for _, c := range r.GetCounters() {
			j.counters.Add(c.GetGroup(), c.GetName(), c.GetValue())
		}
		if t.isMap {
			j.mapsDone++
		} else {
			j.reducesDone++
		}
		rm.maybeFinish(j)
	case mrpb.TaskState_TASK_FAILED, mrpb.TaskState_TASK_KILLED:
		delete(t.running, a.id)
		if len(t.running) == 0 && t.state == taskRunning {
			t.state, t.read = taskPending, 0
		}
		if !j.active() {
			rm.maybeAbort(j)
			return
		}
		if r.GetState() == mrpb.TaskState_TASK_KILLED {
			return
		}
		rm.taskFailed(j, t, n, r)
	}
}

func (rm *ResourceManager) taskFailed(j *job, t *task, n *node, r *mrpb.TaskReport) {
	kind := "reduce"
	failed := mapreduce.FailedReduces
	if t.isMap {
		kind, failed = "map", mapreduce.FailedMaps
	}
	j.counters.Add(mapreduce.GroupJob, failed, 1)
	rm.log.Warn("task attempt failed", "attempt", r.GetAttemptId(), "node", n.id, "err", r.GetError())
	if fa := r.GetFetchFailedAttempt(); fa != "" && int(r.GetFetchFailedMap()) < len(j.maps) {
		// The map's output could not be fetched: run the map again. The
		// reduce is not blamed for it.
		m := j.maps[r.GetFetchFailedMap()]
		if m.state == taskDone && m.done.id == fa {
			rm.rerunMap(j, m)
		}
		t.fetchFailures++
		if t.fetchFailures >= rm.cfg.MaxFetchFailures {
			rm.endJob(j, mapreduce.StateFailed, fmt.Sprintf("%s task %d failed %d times fetching map output; last error: %s",
				kind, t.index, t.fetchFailures, r.GetError()))
		}
		return
	}
	t.failures++
	t.lastErr = r.GetError()
	t.failedOn[n.id] = true
	if t.failures >= rm.cfg.MaxAttempts {
		rm.endJob(j, mapreduce.StateFailed, fmt.Sprintf("%s task %d failed %d times; last error: %s",
			kind, t.index, t.failures, t.lastErr))
	}
}

// schedule asks the policy what n should run and builds the launches.
func (rm *ResourceManager) schedule(n *node, freeMaps, freeReduces int, resp *mrpb.HeartbeatResponse) {
	if freeMaps <= 0 && freeReduces <= 0 {
		return
	}
	var views []sched.Job
	for _, j := range rm.order {
		if j.active() {
			views = append(views, j.view(n, len(rm.nodes)))
		}
	}
	if len(views) == 0 {
		return
	}
	sn := sched.Node{ID: n.id, Host: n.host, Rack: n.rack, FreeMapSlots: max(0, freeMaps), FreeReduceSlots: max(0, freeReduces)}
	for _, as := range rm.policy.Assign(sn, views) {
		j := rm.jobs[as.JobID]
		if j == nil || !j.active() {
			continue
		}
		ts := j.tasks(as.IsMap)
		if as.Index < 0 || as.Index >= len(ts) || ts[as.Index].state != taskPending {
			continue
		}
		resp.Launches = append(resp.Launches, rm.launch(j, ts[as.Index], n, as.Locality))
	}
}

func (rm *ResourceManager) launch(j *job, t *task, n *node, loc sched.Locality) *mrpb.TaskLaunch {
	a := &attempt{id: attemptID(j.id, t.isMap, t.index, t.launched), node: n.id, start: time.Now(),
		host: n.host, httpAddr: n.httpAddr, state: attemptRunning}
	t.launched++
	t.attempts = append(t.attempts, a)
	if j.started.IsZero() {
		j.started = a.start
	}
	t.state = taskRunning
	t.running[a.id] = a
	l := &mrpb.TaskLaunch{JobId: j.id, AttemptId: a.id, IsMap: t.isMap, Index: int32(t.index), App: j.app,
		Params: j.params, Output: j.output, NumReduces: int32(j.numReduces), NumMaps: int32(len(j.maps)), User: j.user,
		ShuffleSecret: j.secret}
	if t.isMap {
		l.Split = j.splits[t.index]
		j.counters.Add(mapreduce.GroupJob, mapreduce.LaunchedMaps, 1)
		cached := slices.Contains(j.cache.hostsOf(l.Split), n.host)
		for _, c := range localityCounters(loc, cached) {
			j.counters.Add(mapreduce.GroupJob, c, 1)
		}
		if cached {
			loc = sched.CacheLocal
		}
		rm.mapLaunches.WithLabelValues(loc.String()).Inc()
	} else {
		j.counters.Add(mapreduce.GroupJob, mapreduce.LaunchedReduces, 1)
		l.MapOutputs = j.mapOutputs()
	}
	return l
}

// localityCounters names the job counters a map launch adds to. Whether
// it is cache-local is decided here, from the split's current cached
// hosts, for every policy alike, so the no-cache and DL baselines (which
// place by data locality only) are measured the same way as cachelocal.
// A cache-local map is node-local too: it counts in DATA_LOCAL_MAPS as
// well as CACHE_LOCAL_MAPS, so DATA_LOCAL_MAPS keeps Hadoop's meaning.
func localityCounters(loc sched.Locality, cached bool) []string {
	if cached || loc == sched.CacheLocal {
		return []string{mapreduce.CacheLocalMaps, mapreduce.DataLocalMaps}
	}
	switch loc {
	case sched.NodeLocal:
		return []string{mapreduce.DataLocalMaps}
	case sched.RackLocal:
		return []string{mapreduce.RackLocalMaps}
	}
	return []string{mapreduce.OtherLocalMaps}
}

// mapOutputs locates the output of every finished map of j.
func (j *job) mapOutputs() []*mrpb.MapOutputLocation {
	var out []*mrpb.MapOutputLocation
	for _, m := range j.maps {
		if m.state == taskDone {
			out = append(out, &mrpb.MapOutputLocation{MapIndex: int32(m.index), AttemptId: m.done.id, ShuffleAddr: m.doneAddr})
		}
	}
	return out
}

// maxMapOutputsWait bounds a GetMapOutputs long poll.
const maxMapOutputsWait = 5 * time.Second

// GetMapOutputs tells a running reduce attempt where the finished maps'
// outputs are; an attempt the resource manager no longer waits for is
// told to stop. While the caller already knows every finished map, the
// answer waits (up to wait_ms) for the next one.
func (rm *ResourceManager) GetMapOutputs(ctx context.Context, req *mrpb.GetMapOutputsRequest) (*mrpb.GetMapOutputsResponse, error) {
	// Map-output locations are for the node managers running reduces.
	if _, err := rm.nodeCaller(ctx, fmt.Sprintf("map output query for attempt %q", req.GetAttemptId())); err != nil {
		return nil, err
	}
	wait := min(time.Duration(req.GetWaitMs())*time.Millisecond, maxMapOutputsWait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		rm.mu.Lock()
		j, err := rm.lookup(req.GetJobId())
		if err != nil {
			rm.mu.Unlock()
			return nil, err
		}
		resp := &mrpb.GetMapOutputsResponse{NumMaps: int32(len(j.maps))}
		if !j.active() || !j.waitsFor(req.GetAttemptId()) {
			resp.Stop = true
			rm.mu.Unlock()
			return resp, nil
		}
		resp.Outputs = j.mapOutputs()
		changed := j.changed
		rm.mu.Unlock()
		if len(resp.Outputs) != int(req.GetKnown()) || wait <= 0 {
			return resp, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return resp, nil
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-rm.stop:
			return nil, status.Error(codes.Unavailable, errStopped.Error())
		}
	}
}
