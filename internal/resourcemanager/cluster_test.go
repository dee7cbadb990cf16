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
)

// These tests run the real resource manager, node managers, shuffle and
// job client in one process over a local directory standing in for the
// DFS (blocks reported on hosts dn1..dn3), so they need no namenode.

type hostFS struct {
	*mapreduce.LocalFS
	hosts []string
}

func (h hostFS) BlockLocations(ctx context.Context, p string, off, n int64) ([]mapreduce.BlockLocation, error) {
	locs, err := h.LocalFS.BlockLocations(ctx, p, off, n)
	for i := range locs {
		host := h.hosts[int(locs[i].Offset/h.LocalFS.BlockSize)%len(h.hosts)]
		locs[i].Hosts, locs[i].Racks = []string{host}, []string{"/r1"}
	}
	return locs, err
}

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

type miniCluster struct {
	root string
	fs   hostFS
	rm   *resourcemanager.ResourceManager
	nms  []*nodemanager.NodeManager
	jc   *jobclient.Client
}

func startCluster(t *testing.T, scheduler string) *miniCluster {
	t.Helper()
	return startClusterWith(t, scheduler, nil, nil)
}

// startClusterWith starts a cluster whose resource manager config rmCfg
// adjusts and whose node managers see the file system through users
// (nil: the same LocalFS for everyone).
func startClusterWith(t *testing.T, scheduler string, rmCfg func(*resourcemanager.Config), users func(mapreduce.FS) mapreduce.UserFS) *miniCluster {
	t.Helper()
	root := t.TempDir()
	lfs, _ := mapreduce.NewLocalFS(filepath.Join(root, "dfs"))
	lfs.BlockSize = 4 << 10
	c := &miniCluster{root: root, fs: hostFS{lfs, []string{"dn1", "dn2", "dn3"}}}
	reg := mapreduce.NewRegistry(wc{})
	cfg := resourcemanager.DefaultConfig()
	cfg.Auth = auth.Simple // callers assert their names here (secure_test.go covers secure)
	cfg.RPCAddr, cfg.HTTPAddr, cfg.FS, cfg.Scheduler = "127.0.0.1:0", "127.0.0.1:0", c.fs, scheduler
	cfg.HeartbeatInterval, cfg.NodeTimeout, cfg.NodeSkips, cfg.RackSkips = 30*time.Millisecond, time.Second, 1, 2
	if users != nil {
		cfg.UserFS = users(c.fs)
	}
	if rmCfg != nil {
		rmCfg(&cfg)
	}
	rm, err := resourcemanager.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rm.Close() })
	c.rm = rm
	// A secure resource manager takes heartbeats only from its
	// nodemanager_users, by default this OS user: the node managers carry
	// its credential.
	var nmToken string
	if cfg.Auth != auth.Simple {
		nmToken = serviceToken(t, cfg.AuthSecretFile)
	}
	for i := range 3 {
		nc := nodemanager.DefaultConfig()
		nc.ResourceManager, nc.FS, nc.Registry = rm.RPCAddr(), c.fs, reg
		nc.Hostname, nc.Rack, nc.WorkDir = fmt.Sprintf("dn%d", i+1), "/r1", filepath.Join(root, fmt.Sprintf("nm%d", i+1))
		nc.SortBufferBytes, nc.TokenFile = 64<<10, nmToken
		if users != nil {
			nc.UserFS = users(c.fs)
		}
		nm, err := nodemanager.New(nc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := nm.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nm.Close() })
		c.nms = append(c.nms, nm)
	}
	c.jc, err = jobclient.New(jobclient.Config{ResourceManager: rm.RPCAddr(), FS: c.fs, Registry: reg, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.jc.Close() })
	return c
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
	c.nms[0].Close()
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
