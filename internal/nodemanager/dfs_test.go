package nodemanager_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/nodemanager"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// These tests run the whole stack in one process on the real DFS: a
// testcluster namenode and datanodes dn1..dn3, the resource manager, a
// node manager per datanode host (reading and writing through smarth's
// client with ClientHost = its hostname) and the job client.

// slowCount is a test app: word count whose maps wait map_delay first,
// so a node can be stopped or the job killed while maps run.
type slowCount struct{}

func (slowCount) Name() string              { return "slowcount" }
func (slowCount) Description() string       { return "word count with slow maps (test)" }
func (slowCount) Params() []mapreduce.Param { return nil }
func (slowCount) Build(p map[string]string) (*mapreduce.Job, error) {
	n, err := strconv.Atoi(p["reduces"])
	if err != nil {
		return nil, fmt.Errorf("reduces: %w", err)
	}
	delay, _ := time.ParseDuration(p["map_delay"])
	return &mapreduce.Job{Params: p, Input: []string{p["input"]}, Output: p["output"], NumReduces: n,
		NewMapper:   func() mapreduce.Mapper { return &slowMapper{delay: delay} },
		NewReducer:  func() mapreduce.Reducer { return sum{} },
		NewCombiner: func() mapreduce.Reducer { return sum{} },
	}, nil
}

type slowMapper struct{ delay time.Duration }

func (m *slowMapper) Setup(ctx mapreduce.TaskContext) error {
	t := time.NewTimer(m.delay) // the slowness under test, not a wait for a condition
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *slowMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
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
		v, err := strconv.ParseInt(string(vs.Value()), 10, 64)
		if err != nil {
			return err
		}
		n += v
	}
	return out.Emit(k, strconv.AppendInt(nil, n, 10))
}

// dfsCluster starts a 3-datanode DFS with small blocks and replication 1
// (so each block is on one host and locality means something), racks
// /r1 /r1 /r2, and a MapReduce cluster on it whose node managers are
// configured with a wrong rack: the namenode's view must win.
func dfsCluster(t *testing.T, rmOpts func(*mrtest.Options)) (*testcluster.Cluster, *mrtest.Cluster) {
	t.Helper()
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 3, Racks: []string{"/r1", "/r1", "/r2"},
		BlockSize: 32 << 10, Replication: 1})
	reg := mapreduce.NewRegistry(append(apps.AllWith(apps.Options{Out: io.Discard}), slowCount{})...)
	o := mrtest.Options{DFS: dfs, Registry: reg, Racks: []string{"/wrong", "/wrong", "/wrong"}}
	if rmOpts != nil {
		rmOpts(&o)
	}
	return dfs, mrtest.Start(t, o)
}

// writeText writes lines of random words to p and returns the count of
// each word.
func writeText(t *testing.T, fsys mapreduce.FS, p string, lines int) map[string]int64 {
	t.Helper()
	r := rand.New(rand.NewPCG(7, uint64(lines)))
	want := map[string]int64{}
	var b bytes.Buffer
	for range lines {
		for j := range 1 + r.IntN(10) {
			w := fmt.Sprintf("w%d", r.IntN(300))
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			want[w]++
		}
		b.WriteByte('\n')
	}
	w, err := fsys.Create(t.Context(), p, mapreduce.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// readCounts parses "word\tcount" lines of every part file of dir.
func readCounts(t *testing.T, fsys mapreduce.FS, dir string) map[string]int64 {
	t.Helper()
	files, err := mapreduce.InputFiles(t.Context(), fsys, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, f := range files {
		r, err := fsys.Open(t.Context(), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "\t")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: bad line %q", f.Path, sc.Text())
			}
			got[k] += n
		}
		r.Close()
	}
	return got
}

func sameCounts(t *testing.T, got, want map[string]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("output has %d words, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("count of %s = %d, want %d", k, got[k], v)
		}
	}
}

