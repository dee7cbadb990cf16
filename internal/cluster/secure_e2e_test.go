package cluster_test

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/testcluster"
)

// TestUpSecureTLS: `cluster up` is secure by default and, with --tls,
// speaks TLS everywhere. It makes the identity secret and the datanode
// key (0600), the datanodes prove the key (they register: Up returns),
// the launching user's token file lands in the home (0600) where a
// client of this cluster finds it (ClientSecurity, by SMARTH_HOME), with
// the CA; a client with a credential minted under another secret, with
// none, or speaking plaintext is refused. The launcher's own status calls
// carry the token and TLS too. A wordcount job of another user runs end
// to end over TLS: the resource manager checks her credential and the
// node managers, with the owner's service token, read and write as her
// (its output is hers).
func TestUpSecureTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster skipped in -short mode")
	}
	home := t.TempDir()
	t.Setenv("SMARTH_HOME", home)
	t.Setenv("SMARTH_TOKEN_FILE", "")
	t.Setenv("SMARTH_TLS_CA_FILE", "")
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := cluster.Up(ctx, cluster.Options{
		Home: home, Binary: testcluster.Binary(t), DataNodes: 2, TLS: true, NodeManagers: true,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", BlockSize: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	token := cluster.TokenFile(home, me.Username)
	for _, f := range []string{cluster.IdentitySecretFile(home), filepath.Join(home, "keys", "datanode.key"), token, filepath.Join(home, "tls", "ca.key")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want 0600", f, err, fi)
		}
	}
	if !st.TLS || st.Auth != auth.Secure {
		t.Fatalf("state records auth %q tls %v", st.Auth, st.TLS)
	}
	sec, err := cluster.ClientSecurity(st.NameNode)
	if err != nil {
		t.Fatal(err)
	}
	if sec.TokenFile != token || sec.TLS == nil {
		t.Fatalf("a client of the cluster finds token %q and TLS %v; want %s and the CA", sec.TokenFile, sec.TLS != nil, token)
	}
	if other, _ := cluster.ClientSecurity("127.0.0.1:1"); other.TokenFile != "" || other.TLS != nil {
		t.Fatalf("a client of another namenode was given this cluster's token or CA: %+v", other)
	}

	fs, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	if err := fs.Mkdir(ctx, "/secure-ok", 0o755, true); err != nil {
		t.Fatalf("client with the launcher's token: %v", err)
	}

	forged := filepath.Join(t.TempDir(), "forged")
	if err := auth.WriteTokenFile(forged, auth.UserCredential(make([]byte, 32), "root")); err != nil {
		t.Fatal(err)
	}
	refused := func(name, why string, cfg client.Config) {
		t.Helper()
		other, err := client.New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer other.Close()
		if err := other.Mkdir(ctx, "/secure-"+name, 0o755, true); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: mkdir = %v, want refused (%s)", name, err, why)
		}
	}
	refused("forged", "authenticated", client.Config{NameNode: st.NameNode, TokenFile: forged, TLS: sec.TLS})
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(t.TempDir(), "absent"))
	refused("anonymous", "authenticated", client.Config{NameNode: st.NameNode, TLS: sec.TLS})
	refused("plaintext", "", client.Config{NameNode: st.NameNode, TokenFile: token, RPCTimeout: 5 * time.Second})
	t.Setenv("SMARTH_TOKEN_FILE", "")
	runSecureJob(ctx, t, home, st, fs, sec)
	s, err := cluster.GetStatus(ctx, home)
	if err != nil || s.ReportErr != nil || len(s.Datanodes) != 2 {
		t.Fatalf("status of the secure cluster: %v %v %d datanodes", err, s.ReportErr, len(s.Datanodes))
	}
}

func runSecureJob(ctx context.Context, t *testing.T, home string, st *cluster.State, owner *client.FileSystem, sec cluster.Security) {
	t.Helper()
	fs, jc := aliceOnCluster(ctx, t, home, st, owner, sec)
	if _, err := jc.Run(ctx, "wordcount", map[string]string{"input": "/secure-in", "output": "/alice/out", "reduces": "1"}); err != nil {
		t.Fatalf("alice's wordcount on the secure cluster: %v", err)
	}
	out, err := fs.List(ctx, "/alice/out")
	if err != nil || len(out) == 0 {
		t.Fatalf("job output: %v %v", out, err)
	}
	for _, fi := range out {
		if fi.Owner != "alice" {
			t.Errorf("%s owned by %s, want the submitter alice", fi.Name, fi.Owner)
		}
	}
}

// aliceOnCluster puts /secure-in/text (as the owner), gives alice /alice,
// and returns alice's client and job client (closed with the test). alice
// is not the cluster's owner: her jobs' files can only be hers if the
// node managers act for her.
func aliceOnCluster(ctx context.Context, t *testing.T, home string, st *cluster.State, owner *client.FileSystem, sec cluster.Security) (*client.FileSystem, *jobclient.Client) {
	t.Helper()
	w, err := owner.Create(ctx, "/secure-in/text", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(strings.Repeat("to be or not to be\n", 1000))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := owner.Mkdir(ctx, "/alice", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := owner.SetOwner(ctx, "/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}
	secret, err := auth.LoadKey(cluster.IdentitySecretFile(home))
	if err != nil {
		t.Fatal(err)
	}
	cred := auth.UserCredential(secret, "alice")
	fs, err := client.New(client.Config{NameNode: st.NameNode, Credential: cred, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	reg := mapreduce.NewRegistry(apps.All()...)
	jc, err := jobclient.New(jobclient.Config{ResourceManager: st.ResourceManager, FS: mapreduce.DFS(fs), Registry: reg, Credential: cred, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jc.Close() })
	return fs, jc
}

// reachableTempDir is a temporary directory that other users can pass
// through (its parents up to the system's temporary directory 0711), as
// a cluster home in a shared directory on a node: containers' users then
// reach their work directories, and only the home's own modes keep
// others out of the rest.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for d := base; d != "/" && d != filepath.Dir(os.TempDir()); d = filepath.Dir(d) {
		if d == os.TempDir() {
			break
		}
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return base
}
