package resourcemanager_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/testcluster/mrtest"
)

// gate is a map-only app whose maps write a line to their stderr and
// then wait until the test opens the gate: a job that is running for as
// long as the test needs.
type gate struct{ open chan struct{} }

func (gate) Name() string              { return "gate" }
func (gate) Description() string       { return "maps that wait for the test" }
func (gate) Params() []mapreduce.Param { return nil }
func (g gate) Build(p map[string]string) (*mapreduce.Job, error) {
	return &mapreduce.Job{Params: p, Input: []string{p["input"]}, Output: p["output"],
		NewMapper: func() mapreduce.Mapper { return gateMapper(g) }}, nil
}

type gateMapper gate

func (g gateMapper) Setup(ctx mapreduce.TaskContext) error {
	fmt.Fprintf(mapreduce.TaskStderr(ctx), "hello from map %d\n", ctx.TaskIndex())
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	return nil
}

func (gateMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	return out.Emit(line, nil)
}

// asOwner names the test's OS user, who submits the jobs, on a URL: the
// simple-mode cluster's console shows a job only to its owner.
func asOwner(t *testing.T, u string) string {
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(u, "?") {
		return u + "&user.name=" + url.QueryEscape(me.Username)
	}
	return u + "?user.name=" + url.QueryEscape(me.Username)
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(asOwner(t, url))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %s, not JSON: %v\n%s", url, resp.Status, err, b)
	}
	return resp.StatusCode
}

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(asOwner(t, url))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type yarnApp struct {
	ID, User, Name, State, FinalStatus, TrackingURL string
	Progress                                        float64
	StartedTime, LaunchTime, FinishedTime           int64
	ElapsedTime                                     int64
}

func (a *yarnApp) UnmarshalJSON(b []byte) error {
	var m struct {
		ID           string  `json:"id"`
		User         string  `json:"user"`
		Name         string  `json:"name"`
		State        string  `json:"state"`
		FinalStatus  string  `json:"finalStatus"`
		TrackingURL  string  `json:"trackingUrl"`
		Progress     float64 `json:"progress"`
		StartedTime  int64   `json:"startedTime"`
		LaunchTime   int64   `json:"launchTime"`
		FinishedTime int64   `json:"finishedTime"`
		ElapsedTime  int64   `json:"elapsedTime"`
	}
	err := json.Unmarshal(b, &m)
	*a = yarnApp(m)
	return err
}

