package bench

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

func TestPutGetNNOnACluster(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, Racks: []string{"/r1", "/r1", "/r2"}})
	fsys := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var out strings.Builder
	res, err := Put(ctx, fsys, PutOptions{
		Size: 5<<20 + 3, Replication: 3, Runs: 2, Modes: []string{"classic", "multipipeline"},
		LinkRateBits: 1e9, Out: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if len(res.Runs) != 4 || res.Runs[0].Mode != "classic" || res.Runs[1].Mode != "multipipeline" ||
		res.Runs[2].Mode != "multipipeline" || res.Runs[3].Mode != "classic" {
		t.Fatalf("runs not interleaved A B, B A: %+v", res.Runs)
	}
	if len(res.Summaries) != 2 || res.Summaries[1].ImprovementPct == nil || res.Summaries[0].PctOfBound == nil {
		t.Fatalf("summaries %+v", res.Summaries)
	}
	// Only the last run of each mode is kept.
	for _, p := range []string{"/benchmarks/put/classic-0.dat", "/benchmarks/put/multipipeline-0.dat"} {
		if _, err := fsys.Stat(ctx, p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it deleted", p, err)
		}
	}
	st, err := fsys.Stat(ctx, PutPath("/benchmarks/put", "multipipeline"))
	if err != nil || st.Size != 5<<20+3 || st.Replication != 3 {
		t.Fatalf("kept file: %v %+v", err, st)
	}

	// get verifies the put content byte for byte.
	g, err := Get(ctx, fsys, GetOptions{Path: PutPath("/benchmarks/put", "multipipeline"), Runs: 2, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Runs) != 2 || g.Size != 5<<20+3 {
		t.Errorf("get result %+v", g)
	}
	// A missing file is written first when a size is given, and named in
	// the error when not.
	if _, err := Get(ctx, fsys, GetOptions{Path: "/benchmarks/none"}); err == nil || !strings.Contains(err.Error(), "bench put") {
		t.Errorf("get of a missing file: %v", err)
	}
	if _, err := Get(ctx, fsys, GetOptions{Path: "/benchmarks/new.dat", Size: 1 << 20, Verify: true}); err != nil {
		t.Error(err)
	}

	nn, err := NameNodeOps(ctx, func() (*client.FileSystem, error) { return c.Client(t), nil },
		NNOptions{Ops: []string{"stat", "create", "rename", "delete", "mkdir"}, N: 300, Threads: 4, Rounds: 3, Warmup: true})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, o := range nn.Ops {
		ops = append(ops, o.Op)
		if o.OpsPerSec <= 0 || o.N != 300 || len(o.Rounds) != 3 {
			t.Errorf("%s: %+v", o.Op, o)
		}
	}
	if strings.Join(ops, ",") != "mkdir,create,stat,rename,delete" {
		t.Errorf("ops ran in order %v", ops)
	}
	if _, err := fsys.Stat(ctx, "/benchmarks/nn"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("benchmark directory left behind: %v", err)
	}
	if _, err := NameNodeOps(ctx, nil, NNOptions{Ops: []string{"chmod"}}); err == nil {
		t.Error("unknown op accepted")
	}
}
