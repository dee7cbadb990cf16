package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// jobRun runs `smarth job args...` and returns stdout, the exit status
// and the error text.
func jobRun(args ...string) (string, int, string) {
	return cliRun("", append([]string{"job"}, args...)...)
}

// TestJobDetachStatusListAndLogs is the operator's path: submit detached,
// follow with status, find the job by state, read a successful map's
// stderr from the node manager that ran it.
func TestJobDetachStatusListAndLogs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	nn := c.NameNodeAddr()
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, c.Client(t).User()))
	mr := mrtest.Start(t, mrtest.Options{DFS: c, Hosts: []string{testcluster.Hostname(0)},
		Registry: mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)})
	rm := mr.RM().RPCAddr()
	local := filepath.Join(t.TempDir(), "words.txt")
	os.WriteFile(local, []byte("a b c\nd e a\n"), 0o644)
	if _, code, msg := fsRun("--namenode", nn, "put", local, "/words.txt"); code != 0 {
		t.Fatalf("put: %s", msg)
	}
	at := []string{"--resourcemanager", rm, "--namenode", nn}
	out, code, msg := jobRun(append([]string{"run", "wordcount", "--detach", "--input", "/words.txt", "--output", "/wc"}, at...)...)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "job_") || strings.Contains(id, "\n") {
		t.Fatalf("run --detach: exit %d %q %s; want the job ID alone", code, out, msg)
	}
	var status string
	mr.WaitFor(t, "the detached job to succeed", func() bool {
		status, _, _ = jobRun(append([]string{"status", id}, at...)...)
		return strings.Contains(status, ": SUCCEEDED,")
	})
	for _, want := range []string{"submitted 20", "started 20", "tracking URL: http://", "/job/" + id, "m_000000", "attempt_" + id + "_m_000000_0",
		"MAP_OUTPUT_RECORDS=", "TASK", "ATTEMPT STATE"} {
		if !strings.Contains(status, want) {
			t.Errorf("job status lacks %q:\n%s", want, status)
		}
	}
	if out, _, _ := jobRun(append([]string{"list", "--state", "succeeded"}, at...)...); !strings.Contains(out, id) {
		t.Errorf("list --state succeeded:\n%s", out)
	}
	if out, _, _ := jobRun(append([]string{"list", "--state", "RUNNING,FAILED"}, at...)...); strings.Contains(out, id) {
		t.Errorf("list --state RUNNING,FAILED shows the finished job:\n%s", out)
	}
	out, code, msg = jobRun(append([]string{"logs", id, "m_000000"}, at...)...)
	// The header names where the log came from: the node, or (once the
	// node manager has uploaded it at the job's end, which may come
	// first) the aggregated copy in the job's /app-logs directory.
	head := "==> attempt_" + id + "_m_000000_0 on " + testcluster.Hostname(0) + " (SUCCEEDED) stderr"
	fromNode := strings.Contains(out, head+" <==")
	aggregated := regexp.MustCompile(regexp.QuoteMeta(head+", aggregated in /app-logs/") + `[^/]+/` + regexp.QuoteMeta(id) + `/[^ ]+ <==`).MatchString(out)
	if code != 0 || !(fromNode || aggregated) || !strings.Contains(out, "task attempt ended") {
		t.Errorf("logs m_000000: exit %d %s\n%s", code, msg, out)
	}
	for _, bad := range [][]string{{"list", "--state", "DONE"}, {"logs", id, "x9"}, {"logs"}, {"logs", id, "--file", "syslog"}} {
		if _, code, msg := jobRun(append(bad, at...)...); code != 2 {
			t.Errorf("job %s: exit %d (%s), want 2", strings.Join(bad, " "), code, msg)
		}
	}
	if _, code, msg := jobRun(append([]string{"logs", id, "r_000007"}, at...)...); code != 1 || !strings.Contains(msg, "no such task") {
		t.Errorf("logs of a task the job does not have: exit %d %s", code, msg)
	}

}
