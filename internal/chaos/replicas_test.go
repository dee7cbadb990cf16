package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/testcluster"
)

// The replica check reads each replica from its own datanode: a replica
// damaged on one datanode only, which an ordinary read would skip over
// (it fails over to a good one), is reported as diverged, naming the file
// and the datanode. The control is the same check before the damage:
// every replica read, none diverged.
func TestChaosReportsDivergedReplica(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	o := Options{Dir: "/chaos/replicas", MaxFileSize: 64 << 10, Home: t.TempDir()}
	o.setDefaults()
	r := &run{o: o, rep: &Report{Ops: map[string]*OpCount{}}, files: map[int]*ackedFile{}, busy: map[int]bool{}}
	load := c.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := load.Mkdir(ctx, o.Dir, 0o755, true); err != nil {
		t.Fatal(err)
	}
	f := putOne(t, r, load, 11)
	c.WaitReplication(t, f.path, 3)

	r.checkReplicas(ctx, load)
	if len(r.rep.Diverged) != 0 || r.rep.ReplicasChecked != 3*r.rep.BlocksChecked || r.rep.BlocksChecked == 0 {
		t.Fatalf("untouched replicas: %d blocks, %d replicas compared, diverged %v; want every block's 3 replicas and none diverged",
			r.rep.BlocksChecked, r.rep.ReplicasChecked, r.rep.Diverged)
	}

	locs, err := load.BlockLocations(ctx, f.path, 0, 1<<40)
	if err != nil || len(locs) == 0 {
		t.Fatalf("locations of %s: %v %v", f.path, locs, err)
	}
	victim := testcluster.Hostname(1)
	n := 0
	_ = filepath.WalkDir(c.DataDir(1), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != fmt.Sprintf("blk_%d", locs[0].BlockID) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return err
		}
		b[len(b)/2] ^= 0x5a
		n++
		return os.WriteFile(p, b, 0o600)
	})
	if n != 1 {
		t.Fatalf("damaged %d replicas of block %d on %s, want 1", n, locs[0].BlockID, victim)
	}
	r.rep.Diverged, r.rep.BlocksChecked, r.rep.ReplicasChecked = nil, 0, 0
	r.checkReplicas(ctx, load)
	var b bytes.Buffer
	r.rep.Print(&b)
	t.Logf("report:\n%s", b.String())
	if len(r.rep.Diverged) != 1 || !strings.Contains(r.rep.Diverged[0], f.path) || !strings.Contains(r.rep.Diverged[0], victim) {
		t.Fatalf("diverged = %q; want one entry naming %s and %s", r.rep.Diverged, f.path, victim)
	}
	if !strings.Contains(b.String(), "DIVERGED "+f.path) {
		t.Errorf("the report does not print the divergence:\n%s", b.String())
	}
}
