package resourcemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

// attemptsOn lists the job's attempts that ran or run on node id, with
// their states.
func attemptsOn(st *mrpb.JobStatus, id string) map[string]string {
	out := map[string]string{}
	for _, t := range st.GetTasks() {
		for _, a := range t.GetAttempts() {
			if a.GetNodeId() == id {
				out[a.GetAttemptId()] = a.GetState()
			}
		}
	}
	return out
}

// holdsOutput: a map of the job is done by an attempt on node id.
func holdsOutput(st *mrpb.JobStatus, id string) bool {
	for _, t := range st.GetTasks() {
		if !t.GetIsMap() || t.GetState() != "SUCCEEDED" {
			continue
		}
		for _, a := range t.GetAttempts() {
			if a.GetNodeId() == id && a.GetState() == "SUCCEEDED" {
				return true
			}
		}
	}
	return false
}

func nodeState(t *testing.T, c *miniCluster, id string) string {
	t.Helper()
	for _, n := range c.rm.Nodes() {
		if n.ID == id {
			return n.State
		}
	}
	return "gone"
}

// TestNodeManagerDecommissionIsGraceful: a node manager named in
// hosts_exclude_file and refreshed while a job's maps run on it is
// DECOMMISSIONING: the attempts running there finish (they succeed, not
// killed), no attempt is launched there afterwards, the job succeeds with
// the right output, and once the job no longer needs its map outputs the
// node is DECOMMISSIONED, as `job nodes` shows.
func TestNodeManagerDecommissionIsGraceful(t *testing.T) {
	exclude := filepath.Join(t.TempDir(), "exclude")
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) { cfg.HostsExcludeFile = exclude }, nil)
	want := c.writeInput(t, 3000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id, err := c.jc.Submit(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "2", "map_delay": "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	// A node with a map running on it.
	var victim string
	c.WaitFor(t, "a map attempt running on some node", func() bool {
		st, err := c.jc.Status(ctx, id)
		if err != nil {
			return false
		}
		for _, tk := range st.GetTasks() {
			for _, a := range tk.GetAttempts() {
				if tk.GetIsMap() && a.GetState() == "RUNNING" {
					victim = a.GetNodeId()
					return true
				}
			}
		}
		return false
	})
	var host string
	for _, n := range c.rm.Nodes() {
		if n.ID == victim {
			host = n.Host
		}
	}
	if err := os.WriteFile(exclude, []byte("# leaving\n"+host+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := c.jc.RefreshNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetDecommissioning()) != 1 || resp.GetDecommissioning()[0] != victim {
		t.Fatalf("refreshNodes decommissioning %v, want [%s]", resp.GetDecommissioning(), victim)
	}
	// What was on the node when it was excluded: nothing else may follow.
	st, err := c.jc.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	before := attemptsOn(st, victim)
	running := 0
	for _, s := range before {
		if s == "RUNNING" {
			running++
		}
	}
	if s := nodeState(t, c, victim); running > 0 && s != resourcemanager.NodeDecommissioning {
		t.Errorf("node %s with %d running attempts is %s, want DECOMMISSIONING", victim, running, s)
	}

	// While the job still has reduces to finish and a map output on the
	// node, the node must not be DECOMMISSIONED (its reduces fetch from
	// it). The node's state is read first: a job seen afterwards needing
	// the output needed it then too.
	for {
		ns := nodeState(t, c, victim)
		st, err := c.jc.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.GetState() != mapreduce.StateRunning && st.GetState() != "PENDING" {
			break
		}
		if ns == resourcemanager.NodeDecommissioned && st.GetReducesDone() < st.GetReducesTotal() && holdsOutput(st, victim) {
			t.Fatalf("node %s DECOMMISSIONED while job %s still needs its map output (%d of %d reduces done)", victim, id, st.GetReducesDone(), st.GetReducesTotal())
		}
		if ctx.Err() != nil {
			t.Fatalf("waiting for job %s: %v", id, ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.jc.Wait(ctx, id); err != nil {
		t.Fatalf("job on a decommissioning node: %v", err)
	}
	c.checkOutput(t, "/out", want)
	st, err = c.jc.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	after := attemptsOn(st, victim)
	for a, s := range after {
		was, ok := before[a]
		if !ok {
			t.Errorf("attempt %s (%s) launched on %s after it was decommissioned", a, s, victim)
			continue
		}
		if was == "RUNNING" && s != "SUCCEEDED" {
			t.Errorf("attempt %s running on the decommissioning node ended %s, want SUCCEEDED (graceful)", a, s)
		}
	}
	c.WaitFor(t, "the drained node to be DECOMMISSIONED", func() bool { return nodeState(t, c, victim) == resourcemanager.NodeDecommissioned })
	nodes, err := c.jc.Nodes(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.GetNodeId() == victim && (n.GetState() != resourcemanager.NodeDecommissioned || n.GetHealthReport() == "") {
			t.Errorf("job nodes shows %s as %s (%q), want DECOMMISSIONED with a reason", victim, n.GetState(), n.GetHealthReport())
		}
	}

	// Out of the file and refreshed: back in service, and given work.
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err = c.jc.RefreshNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetRecommissioned()) != 1 || nodeState(t, c, victim) != resourcemanager.NodeRunning {
		t.Errorf("after emptying the file: recommissioned %v, node %s", resp.GetRecommissioned(), nodeState(t, c, victim))
	}
	res, err := c.jc.Run(ctx, "wc", map[string]string{"input": "/in", "output": "/out2", "reduces": "2"})
	if err != nil || res.State != mapreduce.StateSucceeded {
		t.Fatalf("job after recommission: %v %v", err, res)
	}
}

// TestRefreshNodesNeedsAnAdminAndAFile: a user who is not an admin may
// not decommission nodes, and a resource manager with no exclude file
// says so.
func TestRefreshNodesNeedsAnAdminAndAFile(t *testing.T) {
	c := startCluster(t, "fifo")
	if _, err := c.jc.RefreshNodes(context.Background()); err == nil || !strings.Contains(err.Error(), "no hosts_exclude_file") {
		t.Fatalf("refreshNodes without hosts_exclude_file: %v, want it refused naming the key", err)
	}
	mallory := c.clientAs(t, "mallory")
	if _, err := mallory.RefreshNodes(context.Background()); err == nil || !strings.Contains(err.Error(), "not a resource manager admin") {
		t.Fatalf("refreshNodes by mallory: %v, want refused: not an admin", err)
	}
}
