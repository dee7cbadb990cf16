package resourcemanager

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/sched"
)

// Task states inside the resource manager.
const (
	taskPending = iota
	taskRunning
	taskDone
)

type attempt struct {
	id    string
	node  string // node ID
	start time.Time
	// Where it ran, kept after the node is gone: its logs are served by
	// that node manager's HTTP.
	host, httpAddr string
	state          string // attempt* below
	end            time.Time
	err            string
}

type task struct {
	isMap    bool
	index    int
	state    int
	launched int // attempts launched, for attempt numbering
	failures int // failed attempts (the job fails at MaxAttempts)
	// fetchFailures counts a reduce's attempts that failed fetching map
	// output (the job fails at MaxFetchFailures).
	fetchFailures int
	lastErr       string
	running       map[string]*attempt // attempt ID -> attempt
	attempts      []*attempt          // every attempt launched, oldest first (job status, logs)
	done          *attempt            // the winning attempt
	doneAddr      string              // shuffle address of done's node (maps)
	failedOn      map[string]bool     // node IDs where an attempt failed
	read          int64               // input bytes consumed by the running attempt
}

type job struct {
	id, name, app, user, output string
	params                      map[string]string
	numReduces                  int
	seq                         int64
	splits                      []*mrpb.Split
	inputBytes                  int64
	maps, reduces               []*task
	mapsDone, reducesDone       int
	slowStartMaps               int    // maps done before reduces may launch
	state                       string // mapreduce.State*
	ending                      string // FAILED or KILLED once decided, until cleanup is done
	endedAt                     time.Time
	cleaning                    bool // commit or abort under way
	err                         string
	counters                    mapreduce.Counters
	submitted, finished         time.Time
	started                     time.Time // first attempt launched
	// changed is closed (and replaced) whenever the job's tasks change,
	// waking GetMapOutputs long polls.
	changed chan struct{}
	cache   jobCache // what the namenode says of the job's input in memory
	// secret is the job's shuffle secret: given to its tasks only, it
	// signs their map output fetches (shuffle package).
	secret []byte
	// maxRunningMaps is the job's share of the map slots (job param
	// max_running_maps; 0 = no cap): seed 003's workloads give each of
	// four apps 25% of the cluster.
	maxRunningMaps int
	// spec is the submission without its splits, for the job history.
	spec *mrpb.SubmitJobRequest
}

// MaxRunningMapsParam is the job parameter that caps how many of a job's
// maps run at once.
const MaxRunningMapsParam = "max_running_maps"

func maxRunningMaps(params map[string]string) (int, error) {
	v, ok := params[MaxRunningMapsParam]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("job parameter %s=%q: want a whole number of maps >= 0 (0 = no cap)", MaxRunningMapsParam, v)
	}
	return n, nil
}

// runningMaps counts j's maps with an attempt running.
func (j *job) runningMaps() int {
	n := 0
	for _, t := range j.maps {
		if len(t.running) > 0 {
			n++
		}
	}
	return n
}

// notify wakes whoever waits for a change in j.
func (j *job) notify() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *job) terminal() bool {
	switch j.state {
	case mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled:
		return true
	}
	return false
}

// active: tasks may still be scheduled.
func (j *job) active() bool { return !j.terminal() && j.ending == "" && !j.cleaning }

func (j *job) runningAttempts() int {
	n := 0
	for _, ts := range [][]*task{j.maps, j.reduces} {
		for _, t := range ts {
			n += len(t.running)
		}
	}
	return n
}

// waitsFor: attempt is a running reduce attempt of j.
func (j *job) waitsFor(attempt string) bool {
	for _, t := range j.reduces {
		if t.running[attempt] != nil {
			return true
		}
	}
	return false
}

func (j *job) tasks(isMap bool) []*task {
	if isMap {
		return j.maps
	}
	return j.reduces
}

