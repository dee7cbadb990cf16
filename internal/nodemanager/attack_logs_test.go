package nodemanager_test

import (
	"fmt"
	"io"
	"net/http"
	"os/user"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// TestAttackTaskLogsOfAnotherUser is issue 23's hole 5: a node manager
// served every job's task logs, and listed every job and running
// attempt, to anyone who asked (`http://NM/logs/JOB/ATTEMPT/stderr`
// needed no credential). Now they go to the job's owner and the
// resource manager's admins only: no credential is 401 (an asserted
// user.name is no credential on a secure cluster), another user's is 403
// and the log index hides the job from them; the owner (control) reads
// the log.
func TestAttackTaskLogsOfAnotherUser(t *testing.T) {
	dfs, mr := dfsCluster(t, nil)
	owner := mr.FS()
	writeText(t, owner, "/in/text", 200)
	jc := mr.Client()
	id, err := jc.Submit(t.Context(), "wordcount", map[string]string{"input": "/in", "output": "/out", "reduces": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := jc.Wait(t.Context(), id); err != nil || res.State != mapreduce.StateSucceeded {
		t.Fatalf("job: %+v, %v", res, err)
	}
	st, err := jc.Status(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var at *mrpb.AttemptStatus
	for _, task := range st.GetTasks() {
		for _, a := range task.GetAttempts() {
			if a.GetNodeHttpAddr() != "" && at == nil {
				at = a
			}
		}
	}
	if at == nil {
		t.Fatalf("job %s: no attempt on a node manager with a web port", id)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	nm := "http://" + at.GetNodeHttpAddr()
	logURL := fmt.Sprintf("%s/logs/%s/%s/stderr", nm, id, at.GetAttemptId())
	get := func(u, cred string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if cred != "" {
			req.Header.Set("Authorization", "Bearer "+cred)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const logLine = "task attempt ended"
	for _, u := range []string{logURL, logURL + "?user.name=" + me.Username, nm + "/logs/" + id + "/", nm + "/logs/", nm + "/"} {
		if code, body := get(u, ""); code != http.StatusUnauthorized || strings.Contains(body, logLine) || strings.Contains(body, at.GetAttemptId()) {
			t.Errorf("GET %s without a credential: %d, want 401\n%s", u, code, body)
		}
	}
	bob := dfs.Credential("bob")
	for _, u := range []string{logURL, nm + "/logs/" + id + "/"} {
		if code, body := get(u, bob); code != http.StatusForbidden || strings.Contains(body, logLine) || strings.Contains(body, at.GetAttemptId()) {
			t.Errorf("GET %s as bob: %d, want 403\n%s", u, code, body)
		}
	}
	if code, body := get(nm+"/logs/", bob); code != http.StatusOK || strings.Contains(body, id) {
		t.Errorf("GET /logs/ as bob: %d, lists %s: %v", code, id, strings.Contains(body, id))
	}
	mine := dfs.Credential(me.Username)
	if code, body := get(logURL, mine); code != http.StatusOK || !strings.Contains(body, logLine) {
		t.Errorf("GET %s as the job's owner: %d, want 200 with its log\n%s", logURL, code, body)
	}
	if code, body := get(nm+"/logs/", mine); code != http.StatusOK || !strings.Contains(body, id) {
		t.Errorf("GET /logs/ as the job's owner: %d, want %s listed", code, id)
	}
}