// TestRESTLogsAndPagesOfRunningAndFinishedJob follows one job through
// the resource manager's YARN-shaped REST API and web pages while it
// runs and after it succeeded, and reads a successful attempt's stderr
// from the node manager that ran it.
func TestRESTLogsAndPagesOfRunningAndFinishedJob(t *testing.T) {
	root := t.TempDir()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(root, "fs"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	for i := range 2 {
		os.WriteFile(filepath.Join(lfs.Root, "in", fmt.Sprintf("f%d", i)), []byte("a\nb\n"), 0o644)
	}
	g := gate{open: make(chan struct{})}
	mr := mrtest.Start(t, mrtest.Options{FS: lfs, Registry: mapreduce.NewRegistry(g), Hosts: []string{"n1", "n2"}})
	jc := mr.Client()
	web := "http://" + mr.RM().HTTPAddr()
	id, err := jc.Submit(t.Context(), "gate", map[string]string{"input": "/in", "output": "/out"})
	if err != nil {
		t.Fatal(err)
	}
	mr.WaitFor(t, "both maps to run", func() bool {
		st, err := jc.Status(t.Context(), id)
		return err == nil && st.GetMapsRunning() == 2
	})

	var one struct{ App yarnApp }
	if code := getJSON(t, web+"/ws/v1/cluster/apps/"+id, &one); code != 200 {
		t.Fatalf("GET app: %d", code)
	}
	a := one.App
	if a.ID != id || a.State != "RUNNING" || a.FinalStatus != "UNDEFINED" || a.StartedTime == 0 || a.LaunchTime < a.StartedTime ||
		a.FinishedTime != 0 || a.ElapsedTime < 0 || !strings.HasSuffix(a.TrackingURL, "/job/"+id) || a.User == "" {
		t.Errorf("running app = %+v", a)
	}
	var list struct{ Apps struct{ App []yarnApp } }
	getJSON(t, web+"/ws/v1/cluster/apps?states=RUNNING", &list)
	if len(list.Apps.App) != 1 || list.Apps.App[0].ID != id {
		t.Errorf("apps?states=RUNNING = %+v, want just %s", list.Apps.App, id)
	}
	getJSON(t, web+"/ws/v1/cluster/apps?states=FINISHED", &list)
	if len(list.Apps.App) != 0 {
		t.Errorf("apps?states=FINISHED while the job runs = %+v", list.Apps.App)
	}
	if code, page := getText(t, web+"/job/"+id); code != 200 || !strings.Contains(page, "attempt_"+id+"_m_000000_0") {
		t.Errorf("job page while running: %d\n%s", code, page)
	}
	// A node manager's page lists the running attempts to their job's
	// owner only (another user sees the node's slots, not the jobs).
	running, err := jc.Status(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	at := running.GetTasks()[0].GetAttempts()[0]
	nmPage := "http://" + at.GetNodeHttpAddr() + "/"
	if code, page := getText(t, nmPage); code != 200 || !strings.Contains(page, at.GetAttemptId()) {
		t.Errorf("node manager page as the job's owner: %d, want attempt %s listed", code, at.GetAttemptId())
	}
	if resp, err := http.Get(nmPage + "?user.name=bob"); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), id) {
			t.Errorf("node manager page as bob: %d, lists job %s: %v", resp.StatusCode, id, strings.Contains(string(b), id))
		}
	}

	close(g.open)
	if res, err := jc.Wait(t.Context(), id); err != nil || res.State != mapreduce.StateSucceeded {
		t.Fatalf("job: %+v, %v", res, err)
	}
	getJSON(t, web+"/ws/v1/cluster/apps/"+id, &one)
	a = one.App
	if a.State != "FINISHED" || a.FinalStatus != "SUCCEEDED" || a.Progress != 100 || a.FinishedTime < a.LaunchTime ||
		a.ElapsedTime != a.FinishedTime-a.StartedTime {
		t.Errorf("finished app = %+v", a)
	}
	var missing map[string]map[string]string
	if code := getJSON(t, web+"/ws/v1/cluster/apps/job_0_0", &missing); code != 404 || missing["RemoteException"]["exception"] != "NotFoundException" {
		t.Errorf("unknown app: %d %v", code, missing)
	}
	if jobs, err := jc.List(t.Context(), mapreduce.StateRunning); err != nil || len(jobs) != 0 {
		t.Errorf("jobs RUNNING after the job ended: %v, %v", jobs, err)
	}
	if jobs, err := jc.List(t.Context(), mapreduce.StateSucceeded); err != nil || len(jobs) != 1 {
		t.Errorf("jobs SUCCEEDED: %v, %v", jobs, err)
	}

	st, err := jc.Status(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.GetStartTimeMs() == 0 || len(st.GetTasks()) != 2 {
		t.Fatalf("status: start %d, %d tasks", st.GetStartTimeMs(), len(st.GetTasks()))
	}
	for _, task := range st.GetTasks() {
		checkTaskLog(t, id, task)
	}
	if code, page := getText(t, web+"/job/"+id); code != 200 || !strings.Contains(page, "/stderr") {
		t.Errorf("job page when finished: %d\n%s", code, page)
	}
}

func checkTaskLog(t *testing.T, id string, task *mrpb.TaskStatus) {
	t.Helper()
	if len(task.GetAttempts()) != 1 || task.GetState() != "SUCCEEDED" {
		t.Fatalf("task %d: %v", task.GetIndex(), task)
	}
	at := task.GetAttempts()[0]
	if at.GetState() != "SUCCEEDED" || at.GetNodeHttpAddr() == "" || at.GetFinishTimeMs() < at.GetStartTimeMs() {
		t.Fatalf("attempt: %v", at)
	}
	url := fmt.Sprintf("http://%s/logs/%s/%s/stderr", at.GetNodeHttpAddr(), id, at.GetAttemptId())
	code, log := getText(t, url)
	want := fmt.Sprintf("hello from map %d", task.GetIndex())
	if code != 200 || !strings.Contains(log, want) || !strings.Contains(log, "task attempt ended") ||
		!strings.Contains(log, "state=TASK_SUCCEEDED") {
		t.Errorf("GET %s: %d\n%s\nwant %q and the attempt's end", url, code, log, want)
	}
	if code, _ := getText(t, fmt.Sprintf("http://%s/logs/%s/%s/..%%2f..%%2fetc", at.GetNodeHttpAddr(), id, at.GetAttemptId())); code != 404 {
		t.Errorf("a log name outside the attempt's files: %d, want 404", code)
	}

}
