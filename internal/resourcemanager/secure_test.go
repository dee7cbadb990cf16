package resourcemanager_test

import (
	"context"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

// TestSecureIdentifiesByCredential: with auth: secure the resource manager
// takes the caller from its credential, never from the asserted
// smarth-user: naming the owner without her credential is
// unauthenticated, another user's valid credential with her name asserted
// is that other user (denied), and her credential (control) kills her
// job. A job client carries its token file's credential by itself.
func TestSecureIdentifiesByCredential(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "auth.key")
	secret, err := auth.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) {
		cfg.Auth, cfg.AuthSecretFile = auth.Secure, keyFile
	}, nil)
	c.writeInput(t, 100)
	r := dialRM(t, c.rm.RPCAddr())
	proving := func(asserted, credUser string) context.Context {
		return metadata.AppendToOutgoingContext(as(asserted), auth.MDCredential, auth.UserCredential(secret, credUser))
	}

	if _, err := r.submit("alice", "wc", "/out-asserted"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("submit with a bare name: %v, want Unauthenticated", err)
	}
	submit := func(output string) string {
		t.Helper()
		resp, err := r.rm.SubmitJob(proving("alice", "alice"), &mrpb.SubmitJobRequest{App: "wc", Output: output, NumReduces: 1,
			Params: map[string]string{"input": "/in", "output": output, "reduces": "1", "map_delay": "10s"},
			Splits: []*mrpb.Split{{Path: "/in/text", Length: 100, Hosts: []string{"dn1"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetJobId()
	}
	id := submit("/out")
	_, err = r.rm.KillJob(as("alice"), &mrpb.KillJobRequest{JobId: id})
	wantCode(t, err, codes.Unauthenticated)
	_, err = r.rm.KillJob(proving("alice", "bob"), &mrpb.KillJobRequest{JobId: id})
	wantCode(t, err, codes.PermissionDenied, "user bob")
	if _, err := r.rm.KillJob(proving("alice", "alice"), &mrpb.KillJobRequest{JobId: id}); err != nil {
		t.Fatalf("kill with alice's credential: %v", err)
	}

	token := filepath.Join(t.TempDir(), "token")
	if err := auth.WriteTokenFile(token, auth.UserCredential(secret, "alice")); err != nil {
		t.Fatal(err)
	}
	jc, err := jobclient.New(jobclient.Config{ResourceManager: c.rm.RPCAddr(), TokenFile: token})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	if err := jc.Kill(context.Background(), submit("/out2")); err != nil {
		t.Fatalf("kill through a job client with alice's token file: %v", err)
	}
}
