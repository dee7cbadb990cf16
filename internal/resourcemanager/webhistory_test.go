package resourcemanager

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
)

// webRM is historyRM with its console on a free port.
func webRM(t *testing.T, lfs *mapreduce.LocalFS, dir string) *ResourceManager {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple
	cfg.FS, cfg.Scheduler, cfg.HistoryDir = lfs, "fifo", dir
	cfg.RPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
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

func getPage(t *testing.T, rm *ResourceManager, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + rm.HTTPAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestConsoleReadsHistoryAfterRestart: after the resource manager
// restarts, its console's job list, job page and REST app show a job
// that ended before, from the history store, to its owner, with its
// counters and attempts; the job page links the aggregated logs.
func TestConsoleReadsHistoryAfterRestart(t *testing.T) {
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "history")
	rm := webRM(t, lfs, dir)
	id := submit(t, rm, 1, 0)
	n := &fakeNode{t: t, rm: rm, id: "n1"}
	for _, l := range n.heartbeat(1, 0) {
		n.done(l)
	}
	n.heartbeat(0, 0)
	waitCond(t, "job "+id+" to end", func() bool { return terminalState(getJob(t, rm, "tester", id).GetState()) })
	rm.Close()

	rm = webRM(t, lfs, dir)
	code, body := getPage(t, rm, "/?user.name=tester")
	if code != http.StatusOK || !strings.Contains(body, id) || !strings.Contains(body, mapreduce.StateSucceeded) {
		t.Errorf("job list after the restart (%d) does not show %s SUCCEEDED:\n%s", code, id, body)
	}
	code, body = getPage(t, rm, "/job/"+id+"?user.name=tester")
	for _, want := range []string{mapreduce.StateSucceeded, mapreduce.LaunchedMaps, "attempt_" + id + "_m_000000_0", "/app-logs/tester/" + id} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("job page after the restart (%d) lacks %q:\n%s", code, want, body)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Errorf("the page of a finished job reloads itself")
	}
	if _, list := getPage(t, rm, "/?user.name=tester"); !strings.Contains(list, `http-equiv="refresh"`) {
		t.Errorf("the job list does not reload itself")
	}
	code, body = getPage(t, rm, "/ws/v1/cluster/apps/"+id+"?user.name=tester")
	if code != http.StatusOK || !strings.Contains(body, `"finalStatus": "SUCCEEDED"`) {
		t.Errorf("REST app after the restart (%d): %s", code, body)
	}
	if code, body = getPage(t, rm, "/job/"+id+"?user.name=mallory"); code == http.StatusOK && strings.Contains(body, mapreduce.LaunchedMaps) {
		t.Errorf("mallory sees tester's job page from the history")
	}
}
