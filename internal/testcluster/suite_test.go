package testcluster

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"smarth/internal/client"
)

// The shared suite: the same steps against the in-process cluster and the
// multi-process one, so both implementations of DFS keep their promises.

func TestSuiteInProcess(t *testing.T) {
	runSuite(t, func(t testing.TB, o Options) DFS { return Start(t, o) })
}

func TestSuiteProcs(t *testing.T) {
	runSuite(t, func(t testing.TB, o Options) DFS { return StartProcs(t, o) })
}

func runSuite(t *testing.T, start func(testing.TB, Options) DFS) {
	c := start(t, Options{DataNodes: 4, Racks: []string{"/r1", "/r1", "/r2", "/r2"}})
	fs := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// 3.5 blocks of 1 MiB, replication 3.
	want := make([]byte, 3<<20+512<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	const path = "/suite/a.dat"
	write(t, ctx, fs, path, want)
	readBack(t, ctx, fs, path, want)
	c.WaitReplication(t, path, 3)
	infos, err := fs.List(ctx, "/suite")
	if err != nil || len(infos) != 1 || infos[0].Size != int64(len(want)) {
		t.Fatalf("list /suite: %v %+v", err, infos)
	}

	// A crashed datanode is declared dead and its replicas re-made
	// elsewhere; the file stays readable.
	victim := hostOfFirstReplica(t, ctx, fs, path)
	c.KillDataNode(victim)
	c.WaitLive(t, 3)
	c.WaitReplication(t, path, 3)
	locs, err := fs.BlockLocations(ctx, path, 0, int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locs {
		if slices.Contains(l.Hosts, Hostname(victim)) {
			t.Errorf("block %d still lists killed %s: %v", l.BlockID, Hostname(victim), l.Hosts)
		}
	}
	readBack(t, ctx, fs, path, want)

	// It comes back with its old data; the namenode trims the excess.
	c.RestartDataNode(victim)
	c.WaitLive(t, 4)
	c.WaitReplication(t, path, 3)

	// The namespace survives a namenode restart.
	c.RestartNameNode()
	readBack(t, ctx, c.Client(t), path, want)

	// A gracefully stopped datanode leaves the live set too.
	c.StopDataNode(3)
	c.WaitLive(t, 3)
	if n := c.NumDataNodes(); n != 4 {
		t.Errorf("NumDataNodes() = %d, want 4", n)
	}
}

func write(t *testing.T, ctx context.Context, fs *client.FileSystem, path string, data []byte) {
	t.Helper()
	w, err := fs.Create(ctx, path, client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readBack(t *testing.T, ctx context.Context, fs *client.FileSystem, path string, want []byte) {
	t.Helper()
	r, err := fs.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %s: %d bytes differ from the %d written", path, len(got), len(want))
	}
}

// hostOfFirstReplica is the index of a datanode holding the file's first
// block.
func hostOfFirstReplica(t *testing.T, ctx context.Context, fs *client.FileSystem, path string) int {
	t.Helper()
	locs, err := fs.BlockLocations(ctx, path, 0, 1)
	if err != nil || len(locs) == 0 || len(locs[0].Hosts) == 0 {
		t.Fatalf("block locations of %s: %v %+v", path, err, locs)
	}
	for i := range 64 {
		if locs[0].Hosts[0] == Hostname(i) {
			return i
		}
	}
	t.Fatalf("replica on unknown host %q", locs[0].Hosts[0])
	return 0
}
