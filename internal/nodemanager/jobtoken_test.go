package nodemanager

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeNN answers WebHDFS token calls as an active namenode (a token) or
// as a standby (HDFS's StandbyException, 403), counting the calls.
type fakeNN struct {
	active atomic.Bool
	calls  atomic.Int32
}

func (f *fakeNN) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	w.Header().Set("Content-Type", "application/json")
	if !f.active.Load() {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"RemoteException":{"exception":"StandbyException","javaClassName":"org.apache.hadoop.ipc.StandbyException","message":"Operation category READ is not supported in state standby"}}`)
		return
	}
	switch r.URL.Query().Get("op") {
	case "GETDELEGATIONTOKEN":
		fmt.Fprintf(w, `{"Token":{"urlString":"tok-%s"}}`, r.URL.Query().Get("doas"))
	case "CANCELDELEGATIONTOKEN":
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// TestJobTokensFollowTheActive: with an HA group's namenodes listed, a
// job's token comes from whichever member is active: past a standby's
// refusal, a member that is down and one that accepts the connection but
// never answers (a hung host), and from the member that answered last on
// the next call. The control: listing only the standby gives the
// standby's refusal, not a token.
func TestJobTokensFollowTheActive(t *testing.T) {
	standby, active := &fakeNN{}, &fakeNN{}
	active.active.Store(true)
	s1, s2 := httptest.NewServer(standby), httptest.NewServer(active)
	defer s1.Close()
	defer s2.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close() // nothing listens there: a member that is down
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close() // the kernel accepts its connections; no one reads them
	host := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }
	j := newJobTokens(strings.Join([]string{down, hung.Addr().String(), host(s1), host(s2)}, ","), false, "nm:cred", http.DefaultClient)
	j.timeout = 300 * time.Millisecond

	tok, err := j.get(context.Background(), "job_1", "alice")
	if err != nil || tok != "tok-alice" {
		t.Fatalf("token for job_1: %q, %v", tok, err)
	}
	if standby.calls.Load() != 1 {
		t.Fatalf("the standby was asked %d times; want once on the way to the active", standby.calls.Load())
	}
	if _, err := j.get(context.Background(), "job_2", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := j.cancel("job_1"); err != nil {
		t.Fatal(err)
	}
	if standby.calls.Load() != 1 || active.calls.Load() != 3 {
		t.Fatalf("after the first token: standby asked %d times, active %d; want 1 and 3 (the active first)",
			standby.calls.Load(), active.calls.Load())
	}

	// Failover: the members swap roles.
	standby.active.Store(true)
	active.active.Store(false)
	if _, err := j.get(context.Background(), "job_3", "carol"); err != nil {
		t.Fatalf("after a failover: %v", err)
	}

	only := newJobTokens(host(s2), false, "nm:cred", http.DefaultClient) // now a standby
	if _, err := only.get(context.Background(), "job_4", "dave"); err == nil || !strings.Contains(err.Error(), "StandbyException") {
		t.Fatalf("only a standby listed: %v; want its StandbyException", err)
	}
}
