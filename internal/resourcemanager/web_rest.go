package resourcemanager

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/webui"
)

// The resource manager's REST API in the shape of YARN's ResourceManager
// REST API (/ws/v1/cluster/...), for what smarth has: tools that read
// YARN's apps list (dashboards, scripts, Spark's and Oozie's pollers)
// read smarth's. A smarth job is a YARN application of type MAPREDUCE in
// queue "default"; fields YARN has and smarth does not (memory, vcores,
// AM containers) are left out rather than made up.

// yarnApp is one application as YARN's REST API names its fields.
type yarnApp struct {
	ID              string  `json:"id"`
	User            string  `json:"user"`
	Name            string  `json:"name"`
	Queue           string  `json:"queue"`
	State           string  `json:"state"`
	FinalStatus     string  `json:"finalStatus"`
	Progress        float64 `json:"progress"`
	TrackingUI      string  `json:"trackingUI"`
	TrackingURL     string  `json:"trackingUrl"`
	Diagnostics     string  `json:"diagnostics"`
	ClusterID       int64   `json:"clusterId"`
	ApplicationType string  `json:"applicationType"`
	ApplicationTags string  `json:"applicationTags"`
	StartedTime     int64   `json:"startedTime"`
	LaunchTime      int64   `json:"launchTime"`
	FinishedTime    int64   `json:"finishedTime"`
	ElapsedTime     int64   `json:"elapsedTime"`
	// RunningContainers is the job's running task attempts.
	RunningContainers int32 `json:"runningContainers"`
}

// yarnState maps a job state to YARN's application state and final
// status: a YARN application that ended is FINISHED (SUCCEEDED), FAILED
// or KILLED; until then its final status is UNDEFINED.
func yarnState(state string) (appState, final string) {
	switch state {
	case mapreduce.StateSucceeded:
		return "FINISHED", "SUCCEEDED"
	case mapreduce.StateFailed:
		return "FAILED", "FAILED"
	case mapreduce.StateKilled:
		return "KILLED", "KILLED"
	case mapreduce.StatePending:
		return "ACCEPTED", "UNDEFINED"
	}
	return "RUNNING", "UNDEFINED"
}

func (rm *ResourceManager) yarnApp(st *mrpb.JobStatus, clusterID int64, now time.Time) yarnApp {
	state, final := yarnState(st.GetState())
	a := yarnApp{ID: st.GetJobId(), User: st.GetUser(), Name: st.GetName(), Queue: "default", State: state,
		FinalStatus: final, TrackingUI: "History", TrackingURL: st.GetTrackingUrl(), Diagnostics: st.GetError(),
		ClusterID: clusterID, ApplicationType: "MAPREDUCE", ApplicationTags: st.GetApp(),
		StartedTime: st.GetSubmitTimeMs(), LaunchTime: st.GetStartTimeMs(), FinishedTime: st.GetFinishTimeMs(),
		RunningContainers: st.GetMapsRunning() + st.GetReducesRunning()}
	if final == "UNDEFINED" {
		a.TrackingUI = "ApplicationMaster"
	}
	if a.Name == "" {
		a.Name = st.GetApp()
	}
	end := st.GetFinishTimeMs()
	if end == 0 {
		end = now.UnixMilli()
	}
	a.ElapsedTime = end - st.GetSubmitTimeMs()
	a.Progress = jobProgress(st)
	return a
}

// jobProgress is the job's progress in percent: tasks done, with running
// maps counted by the input they have read.
func jobProgress(st *mrpb.JobStatus) float64 {
	if st.GetFinishTimeMs() != 0 && st.GetState() == mapreduce.StateSucceeded {
		return 100
	}
	total := st.GetMapsTotal() + st.GetReducesTotal()
	if total == 0 {
		return 0
	}
	done := float64(st.GetMapsDone() + st.GetReducesDone())
	return 100 * done / float64(total)
}

// clusterID is YARN's clusterId: when this resource manager started.
func (rm *ResourceManager) clusterID() int64 {
	t, err := time.ParseInLocation("20060102150405", rm.epoch, time.Local)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// serveApps answers GET /ws/v1/cluster/apps with YARN's filters: states
// (comma-separated YARN states), finalStatus, user, limit.
func (rm *ResourceManager) serveApps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var states []string
	for _, s := range strings.Split(q.Get("states")+","+q.Get("state"), ",") {
		if s = strings.ToUpper(strings.TrimSpace(s)); s != "" {
			states = append(states, s)
		}
	}
	limit := -1
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			yarnError(w, http.StatusBadRequest, "BadRequestException", "limit "+strconv.Quote(v)+": want a whole number")
			return
		}
		limit = n
	}
	list, err := rm.ListJobs(webui.CallerContext(r), &mrpb.ListJobsRequest{})
	if err != nil {
		webui.DenyCaller(w, err)
		return
	}
	now, cid := time.Now(), rm.clusterID()
	apps := []yarnApp{}
	for _, st := range list.GetJobs() {
		a := rm.yarnApp(st, cid, now)
		if (len(states) > 0 && !contains(states, a.State)) || (q.Get("finalStatus") != "" && !strings.EqualFold(q.Get("finalStatus"), a.FinalStatus)) ||
			(q.Get("user") != "" && q.Get("user") != a.User) {
			continue
		}
		if limit >= 0 && len(apps) >= limit {
			break
		}
		apps = append(apps, a)
	}
	writeJSON(w, map[string]any{"apps": map[string]any{"app": apps}})
}

// serveApp answers GET /ws/v1/cluster/apps/{id}.
func (rm *ResourceManager) serveApp(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st, err := rm.GetJob(webui.CallerContext(r), &mrpb.GetJobRequest{JobId: id})
	if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
		webui.DenyCaller(w, err)
		return
	}
	if err != nil {
		yarnError(w, http.StatusNotFound, "NotFoundException", "app with id: "+id+" not found")
		return
	}
	st.Tasks = nil
	writeJSON(w, map[string]any{"app": rm.yarnApp(st, rm.clusterID(), time.Now())})
}

// serveClusterMetrics answers GET /ws/v1/cluster/metrics with YARN's app
// and node counts (slots stand where YARN has containers).
func (rm *ResourceManager) serveClusterMetrics(w http.ResponseWriter, r *http.Request) {
	m := rm.snapshotMetrics()
	writeJSON(w, map[string]any{"clusterMetrics": map[string]any{
		"appsSubmitted": m.submitted, "appsCompleted": m.byState[mapreduce.StateSucceeded],
		"appsPending": m.byState[mapreduce.StatePending], "appsRunning": m.byState[mapreduce.StateRunning],
		"appsFailed": m.byState[mapreduce.StateFailed], "appsKilled": m.byState[mapreduce.StateKilled],
		"containersAllocated": m.mapsUsed + m.reducesUsed, "activeNodes": m.nodes,
		"totalMapSlots": m.mapSlots, "totalReduceSlots": m.reduceSlots,
	}})
}

// serveClusterInfo answers GET /ws/v1/cluster/info.
func (rm *ResourceManager) serveClusterInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"clusterInfo": map[string]any{"id": rm.clusterID(), "startedOn": rm.clusterID(),
		"state": "STARTED", "haState": "ACTIVE", "resourceManagerVersion": "smarth", "scheduler": rm.cfg.Scheduler}})
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// yarnError writes an error as YARN's REST API does.
func yarnError(w http.ResponseWriter, code int, exception, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"RemoteException": map[string]string{"exception": exception, "message": msg,
		"javaClassName": "org.apache.hadoop.yarn.webapp." + exception}})
}
