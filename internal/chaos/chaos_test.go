package chaos_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/chaos"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/testcluster"
)

// TestChaosLosesNothing runs the chaos campaign for half a minute on a
// real local cluster (secure, with node managers), killing namenode,
// datanodes and node managers with SIGKILL: every acknowledged op must
// verify. The control then breaks two promises behind the harness's back
// (an acknowledged file rewritten with other bytes, a succeeded job's part
// file deleted) and the same verification must report both as lost.
func TestChaosLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster and a timed chaos run skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(home, "token"))
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if _, err := cluster.Up(ctx, cluster.Options{
		Home: home, Binary: bin, DataNodes: 3, BlockSize: 1 << 20, NodeManagers: true, Auth: "secure",
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", Detach: true,
	}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep, err := chaos.Run(ctx, chaos.Options{Home: home, Duration: 25 * time.Second, Interval: 4 * time.Second,
		MaxDown: 2 * time.Second, Seed: 14, MaxFileSize: 2 << 20, Dir: "/chaos/main", Out: &log})
	if err != nil {
		t.Fatalf("chaos run: %v\n%s", err, log.String())
	}
	var sum bytes.Buffer
	rep.Print(&sum)
	t.Logf("\n%s", sum.String())
	if len(rep.Lost) > 0 {
		t.Fatalf("acknowledged ops lost:\n%s\n%s", sum.String(), log.String())
	}
	if len(rep.Faults) < 3 || rep.Ops["put"] == nil || rep.Ops["put"].OK == 0 || rep.Acked == 0 {
		t.Fatalf("the run proved little: %d faults, %d acknowledged ops\n%s", len(rep.Faults), rep.Acked, sum.String())
	}
	for _, f := range rep.Faults {
		if f.PID == 0 || f.Down <= 0 {
			t.Errorf("fault %+v: no pid killed or never back", f)
		}
	}

	// Control: the same verification, with two promises broken on purpose.
	var broken []string
	rep, err = chaos.Run(ctx, chaos.Options{Home: home, Duration: 10 * time.Second, Interval: 4 * time.Second,
		MaxDown: time.Second, Seed: 15, Kinds: []string{"datanode"}, MaxFileSize: 256 << 10, Dir: "/chaos/control", Out: &log,
		BeforeVerify: func(ctx context.Context, fs *client.FileSystem, files, jobs []string) error {
			if len(files) == 0 || len(jobs) == 0 {
				t.Fatalf("control: %d acknowledged files, %d job outputs; need one of each to break", len(files), len(jobs))
			}
			w, err := fs.Create(ctx, files[0], client.CreateOptions{Overwrite: true})
			if err != nil {
				return err
			}
			w.Write([]byte("not what was acknowledged"))
			if err := w.Close(); err != nil {
				return err
			}
			ls, err := fs.List(ctx, jobs[0])
			if err != nil {
				return err
			}
			for _, e := range ls {
				if strings.HasPrefix(e.Name, "part-") {
					broken = append(broken, files[0], jobs[0])
					return fs.Delete(ctx, e.Path, false)
				}
			}
			t.Fatalf("control: no part file in %s: %+v", jobs[0], ls)
			return nil
		}})
	if err != nil {
		t.Fatalf("control run: %v\n%s", err, log.String())
	}
	lost := strings.Join(rep.Lost, "\n")
	for _, b := range broken {
		if !strings.Contains(lost, b) {
			t.Errorf("control: %s was broken on purpose and not reported lost; lost:\n%s", b, lost)
		}
	}
	if len(broken) != 2 || len(rep.Lost) != 2 {
		t.Errorf("control: broke %v, lost %d:\n%s", broken, len(rep.Lost), lost)
	}
}
