package main

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"smarth/internal/cluster"
	"smarth/internal/testcluster"
	"smarth/internal/testenv"
)

// TestClusterUpResourceManagerHTTP: `smarth cluster up --resourcemanager-http
// ADDR` puts the resource manager's console on ADDR (it answers there), and
// the namenode's console is told where it is (resourcemanager_web).
func TestClusterUpResourceManagerHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	// Free until the resource manager binds it, seconds later: below the
	// ephemeral range, where no outgoing connection takes it meanwhile.
	rmWeb := testenv.RestartablePorts(t, 1)[0]
	out, err := exec.Command(bin, "cluster", "up", "--home", home, "--datanodes", "1", "--auth", "simple", "--nodemanagers",
		"--namenode-addr", "127.0.0.1:0", "--namenode-http", "127.0.0.1:0", "--resourcemanager-http", rmWeb).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster up: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "web http://"+rmWeb+"/") {
		t.Errorf("cluster up does not report the resource manager's web UI at %s:\n%s", rmWeb, out)
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(fmt.Sprintf("http://%s/healthz", rmWeb)); code != http.StatusOK {
		t.Errorf("resource manager console at %s: %d %s", rmWeb, code, body)
	}
	st, err := cluster.LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get("http://" + st.NameNodeHTTP + "/conf"); code != http.StatusOK || !strings.Contains(body, rmWeb) {
		t.Errorf("namenode /conf (%d) does not name the resource manager's web address %s:\n%s", code, rmWeb, body)
	}
}
