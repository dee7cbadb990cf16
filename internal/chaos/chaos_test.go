package chaos_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
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

	// Control: the same verification, with a promise of each kind broken
	// on purpose behind the load's back. The load keeps up to 24 files, so
	// that at its end two living files have been renamed: with 6, the
	// load's deletes (a third of its ops at the cap) had taken every
	// renamed file but one in a CI run, leaving nothing to break.
	var broken []string
	rep, err = chaos.Run(ctx, chaos.Options{Home: home, Duration: 15 * time.Second, Interval: 4 * time.Second,
		MaxDown: time.Second, Seed: 15, Kinds: []string{"datanode"}, MaxFileSize: 256 << 10, MaxFiles: 24, Dir: "/chaos/control", Out: &log,
		BeforeVerify: func(ctx context.Context, fs *client.FileSystem, p chaos.Promises) error {
			broken = breakOneOfEach(ctx, t, fs, p)
			return nil
		}})
	if err != nil {
		t.Fatalf("control run: %v\n%s", err, log.String())
	}
	sum.Reset()
	rep.Print(&sum)
	t.Logf("control:\n%s", sum.String())
	var lost []string
	for _, l := range rep.Lost {
		lost = append(lost, l.What)
	}
	for _, b := range broken {
		if !slices.ContainsFunc(lost, func(l string) bool { return strings.Contains(l, b) }) {
			t.Errorf("control: %s was broken on purpose and not reported lost", b)
		}
	}
	if len(broken) != 5 || len(rep.Lost) != 5 {
		t.Errorf("control: broke %v, lost %d", broken, len(rep.Lost))
	}
}

// breakOneOfEach breaks one promise of each kind with the run's client,
// as a lost edit or replica would: an acknowledged put's content, a
// renamed file's new name, a renamed file's old name (back), an
// acknowledged delete (undone), a job's output. It returns the paths each
// loss must name.
func breakOneOfEach(ctx context.Context, t *testing.T, fs *client.FileSystem, p chaos.Promises) []string {
	var renamed [][2]string
	for _, r := range p.Renamed {
		if len(renamed) < 2 && !slices.ContainsFunc(renamed, func(x [2]string) bool { return x[1] == r[1] }) {
			renamed = append(renamed, r)
		}
	}
	var plain string
	for _, f := range p.Files {
		if !slices.ContainsFunc(renamed, func(x [2]string) bool { return x[1] == f }) {
			plain = f
			break
		}
	}
	if len(renamed) < 2 || plain == "" || len(p.Deleted) == 0 || len(p.JobOutputs) == 0 {
		t.Fatalf("control: promises %+v; need two renamed files, another file, a delete and a job to break", p)
	}
	write := func(name, text string, overwrite bool) {
		w, err := fs.Create(ctx, name, client.CreateOptions{Overwrite: overwrite})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(plain, "not what was acknowledged", true)
	write(renamed[0][0], "back under its old name", false)
	if err := fs.Delete(ctx, renamed[1][1], false); err != nil {
		t.Fatal(err)
	}
	write(p.Deleted[0], "deleted, and back", false)
	ls, err := fs.List(ctx, p.JobOutputs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ls {
		if strings.HasPrefix(e.Name, "part-") {
			if err := fs.Delete(ctx, e.Path, false); err != nil {
				t.Fatal(err)
			}
			return []string{plain, renamed[0][0], renamed[1][1], p.Deleted[0], p.JobOutputs[0]}
		}
	}
	t.Fatalf("control: no part file in %s: %+v", p.JobOutputs[0], ls)
	return nil
}
