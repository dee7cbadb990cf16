package resourcemanager_test

import (
	"context"
	"os/user"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

// serviceToken writes this OS user's credential under the secret in
// secretFile to a 0600 token file: what a local cluster's node managers
// run with.
func serviceToken(t *testing.T, secretFile string) string {
	t.Helper()
	secret, err := auth.LoadKey(secretFile)
	if err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "service.token")
	if err := auth.WriteTokenFile(path, auth.UserCredential(secret, me.Username)); err != nil {
		t.Fatal(err)
	}
	return path
}

func hasNode(rm *resourcemanager.ResourceManager, id string) bool {
	return slices.ContainsFunc(rm.Nodes(), func(n resourcemanager.NodeInfo) bool { return n.ID == id })
}

func waitNodes(t *testing.T, rm *resourcemanager.ResourceManager, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(rm.Nodes()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d node managers registered", len(rm.Nodes()), n)
		}
		time.Sleep(10 * time.Millisecond) // polling registration with a deadline
	}
}

// TestSecureHeartbeatsNeedANodeManagerCredential: with auth: secure a
// heartbeat registers a node only when its credential proves a user of
// nodemanager_users; without one, with a bare asserted name, or with a
// valid credential of another user it is refused and registers nothing;
// a registered node id cannot be heartbeated by another (allowed) user,
// whose forged shuffle address is not taken; map-output queries are
// refused likewise. The real node managers (carrying this OS user's
// credential, the default nodemanager_users) register and run a job.
func TestSecureHeartbeatsNeedANodeManagerCredential(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "auth.key")
	secret, err := auth.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) {
		cfg.Auth, cfg.AuthSecretFile = auth.Secure, keyFile
		cfg.NodeManagerUsers = []string{me.Username, "yarn2"}
	}, nil)
	waitNodes(t, c.rm, 3)
	r := dialRM(t, c.rm.RPCAddr())
	proving := func(u string) context.Context {
		return metadata.AppendToOutgoingContext(as(u), auth.MDCredential, auth.UserCredential(secret, u))
	}
	beat := func(ctx context.Context, id string) error {
		_, err := r.rm.Heartbeat(ctx, &mrpb.HeartbeatRequest{NodeId: id, Hostname: "evil", ShuffleAddr: "10.6.6.6:1",
			MapSlots: 8, FreeMapSlots: 8})
		return err
	}

	wantCode(t, beat(context.Background(), "evil@1"), codes.Unauthenticated, "evil@1", "token_file")
	wantCode(t, beat(as(me.Username), "evil@2"), codes.Unauthenticated)
	wantCode(t, beat(metadata.AppendToOutgoingContext(as(me.Username), auth.MDCredential,
		auth.UserCredential([]byte("not the namenode's secret"), me.Username)), "evil@3"), codes.Unauthenticated)
	wantCode(t, beat(proving("mallory"), "evil@4"), codes.PermissionDenied, "user mallory", "nodemanager_users")
	for _, id := range []string{"evil@1", "evil@2", "evil@3", "evil@4"} {
		if hasNode(c.rm, id) {
			t.Errorf("refused heartbeat registered node %s", id)
		}
	}

	// Another allowed identity cannot heartbeat as a registered node.
	victim := c.rm.Nodes()[0]
	wantCode(t, beat(proving("yarn2"), victim.ID), codes.PermissionDenied, "registered by user "+me.Username)
	for _, n := range c.rm.Nodes() {
		if n.ID == victim.ID && n.ShuffleAddr != victim.ShuffleAddr {
			t.Fatalf("refused heartbeat changed node %s's shuffle address to %s", n.ID, n.ShuffleAddr)
		}
	}
	// Control: yarn2 is a node-manager user and registers its own node.
	if err := beat(proving("yarn2"), "yarn2@1"); err != nil {
		t.Fatalf("heartbeat of an allowed user: %v", err)
	}
	if !hasNode(c.rm, "yarn2@1") {
		t.Fatal("an allowed user's heartbeat registered no node")
	}
	// The id stays bound to yarn2; this OS user cannot take it either.
	wantCode(t, beat(proving(me.Username), "yarn2@1"), codes.PermissionDenied, "registered by user yarn2")

	_, err = r.rm.GetMapOutputs(context.Background(), &mrpb.GetMapOutputsRequest{JobId: "job_x", AttemptId: "a"})
	wantCode(t, err, codes.Unauthenticated)
	_, err = r.rm.GetMapOutputs(proving("mallory"), &mrpb.GetMapOutputsRequest{JobId: "job_x", AttemptId: "a"})
	wantCode(t, err, codes.PermissionDenied, "user mallory")

	// The real node managers run a job end to end (yarn2@1, which never
	// heartbeats again, is lost meanwhile; it got no task: no free slots
	// after its first heartbeat had no job to take).
	want := c.writeInput(t, 500)
	token := filepath.Join(t.TempDir(), "alice.token")
	if err := auth.WriteTokenFile(token, auth.UserCredential(secret, "alice")); err != nil {
		t.Fatal(err)
	}
	jc, err := jobclient.New(jobclient.Config{ResourceManager: c.rm.RPCAddr(), FS: c.fs, Registry: mapreduce.NewRegistry(wc{}),
		TokenFile: token, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := jc.Run(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "2"}); err != nil {
		t.Fatalf("job on the secure cluster: %v", err)
	}
	c.checkOutput(t, "/out", want)
}

// TestNodeManagerWithoutCredentialIsRefused: a real node manager with no
// credential (or one of a user not in nodemanager_users) never
// registers with a secure resource manager.
func TestNodeManagerWithoutCredentialIsRefused(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "auth.key")
	if _, err := auth.LoadOrCreateKey(keyFile); err != nil {
		t.Fatal(err)
	}
	c := startMiniCluster(t, "fifo", func(cfg *resourcemanager.Config) {
		cfg.Auth, cfg.AuthSecretFile = auth.Secure, keyFile
		cfg.NodeManagerUsers = []string{"yarn"} // not this OS user, whose credential the node managers carry
	}, nil, true)
	time.Sleep(300 * time.Millisecond) // ten heartbeat intervals: none may register
	if n := c.rm.Nodes(); len(n) != 0 {
		t.Fatalf("node managers of a user not in nodemanager_users registered: %v", n)
	}
}
