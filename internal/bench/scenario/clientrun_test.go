package scenario

import (
	"context"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

func TestPutRunsOnACluster(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	newFS := func() (*client.FileSystem, error) { return c.Client(t), nil }
	var out strings.Builder
	res, err := PutRuns(ctx, newFS, PutPlan{Size: 3<<20 + 7, Replication: 3, Modes: []string{"classic", "multipipeline"},
		Runs: 2, Warmup: 1 << 20, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(res.Warmups) != 2 || len(res.Runs) != 4 {
		t.Fatalf("%d warm-ups and %d runs, want 2 and 4", len(res.Warmups), len(res.Runs))
	}
	clients := map[string]string{}
	// Warm-ups in the order given, then runs A B, B A.
	for i, r := range append(res.Warmups, res.Runs...) {
		if want := []string{"classic", "multipipeline", "classic", "multipipeline", "multipipeline", "classic"}[i]; r.Mode != want {
			t.Errorf("upload %d is %s, want %s (modes interleaved, every other run reversed)", i, r.Mode, want)
		}
		if r.Seconds <= 0 || r.MiBps <= 0 || !r.Start.Before(r.End) || r.End.Sub(r.Start).Seconds() < r.Seconds {
			t.Errorf("upload %d timing: %+v", i, r)
		}
		if prev, ok := clients[r.Mode]; ok && prev != r.Client {
			t.Errorf("mode %s wrote through clients %s and %s, want one", r.Mode, prev, r.Client)
		}
		clients[r.Mode] = r.Client
	}
	if clients["classic"] == clients["multipipeline"] || clients["classic"] == "" {
		t.Errorf("the modes share a client: %v", clients)
	}
	if res.Replication != 3 || res.BlockSize != 1<<20 {
		t.Errorf("replication %d block size %d, want what the namenode applied (3, 1 MiB)", res.Replication, res.BlockSize)
	}
	st, err := c.Client(t).Stat(ctx, "/benchmarks/scenario/multipipeline.dat")
	if err != nil || st.Size != 3<<20+7 {
		t.Errorf("the last upload: %v %+v", err, st)
	}
	if _, err := PutRuns(ctx, newFS, PutPlan{Size: 1, Runs: 1, Modes: []string{"nosuchmode"}}); err == nil ||
		!strings.Contains(err.Error(), "nosuchmode") {
		t.Errorf("an unknown mode: %v", err)
	}
}