func TestWordCountOnDFS(t *testing.T) {
	_, mr := dfsCluster(t, nil)
	want := writeText(t, mr.FS(), "/in/text", 12000) // ~0.3 MB: about 10 blocks of 32 KiB
	// Racks come from the namenode's datanode report, not the node
	// managers' configured (wrong) rack.
	mr.WaitFor(t, "node managers to take their racks from the namenode", func() bool {
		for _, n := range mr.RM().Nodes() {
			if want := map[string]string{"dn1": "/r1", "dn2": "/r1", "dn3": "/r2"}[n.Host]; n.Rack != want {
				return false
			}
		}
		return true
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := mr.Client().Run(ctx, "wordcount", map[string]string{"input": "/in", "output": "/out", "reduces": "2"})
	if err != nil {
		t.Fatal(err)
	}
	sameCounts(t, readCounts(t, mr.FS(), "/out"), want)
	if _, err := mr.FS().Stat(ctx, "/out/_SUCCESS"); err != nil {
		t.Errorf("no _SUCCESS marker: %v", err)
	}
	if _, err := mr.FS().Stat(ctx, "/out/_temporary"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("_temporary left behind (stat: %v)", err)
	}
	jc := res.Counters[mapreduce.GroupJob]
	maps := jc[mapreduce.LaunchedMaps]
	if maps < 5 {
		t.Fatalf("%d maps for ~10 blocks: %v", maps, jc)
	}
	if jc[mapreduce.DataLocalMaps] == 0 || jc[mapreduce.DataLocalMaps]+jc[mapreduce.RackLocalMaps]+jc[mapreduce.OtherLocalMaps] != maps {
		t.Errorf("job counters %v: want data-local maps, each map counted once by locality", jc)
	}
	st, err := mr.FS().Stat(ctx, "/in/text")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Counters[mapreduce.GroupInput][mapreduce.BytesRead]; got != st.Size {
		t.Errorf("BYTES_READ = %d, want the input's %d bytes", got, st.Size)
	}
	var outBytes int64
	files, _ := mapreduce.InputFiles(ctx, mr.FS(), []string{"/out"})
	for _, f := range files {
		outBytes += f.Size
	}
	if got := res.Counters[mapreduce.GroupOutput][mapreduce.BytesWritten]; got != outBytes {
		t.Errorf("BYTES_WRITTEN = %d, want the output files' %d bytes", got, outBytes)
	}
	// File System Counters: the tasks read the input from the DFS (each
	// split's reader reads on to the end of its last line, through a
	// 256 KiB buffer, so a little more than the input) and wrote the
	// output files to it, byte for byte.
	fsc := res.Counters[mapreduce.GroupFS]
	if got := fsc[mapreduce.HDFSBytesRead]; got < st.Size || got > st.Size+maps*(256<<10) {
		t.Errorf("HDFS_BYTES_READ = %d, want the input's %d bytes plus at most a read buffer per map (%d maps)", got, st.Size, maps)
	}
	if got := fsc[mapreduce.HDFSBytesWritten]; got != outBytes {
		t.Errorf("HDFS_BYTES_WRITTEN = %d, want the output files' %d bytes", got, outBytes)
	}
}

func TestNodeManagerStoppedMidJobOnDFS(t *testing.T) {
	_, mr := dfsCluster(t, func(o *mrtest.Options) {
		o.NM = func(i int, c *nodemanager.Config) {
			if i > 0 { // dn2 and dn3 write map output to disk, dn1 keeps it in memory
				c.MapOutputMemoryBytes = 0
			}
		}
	})
	want := writeText(t, mr.FS(), "/in/text", 12000)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	id, err := mr.Client().Submit(ctx, "slowcount", map[string]string{"input": "/in", "output": "/out",
		"reduces": "2", "map_delay": "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	// Once some maps are done (so finished map output is lost too) and
	// reduces run (slow start), stop a node manager that is running tasks:
	// the job cannot end without the resource manager noticing.
	victim := -1
	mr.WaitFor(t, "3 finished maps, a running reduce and a node running tasks", func() bool {
		st, err := mr.Client().Status(ctx, id)
		if err != nil || st.GetState() != mapreduce.StateRunning {
			t.Fatalf("status %v, %v", st, err)
		}
		if st.GetMapsDone() < 3 || st.GetReducesRunning() == 0 {
			return false
		}
		for i := range 3 {
			if mr.NodeManager(i).Running() > 0 {
				victim = i
				return true
			}
		}
		return false
	})
	host := mr.NodeManager(victim).ID()
	mr.StopNodeManager(victim)
	res, err := mr.Client().Wait(ctx, id)
	if err != nil {
		t.Fatalf("job did not survive a stopped node manager: %v", err)
	}
	sameCounts(t, readCounts(t, mr.FS(), "/out"), want)
	jc := res.Counters[mapreduce.GroupJob]
	if jc[mapreduce.LaunchedMaps]+jc[mapreduce.LaunchedReduces] <= 10+2 {
		t.Errorf("job counters %v: the stopped node's attempts were not launched again", jc)
	}
	mr.WaitFor(t, "the resource manager to forget the stopped node manager", func() bool {
		for _, n := range mr.RM().Nodes() {
			if n.ID == host {
				return false
			}
		}
		return true
	})
	t.Logf("job counters after losing %s: %v", host, jc)
}

func TestKilledJobLeavesNoOutputOnDFS(t *testing.T) {
	_, mr := dfsCluster(t, nil)
	writeText(t, mr.FS(), "/in/text", 12000)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	id, err := mr.Client().Submit(ctx, "slowcount", map[string]string{"input": "/in", "output": "/out",
		"reduces": "1", "map_delay": "100ms"})
	if err != nil {
		t.Fatal(err)
	}
	// Kill once some maps have written output and others still run.
	mr.WaitFor(t, "a finished map and a running one", func() bool {
		st, err := mr.Client().Status(ctx, id)
		if err != nil || st.GetState() != mapreduce.StateRunning {
			t.Fatalf("status %v, %v", st, err)
		}
		return st.GetMapsDone() >= 1 && st.GetMapsRunning() > 0
	})
	if err := mr.Client().Kill(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err := mr.Client().Wait(ctx, id)
	if err == nil || res == nil || res.State != mapreduce.StateKilled {
		t.Fatalf("Wait after kill = %+v, %v; want KILLED", res, err)
	}
	if _, err := mr.FS().Stat(ctx, "/out"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("killed job left its output directory (stat: %v)", err)
	}
	// Nothing of the job is left on the node managers' disks either: they
	// drop a finished job's map output.
	mr.WaitFor(t, "node managers to drop the killed job's map output", func() bool {
		for i := range 3 {
			if mr.NodeManager(i).HeldOutputs(id) > 0 {
				return false
			}
		}
		return true
	})
}
