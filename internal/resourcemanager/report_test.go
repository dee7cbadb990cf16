package resourcemanager

import (
	"context"
	"testing"
	"time"

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
	if st, _ = rm.GetJob(context.Background(), &mrpb.GetJobRequest{JobId: job}); st.GetMapsDone() != 1 {
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
		st, _ = rm.GetJob(context.Background(), &mrpb.GetJobRequest{JobId: job})
	}
}
