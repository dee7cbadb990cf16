package mrtest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// TestTLSJob: with TLS on, a wordcount runs end to end — job RPCs, the
// tasks' DFS reads and writes, and a shuffle between two node managers
// all over TLS — and gives the right counts; the shuffle server and the
// resource manager refuse plaintext.
func TestTLSJob(t *testing.T) {
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 2, TLS: true})
	reg := mapreduce.NewRegistry(apps.All()...)
	mr := mrtest.Start(t, mrtest.Options{DFS: dfs, Registry: reg, Hosts: []string{"dn1", "dn2"}})
	ctx := context.Background()
	w, err := mr.FS().Create(ctx, "/in/text", mapreduce.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(strings.Repeat("to be or not to be\n", 20_000))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mr.Client().Run(ctx, "wordcount", map[string]string{"input": "/in", "output": "/out", "reduces": "2"}); err != nil {
		t.Fatalf("wordcount over TLS: %v", err)
	}
	counts := map[string]string{}
	for _, part := range []string{"/out/part-r-00000", "/out/part-r-00001"} {
		r, err := mr.FS().Open(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(line, "\t"); ok {
				counts[k] = v
			}
		}
	}
	want := map[string]string{"to": "40000", "be": "40000", "or": "20000", "not": "20000"}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("count of %q = %q, want %s (all: %v)", k, counts[k], v, counts)
		}
	}

	// Plaintext HTTP to a node manager's shuffle port gets no answer
	// (the server wants a TLS handshake first).
	hc := &http.Client{Timeout: 5 * time.Second}
	if resp, err := hc.Get("http://" + mr.NodeManager(0).ShuffleAddr() + "/mapOutput?job=x&attempt=y&reduce=0"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest { // Go's TLS server answers a plain request with 400
			t.Fatalf("plain HTTP to the shuffle: %s", resp.Status)
		}
	}
	// A plaintext job client is refused by the resource manager.
	jc, err := jobclient.New(jobclient.Config{ResourceManager: mr.RM().RPCAddr(), FS: mr.FS(), Registry: reg,
		Credential: dfs.Credential("alice"), RPCTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	if _, err := jc.Run(ctx, "wordcount", map[string]string{"input": "/in", "output": "/out2", "reduces": "1"}); err == nil {
		t.Fatal("a plaintext job client was served")
	}
}
