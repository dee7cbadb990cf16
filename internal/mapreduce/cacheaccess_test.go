package mapreduce

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
)

// cachingFS is a LocalFS that records cache accesses, as the DFS adapter
// would send them, and whose files say a datanode served every block.
type cachingFS struct {
	*LocalFS
	datanode string
	fail     bool

	mu       sync.Mutex // guards accesses
	accesses []CacheAccess
}

func (c *cachingFS) ReportCacheAccess(ctx context.Context, a CacheAccess) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accesses = append(c.accesses, a)
	if c.fail {
		return errors.New("namenode unreachable")
	}
	return nil
}

func (c *cachingFS) Open(ctx context.Context, p string) (File, error) {
	f, err := c.LocalFS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return servedFile{File: f, datanode: c.datanode}, nil
}

type servedFile struct {
	File
	datanode string
}

func (s servedFile) ServedBy(block uint64) string { return s.datanode }

func runOneMap(t *testing.T, fsys FS, split Split, params map[string]string) {
	t.Helper()
	params["output"] = "/out"
	job, err := wordCount{}.Build(params)
	if err != nil {
		t.Fatal(err)
	}
	env := TaskEnv{FS: fsys, WorkDir: t.TempDir(), SortBufferBytes: 1 << 20, Host: "dn2"}
	if err := SetupJob(context.Background(), fsys, "/out", "job_1"); err != nil && !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
	spec := TaskSpec{JobID: "job_1", AttemptID: "attempt_job_1_m_000000_0", Job: job, IsMap: true, Split: split}
	if _, err := RunTask(context.Background(), env, spec); err != nil {
		t.Fatal(err)
	}
}

func TestMapReportsCacheAccess(t *testing.T) {
	lfs, err := NewLocalFS(filepath.Join(t.TempDir(), "fs"))
	if err != nil {
		t.Fatal(err)
	}
	genText(t, lfs, "/in/a", 100, 1)
	st, _ := lfs.Stat(context.Background(), "/in/a")
	cfs := &cachingFS{LocalFS: lfs, datanode: "uuid-dn3"}
	split := Split{Path: "/in/a", Length: st.Size, Hosts: []string{"dn3"}, BlockID: 1073741825}

	runOneMap(t, cfs, split, map[string]string{"reduces": "1", ParamCacheAffinity: "0.6"})
	want := CacheAccess{BlockID: 1073741825, App: "wc", JobID: "job_1", Host: "dn2", Datanode: "uuid-dn3", Affinity: 0.6}
	if len(cfs.accesses) != 1 {
		t.Fatalf("accesses = %+v, want one %+v", cfs.accesses, want)
	}
	// The read's bytes and time go with it (the learned affinity's sample).
	got := cfs.accesses[0]
	if got.ReadBytes != st.Size || got.ReadTime <= 0 {
		t.Errorf("read %d bytes in %v, want the split's %d bytes in some time", got.ReadBytes, got.ReadTime, st.Size)
	}
	if got.TaskTime < got.ReadTime {
		t.Errorf("task ran %v, read %v: want the task's time, reads included", got.TaskTime, got.ReadTime)
	}
	got.ReadBytes, got.ReadTime, got.TaskTime = 0, 0, 0
	if got != want {
		t.Fatalf("access = %+v, want %+v", got, want)
	}

	// No affinity given: -1, the namenode's configured value. A failing
	// report does not fail the task.
	cfs.accesses, cfs.fail = nil, true
	runOneMap(t, cfs, split, map[string]string{"reduces": "1", "output": "/out2"})
	if len(cfs.accesses) != 1 || cfs.accesses[0].Affinity != -1 {
		t.Fatalf("accesses = %+v, want one with affinity -1", cfs.accesses)
	}

	// A split without a block (generated input, whole files) reports nothing.
	cfs.accesses = nil
	split.BlockID = 0
	runOneMap(t, cfs, split, map[string]string{"reduces": "0", "output": "/out3"})
	if len(cfs.accesses) != 0 {
		t.Fatalf("accesses = %+v for a split without a block id, want none", cfs.accesses)
	}
}

func TestCacheAffinityParam(t *testing.T) {
	for v, want := range map[string]float64{"": -1, "0": 0, "0.25": 0.25, "1": 1, "1.5": -1, "-0.1": -1, "x": -1} {
		if got := cacheAffinity(map[string]string{ParamCacheAffinity: v}); got != want {
			t.Errorf("cache_affinity %q: got %v, want %v", v, got, want)
		}
	}
}