func newJob(id string, seq int64, req *mrpb.SubmitJobRequest, now time.Time, slowStart float64) *job {
	j := &job{id: id, seq: seq, name: req.GetName(), app: req.GetApp(), user: req.GetUser(),
		output: req.GetOutput(), params: req.GetParams(), numReduces: int(req.GetNumReduces()),
		splits: req.GetSplits(), state: mapreduce.StateRunning, submitted: now, changed: make(chan struct{})}
	for i, s := range j.splits {
		j.maps = append(j.maps, &task{isMap: true, index: i, running: map[string]*attempt{}, failedOn: map[string]bool{}})
		j.inputBytes += s.GetLength()
	}
	for i := range j.numReduces {
		j.reduces = append(j.reduces, &task{index: i, running: map[string]*attempt{}, failedOn: map[string]bool{}})
	}
	j.slowStartMaps = min(len(j.maps), int(math.Ceil(slowStart*float64(len(j.maps)))))
	j.cache = initialCache(j.splits)
	return j
}

func attemptID(jobID string, isMap bool, index, n int) string {
	kind := "r"
	if isMap {
		kind = "m"
	}
	return fmt.Sprintf("attempt_%s_%s_%06d_%d", jobID, kind, index, n)
}

// view is the scheduler's read-only picture of j for a node.
func (j *job) view(n *node, liveNodes int) sched.Job {
	v := sched.Job{ID: j.id, Seq: j.seq, RunningTasks: j.runningAttempts(), CachedFraction: j.cache.fraction}
	if j.maxRunningMaps > 0 {
		v.MapLimit = j.maxRunningMaps - j.runningMaps()
	}
	for _, t := range j.maps {
		if j.maxRunningMaps > 0 && v.MapLimit <= 0 {
			break // at its share: no map may launch until one ends
		}
		if t.state != taskPending || avoid(t, n, liveNodes) {
			continue
		}
		s := j.splits[t.index]
		v.PendingMaps = append(v.PendingMaps, sched.MapTask{Index: t.index, Hosts: s.GetHosts(), Racks: s.GetRacks(),
			CachedHosts: j.cache.hostsOf(s)})
	}
	// Reduces launched before every map is done fetch the rest as the
	// maps finish (GetMapOutputs).
	if j.mapsDone >= j.slowStartMaps {
		for _, t := range j.reduces {
			if t.state == taskPending && !avoid(t, n, liveNodes) {
				v.PendingReduces = append(v.PendingReduces, t.index)
			}
		}
	}
	return v
}

// avoid: a retry goes to another node while there is one it has not
// failed on.
func avoid(t *task, n *node, liveNodes int) bool {
	return t.failedOn[n.id] && len(t.failedOn) < liveNodes
}

func (j *job) status() *mrpb.JobStatus {
	st := &mrpb.JobStatus{JobId: j.id, Name: j.name, App: j.app, User: j.user, State: j.state, Error: j.err,
		MapsTotal: int32(len(j.maps)), MapsDone: int32(j.mapsDone), ReducesTotal: int32(len(j.reduces)),
		ReducesDone: int32(j.reducesDone), InputBytes: j.inputBytes, SubmitTimeMs: j.submitted.UnixMilli(),
		Output: j.output, CachedFraction: j.cache.fraction}
	if !j.started.IsZero() {
		st.StartTimeMs = j.started.UnixMilli()
	}
	if !j.finished.IsZero() {
		st.FinishTimeMs = j.finished.UnixMilli()
	}
	for _, t := range j.maps {
		if t.state == taskRunning {
			st.MapsRunning++
			st.BytesRead += t.read
		}
	}
	for _, t := range j.reduces {
		if t.state == taskRunning {
			st.ReducesRunning++
		}
	}
	snap := j.counters.Snapshot()
	st.BytesRead += snap[mapreduce.GroupInput][mapreduce.BytesRead]
	for _, g := range mapreduce.CounterGroups(snap) {
		for _, name := range sortedKeys(snap[g]) {
			st.Counters = append(st.Counters, &mrpb.Counter{Group: g, Name: name, Value: snap[g][name]})
		}
	}
	return st
}
