package nodemanager_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"smarth/internal/auth"
	"strings"
	"testing"
	"time"

	"smarth/internal/container"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// TestContainerGetsAJobScopedDelegationToken: on a secure DFS, alice's
// streaming task finds a delegation token in its container (0600, its
// user's, at $HADOOP_TOKEN_FILE_LOCATION = ~/.smarth/token). The token
// is alice's: it reads her files and is refused bob's 0700 directory
// (the node manager's own superuser credential would read both). When
// the job ends the node manager cancels it and the namenode refuses it.
func TestContainerGetsAJobScopedDelegationToken(t *testing.T) {
	needContainers(t)
	if testing.Short() {
		t.Skip("a DFS and MapReduce run; skipped with -short")
	}
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 1, Replication: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	root := dfs.Client(t)
	nn := root.Namenode()
	for _, d := range []struct {
		path, owner string
		perm        uint32
	}{{"/home/alice", "alice", 0o755}, {"/home/bob", "bob", 0o700}} {
		if err := root.Mkdir(ctx, d.path, 0o755, true); err != nil {
			t.Fatal(err)
		}
		if _, err := nn.SetOwner(ctx, &dfspb.SetOwnerRequest{Path: d.path, Owner: d.owner, Group: d.owner}); err != nil {
			t.Fatal(err)
		}
		if _, err := nn.SetPermission(ctx, &dfspb.SetPermissionRequest{Path: d.path, Permission: d.perm}); err != nil {
			t.Fatal(err)
		}
	}
	alice := mapreduce.DFS(dfs.Client(t, testcluster.WithUser("alice")))
	writeText(t, alice, "/home/alice/in/text", 10)
	writeText(t, mapreduce.DFS(dfs.Client(t, testcluster.WithUser("bob"))), "/home/bob/secret", 10)

	// The node managers' work dirs on a path open to all (0711), as on a
	// node: the container's HOME and token file path must resolve for
	// its user (t.TempDir is 0700).
	open := t.TempDir()
	for _, d := range []string{filepath.Dir(open), open} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	web := dfs.NameNodeHTTPAddr()
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	mr := mrtest.Start(t, mrtest.Options{DFS: dfs, Registry: reg, Credential: dfs.Credential("alice"),
		RM: func(c *resourcemanager.Config) { c.AllowStreaming = true; c.MaxAttempts = 1 },
		NM: func(i int, c *nodemanager.Config) {
			c.ContainerExecutor, c.NameNodeHTTP = container.ExecutorLinux, web
			c.WorkDir = filepath.Join(open, fmt.Sprintf("nm%d", i))
		}})
	// The task hands its token out through a gate directory and waits
	// there, so the token's scope is checked while it surely lives.
	gate := filepath.Join(open, "gate")
	os.Mkdir(gate, 0o777)
	os.Chmod(gate, 0o777)
	mapper := fmt.Sprintf(`cat >/dev/null; f="$HADOOP_TOKEN_FILE_LOCATION"; [ "$f" = "$HOME/.smarth/token" ] && echo at-home;`+
		` ls -ln "$f" | awk '{print "mode=" $1 " uid=" $3}'; echo "uid=$(id -u)";`+
		` cat "$f" > %[1]s/token.tmp && mv %[1]s/token.tmp %[1]s/token; while [ ! -e %[1]s/go ]; do sleep 0.05; done`, gate)
	jc := mr.Client()
	id, err := jc.Submit(ctx, "streaming", map[string]string{"input": "/home/alice/in", "output": "/home/alice/out",
		"mapper": mapper, "reducer": "NONE"})
	if err != nil {
		t.Fatal(err)
	}
	var token string
	mr.WaitFor(t, "the task to hand out its token", func() bool {
		b, err := os.ReadFile(filepath.Join(gate, "token"))
		token = strings.TrimSpace(string(b))
		return err == nil
	})
	if !auth.IsToken(token) || auth.CredentialUser(token) != "alice" {
		t.Fatalf("the container's token is not a delegation token of alice's: %q", token)
	}
	stat := func(p string) int {
		u := "http://" + web + "/webhdfs/v1" + p + "?" + url.Values{"op": {"GETFILESTATUS"}, "delegation": {token}}.Encode()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := stat("/home/alice/in/text"); code != http.StatusOK {
		t.Errorf("the running job's token cannot read alice's file: %d", code)
	}
	if code := stat("/home/bob/secret"); code != http.StatusForbidden {
		t.Errorf("the container's token on bob's 0700 directory: %d, want 403", code)
	}
	os.WriteFile(filepath.Join(gate, "go"), nil, 0o644)
	res, err := jc.Wait(ctx, id)
	if res == nil || res.State != mapreduce.StateSucceeded {
		t.Fatalf("job: %+v %v", res, err)
	}
	f, err := alice.Open(ctx, "/home/alice/out/part-m-00000")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if out := string(b); !strings.Contains(out, "at-home") || !strings.Contains(out, "mode=-rw-------") || !strings.Contains(out, "uid=") || strings.Contains(out, "uid=0\n") {
		t.Fatalf("token file not the container user's own 0600 ~/.smarth/token:\n%s", out)
	}
	mr.WaitFor(t, "the finished job's delegation token to be cancelled", func() bool {
		return stat("/home/alice/in/text") != http.StatusOK
	})
}
