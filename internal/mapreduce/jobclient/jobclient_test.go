package jobclient_test

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

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/testcluster/mrtest"
)

// lineCount counts input lines into one "lines\tN" record; map_delay
// slows each map down.
type lineCount struct{}

func (lineCount) Name() string              { return "lines" }
func (lineCount) Description() string       { return "count lines (test)" }
func (lineCount) Params() []mapreduce.Param { return nil }
func (lineCount) Build(p map[string]string) (*mapreduce.Job, error) {
	delay, _ := time.ParseDuration(p["map_delay"])
	return &mapreduce.Job{Params: p, Input: []string{p["input"]}, Output: p["output"], NumReduces: 1,
		NewMapper:  func() mapreduce.Mapper { return lineMapper{delay: delay} },
		NewReducer: func() mapreduce.Reducer { return total{} },
	}, nil
}

type lineMapper struct{ delay time.Duration }

func (m lineMapper) Setup(ctx mapreduce.TaskContext) error {
	t := time.NewTimer(m.delay) // the slowness under test
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (lineMapper) Map(ctx mapreduce.TaskContext, _, _ []byte, out mapreduce.Emitter) error {
	return out.Emit([]byte("lines"), []byte("1"))
}

type total struct{}

func (total) Reduce(ctx mapreduce.TaskContext, k []byte, vs mapreduce.ValueIterator, out mapreduce.Emitter) error {
	n := 0
	for vs.Next() {
		n++
	}
	return out.Emit(k, []byte(strconv.Itoa(n)))
}

// twice is a Driver: it runs lines over its input into <output>/a and
// <output>/b.
type twice struct{}

func (twice) Name() string              { return "twice" }
func (twice) Description() string       { return "two line counts (test driver)" }
func (twice) Params() []mapreduce.Param { return nil }
func (twice) Build(p map[string]string) (*mapreduce.Job, error) {
	return nil, errors.New("twice is a driver")
}
func (twice) Drive(ctx context.Context, r mapreduce.Runner, p map[string]string) error {
	for _, sub := range []string{"a", "b"} {
		if _, err := r.Run(ctx, "lines", map[string]string{"input": p["input"], "output": p["output"] + "/" + sub}); err != nil {
			return err
		}
	}
	return nil
}

func startMR(t *testing.T) (*mrtest.Cluster, *mapreduce.LocalFS) {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "fs"))
	if err != nil {
		t.Fatal(err)
	}
	lfs.BlockSize = 1 << 10
	var b bytes.Buffer
	for i := range 500 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	if err := os.WriteFile(filepath.Join(lfs.Root, "in", "text"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return mrtest.Start(t, mrtest.Options{FS: lfs, Registry: mapreduce.NewRegistry(lineCount{}, twice{})}), lfs
}

func readOut(t *testing.T, lfs *mapreduce.LocalFS, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(lfs.Root, dir, "part-r-00000"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestRunStatusList(t *testing.T) {
	mr, lfs := startMR(t)
	jc := mr.Client()
	var polled int
	jc2, err := jobclient.New(jobclient.Config{ResourceManager: mr.RM().RPCAddr(), FS: lfs, Registry: mapreduce.NewRegistry(lineCount{}),
		PollInterval: 10 * time.Millisecond, Progress: func(*mrpb.JobStatus) { polled++ }})
	if err != nil {
		t.Fatal(err)
	}
	defer jc2.Close()
	res, err := jc2.Run(t.Context(), "lines", map[string]string{"input": "/in", "output": "/out"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readOut(t, lfs, "out"); got != "lines\t500" {
		t.Fatalf("output %q, want lines\\t500", got)
	}
	if res.State != mapreduce.StateSucceeded || res.Elapsed <= 0 || res.Counters[mapreduce.GroupTask][mapreduce.MapInputRecords] != 500 {
		t.Errorf("result %+v", res)
	}
	if polled == 0 {
		t.Error("progress callback never called")
	}
	st, err := jc.Status(t.Context(), res.JobID)
	if err != nil || st.GetState() != mapreduce.StateSucceeded || st.GetApp() != "lines" {
		t.Errorf("Status = %v, %v", st, err)
	}
	jobs, err := jc.List(t.Context())
	if err != nil || len(jobs) != 1 || jobs[0].GetJobId() != res.JobID {
		t.Errorf("List = %v, %v", jobs, err)
	}
	if _, err := jc.Status(t.Context(), "job_nope"); err == nil || !strings.Contains(err.Error(), "no job job_nope") {
		t.Errorf("Status of an unknown job = %v", err)
	}
}

func TestErrorsBeforeSubmit(t *testing.T) {
	mr, _ := startMR(t)
	jc := mr.Client()
	if _, err := jc.Run(t.Context(), "nosuchapp", nil); err == nil || !strings.Contains(err.Error(), `unknown app "nosuchapp"`) ||
		!strings.Contains(err.Error(), "lines") {
		t.Errorf("unknown app: %v", err)
	}
	if _, err := jc.Run(t.Context(), "lines", map[string]string{"input": "/missing", "output": "/o"}); err == nil ||
		!strings.Contains(err.Error(), "Input path does not exist: /missing") {
		t.Errorf("missing input: %v", err)
	}
	if _, err := jc.Run(t.Context(), "lines", map[string]string{"input": "/in", "output": "/in"}); err == nil ||
		!strings.Contains(err.Error(), "output directory /in already exists") {
		t.Errorf("existing output: %v", err)
	}
	if jobs, _ := jc.List(t.Context()); len(jobs) != 0 {
		t.Errorf("%d jobs reached the resource manager, want none", len(jobs))
	}
}

func TestUnreachableResourceManager(t *testing.T) {
	lfs, _ := mapreduce.NewLocalFS(t.TempDir())
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	os.WriteFile(filepath.Join(lfs.Root, "in", "x"), []byte("a\n"), 0o644)
	jc, err := jobclient.New(jobclient.Config{ResourceManager: "127.0.0.1:1", FS: lfs,
		Registry: mapreduce.NewRegistry(lineCount{}), RPCTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	_, err = jc.Run(t.Context(), "lines", map[string]string{"input": "/in", "output": "/out"})
	if err == nil || !strings.Contains(err.Error(), "resource manager 127.0.0.1:1 is not reachable") {
		t.Errorf("Run against no resource manager = %v", err)
	}
	if _, err := jobclient.New(jobclient.Config{}); err == nil {
		t.Error("New without an address succeeded")
	}
}

// A cancelled Wait kills the job, whose output is then removed.
func TestCancelledWaitKillsJob(t *testing.T) {
	mr, lfs := startMR(t)
	jc := mr.Client()
	id, err := jc.Submit(t.Context(), "lines", map[string]string{"input": "/in", "output": "/out", "map_delay": "10s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	mr.WaitFor(t, "maps to run", func() bool {
		st, err := jc.Status(t.Context(), id)
		return err == nil && st.GetMapsRunning() > 0
	})
	cancel()
	if _, err := jc.Wait(ctx, id); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Wait with a cancelled context = %v, want killed", err)
	}
	mr.WaitFor(t, "the job to end KILLED", func() bool {
		st, err := jc.Status(t.Context(), id)
		return err == nil && st.GetState() == mapreduce.StateKilled
	})
	if _, err := os.Stat(filepath.Join(lfs.Root, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("killed job's output still there (stat: %v)", err)
	}
}

func TestDriverRunsItsJobsOnTheCluster(t *testing.T) {
	mr, lfs := startMR(t)
	res, err := mr.Client().Run(t.Context(), "twice", map[string]string{"input": "/in", "output": "/two"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != mapreduce.StateSucceeded || !strings.HasPrefix(res.JobID, "driver_") {
		t.Errorf("driver result %+v", res)
	}
	for _, d := range []string{"two/a", "two/b"} {
		if got := readOut(t, lfs, d); got != "lines\t500" {
			t.Errorf("%s: %q", d, got)
		}
	}
	if jobs, _ := mr.Client().List(t.Context()); len(jobs) != 2 {
		t.Errorf("the driver ran %d jobs, want 2", len(jobs))
	}
}
