package mrtest_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/nodemanager"
	"smarth/internal/syncbuf"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// TestSecureRMRefusesForeignNodeManager: on a secure DFS with a secure
// resource manager, the cluster's node managers (the service credential)
// register, and a real node manager whose token is mallory's — a valid
// credential of the cluster, but not a node-manager user — never does,
// says why once, and is given no task of the job that runs meanwhile.
func TestSecureRMRefusesForeignNodeManager(t *testing.T) {
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	reg := mapreduce.NewRegistry(apps.All()...)
	mr := mrtest.Start(t, mrtest.Options{DFS: dfs, Registry: reg}) // waits for its 3 node managers to register

	var logs syncbuf.Buffer
	nc := nodemanager.DefaultConfig()
	nc.ResourceManager, nc.NameNode, nc.Registry = mr.RM().RPCAddr(), dfs.NameNodeAddr(), reg
	nc.Hostname, nc.WorkDir, nc.HeartbeatInterval = "rogue", filepath.Join(t.TempDir(), "nm"), 20*time.Millisecond
	nc.TokenFile, nc.Wire = dfs.TokenFile(t, "mallory"), dfs.Wire(t, "nm-rogue")
	rogue, err := nodemanager.New(nc, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rogue.Start(); err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()

	w, err := mr.FS().Create(t.Context(), "/in/text", mapreduce.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(strings.Repeat("to be or not to be\n", 2000))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mr.Client().Run(t.Context(), "wordcount", map[string]string{"input": "/in", "output": "/out", "reduces": "2"}); err != nil {
		t.Fatalf("job on the secure cluster: %v", err)
	}
	for _, n := range mr.RM().Nodes() {
		if n.Host == "rogue" {
			t.Fatalf("a node manager proving mallory registered: %+v", n)
		}
	}
	if got := len(mr.RM().Nodes()); got != 3 {
		t.Errorf("%d nodes registered, want the cluster's 3", got)
	}
	out := logs.String()
	if n := strings.Count(out, "the resource manager refuses this node manager"); n != 1 {
		t.Errorf("rogue node manager logged its refusal %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "user mallory is not a node-manager user") {
		t.Errorf("rogue node manager's log does not say why it is refused:\n%s", out)
	}
}
