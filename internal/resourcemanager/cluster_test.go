package resourcemanager_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
	"smarth/internal/testcluster/mrtest"
)

// These tests run the real resource manager, node managers, shuffle and
// job client in one process over a local directory standing in for the
// DFS (blocks reported on hosts dn1..dn3), so they need no namenode.

type wc struct{}

func (wc) Name() string              { return "wc" }
func (wc) Description() string       { return "test word count" }
func (wc) Params() []mapreduce.Param { return nil }
func (wc) Build(p map[string]string) (*mapreduce.Job, error) {
	n, _ := strconv.Atoi(p["reduces"])
	delay, _ := time.ParseDuration(p["map_delay"])
	return &mapreduce.Job{Params: p, Input: []string{p["input"]}, Output: p["output"], NumReduces: n,
		NewMapper:   func() mapreduce.Mapper { return &wcMapper{fail: p["fail"] == "1", delay: delay} },
		NewReducer:  func() mapreduce.Reducer { return sum{} },
		NewCombiner: func() mapreduce.Reducer { return sum{} },
	}, nil
}

type wcMapper struct {
	fail  bool
	delay time.Duration
}

func (m *wcMapper) Setup(ctx mapreduce.TaskContext) error {
	if m.fail {
		return errors.New("this map fails on purpose")
	}
	select { // a slow map, so a node can be killed while the job runs
	case <-time.After(m.delay):
	case <-ctx.Done():
	}
	return nil
}

func (m *wcMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	for _, w := range bytes.Fields(line) {
		if err := out.Emit(w, []byte("1")); err != nil {
			return err
		}
	}
	return nil
}

type sum struct{}

func (sum) Reduce(ctx mapreduce.TaskContext, k []byte, vs mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var n int64
	for vs.Next() {
		v, _ := strconv.ParseInt(string(vs.Value()), 10, 64)
		n += v
	}
	return out.Emit(k, strconv.AppendInt(nil, n, 10))
}

// miniCluster is an mrtest cluster over a HostFS (blocks on dn1..dn3,
// 4 KiB blocks) running wc, with what the tests here reach for.
type miniCluster struct {
	*mrtest.Cluster
	fs mrtest.HostFS
	rm *resourcemanager.ResourceManager
	jc *jobclient.Client
}

func startCluster(t *testing.T, scheduler string) *miniCluster {
	t.Helper()
	return startClusterWith(t, scheduler, nil, nil)
}

// startClusterWith starts a cluster whose resource manager config rmCfg
// adjusts and whose node managers see the file system through users
// (nil: the same LocalFS for everyone), and waits for the node managers
// to register.
func startClusterWith(t *testing.T, scheduler string, rmCfg func(*resourcemanager.Config), users func(mapreduce.FS) mapreduce.UserFS) *miniCluster {
	t.Helper()
	return startMiniCluster(t, scheduler, rmCfg, users, false)
}

// startMiniCluster is startClusterWith; unregistered: do not wait for
// the node managers to register (the resource manager refuses them).
func startMiniCluster(t *testing.T, scheduler string, rmCfg func(*resourcemanager.Config), users func(mapreduce.FS) mapreduce.UserFS, unregistered bool) *miniCluster {
	t.Helper()
	lfs, _ := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	lfs.BlockSize = 4 << 10
	fs := mrtest.HostFS{LocalFS: lfs, Hosts: []string{"dn1", "dn2", "dn3"}}
	var nmToken string
	mr := mrtest.Start(t, mrtest.Options{FS: fs, Registry: mapreduce.NewRegistry(wc{}), Hosts: fs.Hosts,
		Racks: []string{"/r1", "/r1", "/r1"}, Scheduler: scheduler, HeartbeatInterval: 30 * time.Millisecond,
		NodeTimeout: time.Second, SortBufferBytes: 64 << 10, Unregistered: unregistered,
		RM: func(cfg *resourcemanager.Config) {
			// auth: simple unless rmCfg says otherwise: callers assert
			// their names here (secure_test.go covers secure).
			cfg.NodeSkips, cfg.RackSkips = 1, 2
			if users != nil {
				cfg.UserFS = users(fs)
			}
			if rmCfg != nil {
				rmCfg(cfg)
			}
			// A secure resource manager takes heartbeats only from its
			// nodemanager_users, by default this OS user: the node
			// managers carry its credential.
			if cfg.Auth != auth.Simple {
				nmToken = serviceToken(t, cfg.AuthSecretFile)
			}
		},
		NM: func(_ int, nc *nodemanager.Config) {
			nc.TokenFile = nmToken
			if users != nil {
				nc.UserFS = users(fs)
			}
		},
	})
	return &miniCluster{Cluster: mr, fs: fs, rm: mr.RM(), jc: mr.Client()}
}

