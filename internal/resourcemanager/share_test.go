package resourcemanager

import (
	"strings"
	"testing"

	"smarth/internal/rpc/mrpb"
)

// A job submitted with max_running_maps never has more maps running than
// that, across heartbeats and nodes; a finished map frees a place.
func TestMaxRunningMapsCapsAJob(t *testing.T) {
	rm := newTestRM(t, 1)
	req := &mrpb.SubmitJobRequest{App: "wc", Output: "/out", Params: map[string]string{MaxRunningMapsParam: "2"}}
	for i := range 5 {
		req.Splits = append(req.Splits, &mrpb.Split{Index: int32(i), Path: "/in", Length: 10})
	}
	if _, err := rm.SubmitJob(asUser("tester"), req); err != nil {
		t.Fatal(err)
	}
	n1 := &fakeNode{t: t, rm: rm, id: "n1"}
	n2 := &fakeNode{t: t, rm: rm, id: "n2"}
	first := n1.heartbeat(4, 0)
	if len(first) != 2 {
		t.Fatalf("first heartbeat with 4 free slots launched %d maps (%s), want the job's share of 2", len(first), kinds(first))
	}
	if got := n2.heartbeat(4, 0); len(got) != 0 {
		t.Fatalf("another node launched %s while the job already runs its share", kinds(got))
	}
	n1.done(first[0])
	if got := n1.heartbeat(4, 0); len(got) != 1 {
		t.Fatalf("after one map finished, %d maps launched (%s), want 1", len(got), kinds(got))
	}
}

func TestMaxRunningMapsMustBeANumber(t *testing.T) {
	rm := newTestRM(t, 1)
	_, err := rm.SubmitJob(asUser("tester"), &mrpb.SubmitJobRequest{App: "wc", Output: "/out",
		Params: map[string]string{MaxRunningMapsParam: "a quarter"}})
	if err == nil || !strings.Contains(err.Error(), MaxRunningMapsParam) {
		t.Fatalf("bad max_running_maps: got %v, want an error naming the parameter", err)
	}
}
