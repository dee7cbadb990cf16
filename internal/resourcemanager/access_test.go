package resourcemanager_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

// rawRM is a resource manager client that speaks gRPC directly, as a
// client that skips the job client's own checks would.
type rawRM struct {
	t  *testing.T
	rm mrpb.ResourceManagerClient
}

func dialRM(t *testing.T, addr string) *rawRM {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawRM{t: t, rm: mrpb.NewResourceManagerClient(conn)}
}

func as(user string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "smarth-user", user)
}

// submit submits a wc job over /in to output, planned by hand.
func (r *rawRM) submit(user, app, output string) (string, error) {
	resp, err := r.rm.SubmitJob(as(user), &mrpb.SubmitJobRequest{App: app, Output: output, NumReduces: 1,
		Params: map[string]string{"input": "/in", "output": output, "reduces": "1", "map_delay": "10s"},
		Splits: []*mrpb.Split{{Path: "/in/text", Length: 100, Hosts: []string{"dn1"}}}})
	return resp.GetJobId(), err
}

func wantCode(t *testing.T, err error, code codes.Code, words ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("error %v: want code %v", err, code)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not say %q", err, w)
		}
	}
}

func TestKillOnlyByOwnerOrAdmin(t *testing.T) {
	c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) { cfg.AdminUsers = []string{"carol"} }, nil)
	c.writeInput(t, 100)
	r := dialRM(t, c.rm.RPCAddr())
	for _, killer := range []string{"alice", "carol"} { // the owner, an admin
		id, err := r.submit("alice", "wc", "/out-"+killer)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.rm.KillJob(as("bob"), &mrpb.KillJobRequest{JobId: id})
		wantCode(t, err, codes.PermissionDenied, id, "user bob is neither the job's owner (alice) nor an admin")
		st, err := r.rm.GetJob(as("alice"), &mrpb.GetJobRequest{JobId: id})
		if err != nil || st.GetState() != mapreduce.StateRunning {
			t.Fatalf("after bob's kill: %v, %v; want the job RUNNING", st, err)
		}
		// Control: the same call by the owner or an admin kills it.
		if _, err := r.rm.KillJob(as(killer), &mrpb.KillJobRequest{JobId: id}); err != nil {
			t.Fatalf("kill by %s: %v", killer, err)
		}
	}
}

func TestAdminGroupIsResolvedOnTheServer(t *testing.T) {
	groups := map[string][]string{"dave": {"staff", "mradmins"}}
	c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) {
		cfg.AdminGroup = "mradmins"
		cfg.GroupsOf = func(u string) ([]string, error) { return groups[u], nil }
	}, nil)
	c.writeInput(t, 100)
	r := dialRM(t, c.rm.RPCAddr())
	id, err := r.submit("alice", "wc", "/out")
	if err != nil {
		t.Fatal(err)
	}
	// Claiming the admin group in the call's metadata gives nothing.
	ctx := metadata.AppendToOutgoingContext(as("bob"), "smarth-groups", "mradmins")
	_, err = r.rm.KillJob(ctx, &mrpb.KillJobRequest{JobId: id})
	wantCode(t, err, codes.PermissionDenied, "user bob")
	if _, err := r.rm.KillJob(as("dave"), &mrpb.KillJobRequest{JobId: id}); err != nil {
		t.Fatalf("kill by a member of admin_group: %v", err)
	}
}

func TestStreamingNeedsAllowStreaming(t *testing.T) {
	for _, allow := range []bool{false, true} {
		c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) { cfg.AllowStreaming = allow }, nil)
		r := dialRM(t, c.rm.RPCAddr())
		id, err := r.submit("alice", "streaming", "/st")
		if !allow {
			wantCode(t, err, codes.PermissionDenied, "streaming jobs run commands", "allow_streaming: false")
			if id != "" {
				t.Fatalf("refused job got an id %s", id)
			}
			continue
		}
		if err != nil { // control: the same job is accepted when allowed
			t.Fatalf("streaming with allow_streaming: %v", err)
		}
		r.rm.KillJob(as("alice"), &mrpb.KillJobRequest{JobId: id})
	}
}

func TestSubmitRefusesExistingOutputOnTheServer(t *testing.T) {
	c := startCluster(t, "fifo")
	c.writeInput(t, 100)
	keep := filepath.Join(c.fs.Root, "home", "alice", "keep")
	os.MkdirAll(keep, 0o755)
	os.WriteFile(filepath.Join(keep, "precious"), []byte("mine"), 0o644)
	r := dialRM(t, c.rm.RPCAddr())
	// A client that skips the job client's check still cannot aim a job
	// at an existing directory: its abort would be able to remove it.
	_, err := r.submit("alice", "wc", "/home/alice/keep/")
	wantCode(t, err, codes.AlreadyExists, "output directory /home/alice/keep already exists")
	_, err = r.submit("alice", "wc", "relative/out")
	wantCode(t, err, codes.InvalidArgument, "absolute")
	_, err = r.submit("alice", "wc", "/")
	wantCode(t, err, codes.InvalidArgument, "root")
	// Control: a new directory is accepted; killing that job leaves the
	// existing one alone.
	id, err := r.submit("alice", "wc", "/home/alice/new")
	if err != nil {
		t.Fatal(err)
	}
	r.rm.KillJob(as("alice"), &mrpb.KillJobRequest{JobId: id})
	if b, err := os.ReadFile(filepath.Join(keep, "precious")); err != nil || string(b) != "mine" {
		t.Fatalf("existing directory's file: %q, %v", b, err)
	}
}

// recordingUsers is a UserFS that records which users the daemons asked
// for, over one shared FS.
type recordingUsers struct {
	fs    mapreduce.FS
	mu    *sync.Mutex
	users *[]string
}

func (r recordingUsers) For(u string) (mapreduce.FS, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(*r.users, u) {
		*r.users = append(*r.users, u)
	}
	return r.fs, nil
}

func (r recordingUsers) Close() error { return nil }

func TestJobRunsAsItsSubmitter(t *testing.T) {
	var mu sync.Mutex
	var users []string
	c := startClusterWith(t, "fifo", nil, func(fs mapreduce.FS) mapreduce.UserFS {
		return recordingUsers{fs: fs, mu: &mu, users: &users}
	})
	want := c.writeInput(t, 300)
	c.jc.Close()
	jc := c.clientAs(t, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := jc.Run(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "2"}); err != nil {
		t.Fatal(err)
	}
	c.checkOutput(t, "/out", want)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(users, []string{"alice"}) {
		t.Fatalf("the daemons used the file system as %v; want only the submitter alice", users)
	}
}

// clientAs is a job client of the cluster for user.
func (c *miniCluster) clientAs(t *testing.T, user string) *jobclient.Client {
	t.Helper()
	jc, err := jobclient.New(jobclient.Config{ResourceManager: c.rm.RPCAddr(), FS: c.fs, Registry: mapreduce.NewRegistry(wc{}),
		User: user, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jc.Close() })
	return jc
}
