package nodemanager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/testcluster"
)

// TestTasksReadAndWriteAsTheSubmitter runs on the real DFS with its
// permission checks: alice keeps her input in a 0700 home directory. A
// job bob submits straight to the resource manager (planned with alice's
// splits, as a client that skips the job client's checks would) must
// fail reading it, because its tasks read as bob; the same job from
// alice is the control and succeeds. Before tasks ran as their
// submitter they read through the node manager's (superuser) client and
// bob's job counted alice's words.
func TestTasksReadAndWriteAsTheSubmitter(t *testing.T) {
	dfs, mr := dfsCluster(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	root := dfs.Client(t) // the namenode's superuser (the test's OS user)
	for _, d := range []string{"/home/alice", "/tmp"} {
		if err := root.Mkdir(ctx, d, 0o755, true); err != nil {
			t.Fatal(err)
		}
	}
	nn := root.Namenode()
	if _, err := nn.SetOwner(ctx, &dfspb.SetOwnerRequest{Path: "/home/alice", Owner: "alice", Group: "alice"}); err != nil {
		t.Fatal(err)
	}
	for p, perm := range map[string]uint32{"/home/alice": 0o700, "/tmp": 0o777} {
		if _, err := nn.SetPermission(ctx, &dfspb.SetPermissionRequest{Path: p, Permission: perm}); err != nil {
			t.Fatal(err)
		}
	}
	alice := mapreduce.DFS(dfs.Client(t, testcluster.WithUser("alice")))
	want := writeText(t, alice, "/home/alice/in/text", 2000)
	reg := mapreduce.NewRegistry(apps.All()...)
	plan, err := mapreduce.PlanJob(ctx, alice, reg, "wordcount",
		map[string]string{"input": "/home/alice/in", "output": "/tmp/out", "reduces": "1"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(mr.RM().RPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rm := mrpb.NewResourceManagerClient(conn)
	run := func(user, output string) (*mrpb.JobStatus, error) {
		req := &mrpb.SubmitJobRequest{App: "wordcount", Output: output, NumReduces: 1, Params: map[string]string{}}
		for k, v := range plan.Job.Params {
			req.Params[k] = v
		}
		req.Params["output"] = output
		for _, s := range plan.Splits {
			req.Splits = append(req.Splits, &mrpb.Split{Index: int32(s.Index), Path: s.Path, Offset: s.Offset,
				Length: s.Length, Hosts: s.Hosts, Racks: s.Racks, BlockId: s.BlockID})
		}
		// The resource manager is secure (mrtest gives it the DFS's
		// identity secret): the caller proves its user.
		uctx := metadata.AppendToOutgoingContext(ctx, auth.MDCredential, dfs.Credential(user))
		resp, err := rm.SubmitJob(uctx, req)
		if err != nil {
			return nil, err
		}
		var st *mrpb.JobStatus
		mr.WaitFor(t, "job "+resp.GetJobId()+" to end", func() bool {
			st, err = rm.GetJob(uctx, &mrpb.GetJobRequest{JobId: resp.GetJobId()})
			return err != nil || st.GetState() != mapreduce.StateRunning
		})
		return st, err
	}

	// bob may not even aim a job at a directory under alice's home: the
	// resource manager sets the job up as bob.
	_, err = run("bob", "/home/alice/out")
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "/home/alice/out") {
		t.Fatalf("bob's job writing under alice's home: %v; want PermissionDenied naming the path", err)
	}
	st, err := run("bob", "/tmp/bob")
	if err != nil {
		t.Fatal(err)
	}
	if st.GetState() != mapreduce.StateFailed || !strings.Contains(st.GetError(), "permission denied") {
		t.Fatalf("bob's job over alice's private input ended %s (%s); want FAILED for permission", st.GetState(), st.GetError())
	}
	if _, err := alice.Stat(ctx, "/tmp/bob"); err == nil {
		t.Error("bob's failed job left its output directory")
	}
	// Control: the same job as alice reads her input.
	st, err = run("alice", "/tmp/alice")
	if err != nil || st.GetState() != mapreduce.StateSucceeded {
		t.Fatalf("alice's job: %v, %v", st, err)
	}
	sameCounts(t, readCounts(t, alice, "/tmp/alice"), want)
}