func (c *miniCluster) writeInput(t *testing.T, lines int) map[string]int64 {
	t.Helper()
	want := map[string]int64{}
	var b strings.Builder
	for i := range lines {
		for j := range 1 + i%7 {
			w := fmt.Sprintf("w%d", (i*31+j*17)%211)
			want[w]++
			b.WriteString(w + " ")
		}
		b.WriteString("\n")
	}
	p := filepath.Join(c.fs.Root, "in", "text")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return want
}

func (c *miniCluster) checkOutput(t *testing.T, out string, want map[string]int64) {
	t.Helper()
	got := map[string]int64{}
	files, _ := filepath.Glob(filepath.Join(c.fs.Root, out, "part-r-*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, _ := strings.Cut(l, "\t")
			got[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("output has %d words in %d files, want %d", len(got), len(files), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("count of %s = %d, want %d", k, got[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(c.fs.Root, out, "_SUCCESS")); err != nil {
		t.Fatal("no _SUCCESS marker")
	}
}

func TestWordCountOnCluster(t *testing.T) {
	for _, s := range []string{"fifo", "delay"} {
		t.Run(s, func(t *testing.T) {
			c := startCluster(t, s)
			want := c.writeInput(t, 3000)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := c.jc.Run(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "3"})
			if err != nil {
				t.Fatal(err)
			}
			c.checkOutput(t, "/out", want)
			jc := res.Counters[mapreduce.GroupJob]
			maps := jc[mapreduce.LaunchedMaps]
			if maps < 5 || jc[mapreduce.DataLocalMaps]+jc[mapreduce.RackLocalMaps]+jc[mapreduce.OtherLocalMaps] != maps {
				t.Errorf("job counters %v: want several maps, each counted once by locality", jc)
			}
			if s == "delay" && jc[mapreduce.DataLocalMaps] == 0 {
				t.Errorf("delay scheduling launched no data-local map: %v", jc)
			}
			if res.Counters[mapreduce.GroupTask][mapreduce.ReduceShuffleBytes] == 0 {
				t.Error("no shuffle bytes counted")
			}
		})
	}
}

func TestNodeManagerLostMidJob(t *testing.T) {
	c := startCluster(t, "fifo")
	want := c.writeInput(t, 3000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := c.jc.Submit(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "2", "map_delay": "150ms"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until some maps are done (so completed map output is lost too),
	// then take a node away.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.jc.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.GetMapsDone() >= 3 {
			break
		}
		if time.Now().After(deadline) || st.GetState() != mapreduce.StateRunning {
			t.Fatalf("waiting for 3 finished maps: status %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.StopNodeManager(0)
	res, err := c.jc.Wait(ctx, id)
	if err != nil {
		t.Fatalf("job did not survive a lost node manager: %v", err)
	}
	c.checkOutput(t, "/out", want)
	t.Logf("job counters after losing a node: %v", res.Counters[mapreduce.GroupJob])
}

func TestFailingTaskFailsJobWithoutOutput(t *testing.T) {
	c := startCluster(t, "delay")
	c.writeInput(t, 100)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.jc.Run(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "1", "fail": "1"})
	if err == nil || !strings.Contains(err.Error(), "failed 4 times") || !strings.Contains(err.Error(), "this map fails on purpose") {
		t.Fatalf("Run = %v, want a failure naming the task and its error", err)
	}
	if res == nil || res.State != mapreduce.StateFailed || res.Counters[mapreduce.GroupJob][mapreduce.FailedMaps] < 4 {
		t.Errorf("result %+v: want FAILED with failed-map counters", res)
	}
	if _, err := os.Stat(filepath.Join(c.fs.Root, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed job left its output directory (stat: %v)", err)
	}
	// A second submission to an existing output is refused up front.
	os.MkdirAll(filepath.Join(c.fs.Root, "exists"), 0o755)
	if _, err := c.jc.Submit(ctx, "wc", map[string]string{"input": "/in", "output": "/exists", "reduces": "1"}); err == nil ||
		!strings.Contains(err.Error(), "already exists") {
		t.Errorf("submit to an existing output = %v", err)
	}
}

func TestKillJobRemovesOutput(t *testing.T) {
	c := startCluster(t, "fifo")
	c.writeInput(t, 3000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := c.jc.Submit(ctx, "wc", map[string]string{"input": "/in", "output": "/out", "reduces": "1", "map_delay": "5s"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for { // wait until maps run, so there are attempts to kill
		st, err := c.jc.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.GetMapsRunning() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for running maps: %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.jc.Kill(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err := c.jc.Wait(ctx, id)
	if err == nil || res == nil || res.State != mapreduce.StateKilled {
		t.Fatalf("Wait after kill = %+v, %v; want KILLED", res, err)
	}
	if _, err := os.Stat(filepath.Join(c.fs.Root, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("killed job left its output directory (stat: %v)", err)
	}
	if err := c.jc.Kill(ctx, id); err == nil || !strings.Contains(err.Error(), "already finished") {
		t.Errorf("second kill = %v, want 'already finished'", err)
	}
}
