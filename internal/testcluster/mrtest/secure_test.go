package mrtest_test

import (
	"context"
	"os/user"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// TestSecureJobRunsAsSubmitter: on a secure DFS, with the resource manager
// and node managers holding the superuser's credential, alice's job reads
// and writes as alice (its output is hers), and mallory's job writing
// into alice's directory fails though the services themselves could
// write there: tasks act for the submitter, not as the service.
func TestSecureJobRunsAsSubmitter(t *testing.T) {
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := dfs.Client(t)
	if err := admin.Mkdir(ctx, "/alice", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}
	reg := mapreduce.NewRegistry(apps.All()...)
	mr := mrtest.Start(t, mrtest.Options{NameNode: dfs.NameNodeAddr(), Registry: reg,
		Credential: dfs.Credential("alice"), ServiceCredential: dfs.Credential(me.Username),
		IdentitySecretFile: dfs.IdentitySecretFile()})
	w, err := mr.FS().Create(ctx, "/alice/in/text", mapreduce.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(strings.Repeat("to be or not to be\n", 500))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mr.Client().Run(ctx, "wordcount", map[string]string{"input": "/alice/in", "output": "/alice/out", "reduces": "1"}); err != nil {
		t.Fatalf("alice's job: %v", err)
	}
	out, err := admin.List(ctx, "/alice/out")
	if err != nil || len(out) == 0 {
		t.Fatalf("alice's output: %v %v", out, err)
	}
	for _, fi := range out {
		if fi.Owner != "alice" {
			t.Errorf("%s owned by %s, want alice", fi.Name, fi.Owner)
		}
	}

	mfs, err := client.New(client.Config{NameNode: dfs.NameNodeAddr(), Credential: dfs.Credential("mallory")})
	if err != nil {
		t.Fatal(err)
	}
	defer mfs.Close()
	jc, err := jobclient.New(jobclient.Config{ResourceManager: mr.RM().RPCAddr(), FS: mapreduce.DFS(mfs), Registry: reg,
		Credential: dfs.Credential("mallory"), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	if _, err := jc.Run(ctx, "wordcount", map[string]string{"input": "/alice/in", "output": "/alice/mallory", "reduces": "1"}); err == nil || !strings.Contains(err.Error(), "ermission denied") {
		t.Fatalf("mallory's job writing into alice's directory: %v, want permission denied", err)
	}
	if _, err := admin.Stat(ctx, "/alice/mallory"); err == nil {
		t.Error("mallory's job left /alice/mallory behind")
	}
}
