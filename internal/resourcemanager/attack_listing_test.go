package resourcemanager_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"smarth/internal/auth"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

// TestAttackJobsListedWithoutLogin is issue 23's hole 9 (listing): every
// user's jobs (names, outputs, counters, where their logs are) were
// listed to anyone, over RPC and on the console, without a login. Now
// ListJobs and GetJob establish the caller as the other job RPCs do: no
// credential is refused, a user sees only their own jobs, and the admin
// sees all; the console and the REST API answer 401 (with a basic-auth
// challenge) and filter the same way.
func TestAttackJobsListedWithoutLogin(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "auth.key")
	secret, err := auth.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	c := startClusterWith(t, "fifo", func(cfg *resourcemanager.Config) {
		cfg.Auth, cfg.AuthSecretFile = auth.Secure, keyFile
		cfg.AdminUsers = []string{"yarnadmin"}
	}, nil)
	c.writeInput(t, 100)
	r := dialRM(t, c.rm.RPCAddr())
	cred := func(u string) string { return auth.UserCredential(secret, u) }
	proving := func(u string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), auth.MDCredential, cred(u))
	}
	resp, err := r.rm.SubmitJob(proving("alice"), &mrpb.SubmitJobRequest{App: "wc", Output: "/alice-out", NumReduces: 1,
		Params: map[string]string{"input": "/in", "output": "/alice-out", "reduces": "1", "map_delay": "10s"},
		Splits: []*mrpb.Split{{Path: "/in/text", Length: 100, Hosts: []string{"dn1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJobId()

	listed := func(ctx context.Context) []string {
		t.Helper()
		l, err := r.rm.ListJobs(ctx, &mrpb.ListJobsRequest{})
		if err != nil {
			t.Fatalf("ListJobs: %v", err)
		}
		var ids []string
		for _, j := range l.GetJobs() {
			ids = append(ids, j.GetJobId())
		}
		return ids
	}
	_, err = r.rm.ListJobs(as("alice"), &mrpb.ListJobsRequest{})
	wantCode(t, err, codes.Unauthenticated)
	_, err = r.rm.GetJob(context.Background(), &mrpb.GetJobRequest{JobId: id})
	wantCode(t, err, codes.Unauthenticated)
	if got := listed(proving("bob")); len(got) != 0 {
		t.Errorf("bob lists %v, want none of alice's jobs", got)
	}
	_, err = r.rm.GetJob(proving("bob"), &mrpb.GetJobRequest{JobId: id})
	wantCode(t, err, codes.PermissionDenied, "user bob")
	for _, u := range []string{"alice", "yarnadmin"} {
		if got := listed(proving(u)); len(got) != 1 || got[0] != id {
			t.Errorf("%s lists %v, want [%s]", u, got, id)
		}
		if _, err := r.rm.GetJob(proving(u), &mrpb.GetJobRequest{JobId: id}); err != nil {
			t.Errorf("%s views alice's job: %v", u, err)
		}
	}

	web := "http://" + c.rm.HTTPAddr()
	get := func(path string, set func(*http.Request)) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, web+path, nil)
		if set != nil {
			set(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	bearer := func(u string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+cred(u)) }
	}
	for _, p := range []string{"/", "/?state=RUNNING", "/job/" + id, "/ws/v1/cluster/apps", "/ws/v1/cluster/apps/" + id} {
		code, body, h := get(p+sep(p)+"user.name=alice", nil)
		if code != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic") || strings.Contains(body, "/alice-out") {
			t.Errorf("GET %s with an asserted name only: %d %q, want 401 with a basic challenge\n%s", p, code, h.Get("WWW-Authenticate"), body)
		}
	}
	for _, p := range []string{"/", "/ws/v1/cluster/apps"} {
		if code, body, _ := get(p, bearer("bob")); code != http.StatusOK || strings.Contains(body, id) {
			t.Errorf("GET %s as bob: %d, lists alice's job %s: %v", p, code, id, strings.Contains(body, id))
		}
		if code, body, _ := get(p, func(r *http.Request) { r.SetBasicAuth("yarnadmin", cred("yarnadmin")) }); code != http.StatusOK || !strings.Contains(body, id) {
			t.Errorf("GET %s as the admin (basic auth): %d, want alice's job %s listed", p, code, id)
		}
	}
	for _, p := range []string{"/job/" + id, "/ws/v1/cluster/apps/" + id} {
		if code, body, _ := get(p, bearer("bob")); code != http.StatusForbidden || strings.Contains(body, "/alice-out") {
			t.Errorf("GET %s as bob: %d, want 403\n%s", p, code, body)
		}
		if code, _, _ := get(p, bearer("alice")); code != http.StatusOK {
			t.Errorf("GET %s as alice: %d, want 200", p, code)
		}
	}
}

func sep(p string) string {
	if strings.Contains(p, "?") {
		return "&"
	}
	return "?"
}
