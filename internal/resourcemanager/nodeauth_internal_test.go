package resourcemanager

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// TestReportOnlyFromTheAttemptsNode: a node's report that another
// node's attempt succeeded counts for nothing (it would otherwise point
// reducers at the reporter's shuffle address); the attempt's own node's
// report finishes the job.
func TestReportOnlyFromTheAttemptsNode(t *testing.T) {
	rm := newTestRM(t, 1)
	job := submit(t, rm, 1, 0)
	a := &fakeNode{t: t, rm: rm, id: "a"}
	b := &fakeNode{t: t, rm: rm, id: "b"}
	ls := a.heartbeat(1, 0)
	if kinds(ls) != "m0" {
		t.Fatalf("launched %q, want m0", kinds(ls))
	}
	b.done(ls[0])
	b.heartbeat(0, 0)
	st, err := rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: job})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetState() != mapreduce.StateRunning || st.GetMapsDone() != 0 {
		t.Fatalf("after node b reported node a's attempt done: job %v, want running with no map done", st)
	}
	a.done(ls[0])
	a.heartbeat(0, 0)
	if st, _ = rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: job}); st.GetMapsDone() != 1 {
		t.Fatalf("after node a reported its attempt done: job %v, want its map done", st)
	}
	// The commit runs in the background; it must end before the test's
	// directory goes.
	deadline := time.Now().Add(10 * time.Second)
	for st.GetState() != mapreduce.StateSucceeded {
		if time.Now().After(deadline) {
			t.Fatalf("job did not succeed: %v", st)
		}
		time.Sleep(10 * time.Millisecond) // polling the job's state with a deadline
		st, _ = rm.GetJob(asUser("tester"), &mrpb.GetJobRequest{JobId: job})
	}
}

// TestNodeRefusalLoggedOncePerPeer: a refused node manager retries every
// heartbeat; the resource manager logs its refusal once per peer and
// reason, and refuses every time.
func TestNodeRefusalLoggedOncePerPeer(t *testing.T) {
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cfg := DefaultConfig()
	cfg.Auth, cfg.Identify, cfg.NodeManagerUsers, cfg.FS = auth.Secure, AssertedUser, []string{"yarn"}, lfs
	rm, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	from := func(ip string) context.Context {
		return peer.NewContext(asUser("mallory"), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}})
	}
	for range 5 {
		for _, ip := range []string{"10.0.0.1", "10.0.0.2"} {
			if _, err := rm.Heartbeat(from(ip), &mrpb.HeartbeatRequest{NodeId: "n1"}); status.Code(err) != codes.PermissionDenied {
				t.Fatalf("heartbeat of mallory from %s: %v, want PermissionDenied", ip, err)
			}
		}
	}
	if n := strings.Count(logs.String(), "node manager refused"); n != 2 {
		t.Fatalf("refusals logged %d times for 2 peers:\n%s", n, logs.String())
	}
	if len(rm.Nodes()) != 0 {
		t.Fatalf("refused heartbeats registered %v", rm.Nodes())
	}
}
