package mapreduce

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Defaults of the task engine's memory bounds.
const (
	DefaultSortBufferBytes = 96 << 20 // map-side arena per map task (Hadoop: io.sort.mb 100)
	// Fetched segments kept in memory per reduce task: about Hadoop's
	// (70% of a 1 GiB reduce heap), and enough for a 1 GiB TeraSort's two
	// reduces to shuffle without touching disk.
	DefaultReduceMemoryBytes = 768 << 20
	DefaultParallelFetches   = 4
	DefaultMaxAttempts       = 4
)

// MapOutput is a map task's sorted, partitioned output: Index[r] is
// reduce r's segment of the file at Path, or of Data when the output is
// held in memory (TaskEnv.MapOutputMemory).
type MapOutput struct {
	Path  string
	Data  []byte
	Index []SegmentIndex

	budget *MemoryBudget // Data's bytes are reserved here until Release
}

// Release gives an in-memory output's bytes back to the budget they were
// taken from; the holder calls it when it forgets the output. The bytes
// stay valid for whoever still reads them.
func (o *MapOutput) Release() {
	if o != nil && o.budget != nil {
		o.budget.Release(int64(len(o.Data)))
		o.budget = nil
	}
}

// MapOutputRef tells a reduce task where one map's output lives.
type MapOutputRef struct {
	MapIndex int
	Attempt  string
	Addr     string // shuffle address of the node holding it ("" = this process)
}

// Fetcher fetches partition reduce of a map's output (HTTP between node
// managers, a local file in the local runner).
type Fetcher interface {
	Fetch(ctx context.Context, ref MapOutputRef, reduce int) (rc io.ReadCloser, size int64, err error)
}

// MapLocator tells a running reduce task where the outputs of its job's
// finished maps are. With one, a reduce can be launched while maps still
// run (Hadoop's reduce slow start) and fetch each output as soon as its
// map is done; without one, TaskSpec.Inputs must name every map output.
type MapLocator interface {
	// MapOutputs returns the current output of every map finished so far
	// (in any order). It may wait a while (a poll interval) for news, and
	// returns an error when the attempt should stop.
	MapOutputs(ctx context.Context) ([]MapOutputRef, error)
}

// FetchError is returned by a reduce task that could not fetch a map's
// output; the scheduler re-runs that map.
type FetchError struct {
	MapIndex int
	Attempt  string
	Err      error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("fetch output of map %d (%s): %v", e.MapIndex, e.Attempt, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// TaskSpec is one task attempt to run.
type TaskSpec struct {
	JobID     string
	AttemptID string
	Job       *Job // rebuilt from the app and params where the task runs
	IsMap     bool
	Index     int
	NumMaps   int
	Split     Split // map tasks
	// Inputs are the map outputs a reduce task knows at launch: every one
	// (local runner, launch after the map phase) or those finished so far
	// (slow start, the rest come from TaskEnv.Locator).
	Inputs []MapOutputRef
}

// TaskEnv is what the process running a task provides.
type TaskEnv struct {
	FS                FS
	WorkDir           string // private to this attempt; spills and fetched segments
	SortBufferBytes   int
	ReduceMemoryBytes int64
	ParallelFetches   int
	Fetcher           Fetcher
	// Locator, if set, tells a reduce about map outputs not in
	// TaskSpec.Inputs as their maps finish.
	Locator MapLocator
	// SortBuffers, if set, recycles map sort buffers between the tasks of
	// this process.
	SortBuffers *SortBuffers
	// MapOutputMemory, if set, lets a map keep its final output in memory
	// while the budget allows (no write to and read from the page cache;
	// reduces on the same node use the bytes without a copy). The holder
	// of the output releases it.
	MapOutputMemory *MemoryBudget
	// Progress, if set, receives input bytes consumed (maps) or fetched
	// (reduces) as the task goes, for progress reports.
	Progress *atomic.Int64
	Logger   *slog.Logger
	// Host is the node's hostname as the DFS knows it (the node manager's
	// ClientHost), sent with map tasks' cache accesses.
	Host string
	// Stderr, if set, receives what the attempt writes for its operator
	// (a Streaming command's stderr); the node manager keeps it as the
	// attempt's log. Apps reach it through TaskStderr.
	Stderr io.Writer
	// Commands, if set, starts the processes of the task's user code (a
	// Streaming command) in the attempt's container; apps reach it
	// through TaskCommands. Unset, they run as this process's user with
	// its environment.
	Commands CommandStarter
}

// A task's container request, as job parameters (Hadoop's
// mapreduce.map.memory.mb and mapreduce.map.cpu.vcores, for maps and
// reduces alike): its user code's memory limit and CPU share. Apps that
// run user code offer them as flags.
const (
	ParamMemoryMB       = "memory-mb"
	ParamVCores         = "vcores"
	DefaultTaskMemoryMB = 1024
	DefaultTaskVCores   = 1
)

// CommandStarter starts a task's user code (the node manager's
// container for the attempt).
type CommandStarter interface {
	// Ready prepares what commands need (the container's user, work
	// directory, cgroup) or says why none may run; called before a
	// command's pipes are made.
	Ready() error
	// Start starts cmd (Path, Args, pipes and SysProcAttr set) with env,
	// the task's variables (NAME=value), added to the environment the
	// starter gives it.
	Start(cmd *exec.Cmd, env []string) error
}

// TaskResult is what a successful attempt reports.
type TaskResult struct {
	Counters map[string]map[string]int64
	Output   *MapOutput // map tasks of jobs with reduces
}

type taskContext struct {
	context.Context
	stderr   io.Writer // nil: none kept
	params   map[string]string
	counters *Counters
	fs       FS
	index    int
	commands CommandStarter // nil: none
	usage    *taskUsage     // nil outside RunTask
}

func (t *taskContext) Param(name string) string          { return t.params[name] }
func (t *taskContext) Count(group, name string, n int64) { t.counters.Add(group, name, n) }
func (t *taskContext) FS() FS                            { return t.fs }
func (t *taskContext) TaskIndex() int                    { return t.index }

// TaskStderr is where a task writes diagnostics for its operator: the
// attempt's stderr log when the runtime keeps one, else io.Discard.
func TaskStderr(ctx context.Context) io.Writer {
	if t, ok := ctx.(*taskContext); ok && t.stderr != nil {
		return t.stderr
	}
	return io.Discard
}

// TaskCommands is what starts a task's user code, or nil when the
// runtime has nothing to say (the command then runs as this process's
// user with its environment).
func TaskCommands(ctx context.Context) CommandStarter {
	if t, ok := ctx.(*taskContext); ok {
		return t.commands
	}
	return nil
}

// OutputName names a task's output file, as Hadoop does.
func OutputName(isMap bool, index int) string {
	if isMap {
		return fmt.Sprintf("part-m-%05d", index)
	}
	return fmt.Sprintf("part-r-%05d", index)
}

// RunTask runs one task attempt to completion in this goroutine.
func RunTask(ctx context.Context, env TaskEnv, spec TaskSpec) (*TaskResult, error) {
	// Spills and map outputs are the task's runner's alone.
	if err := os.MkdirAll(env.WorkDir, 0o700); err != nil {
		return nil, err
	}
	counters := &Counters{}
	usage := startUsage()
	defer usage.stop() // after a failure too
	// The task's own reads and writes go through fsys and are counted;
	// env.FS stays as given for what the runtime asks of it (cache
	// access reports).
	fsys := &statsFS{FS: env.FS}
	tctx := &taskContext{Context: ctx, params: spec.Job.Params, counters: counters, fs: fsys, index: spec.Index,
		stderr: env.Stderr, commands: env.Commands, usage: usage}
	var out *MapOutput
	var err error
	if spec.IsMap {
		out, err = runMap(tctx, env, spec, counters)
	} else {
		err = runReduce(tctx, env, spec, counters)
	}
	if err != nil {
		return nil, err
	}
	fsys.book(counters)
	usage.finish(counters)
	return &TaskResult{Counters: counters.Snapshot(), Output: out}, nil
}

func setup(ctx TaskContext, x any) error {
	if s, ok := x.(Setupper); ok {
		return s.Setup(ctx)
	}
	return nil
}

func cleanup(ctx TaskContext, x any, out Emitter) error {
	if c, ok := x.(Cleaner); ok {
		return c.Cleanup(ctx, out)
	}
	return nil
}

func outputFormat(job *Job) OutputFormat {
	if job.OutputFormat != nil {
		return job.OutputFormat
	}
	return TextOutput{}
}

func inputFormat(job *Job) InputFormat {
	if job.InputFormat != nil {
		return job.InputFormat
	}
	return TextInput{}
}

// mapAll runs the mapper over every record of the split, from Setup to
// Cleanup, reporting progress as it goes.
func mapAll(tctx *taskContext, env TaskEnv, spec TaskSpec, rr RecordReader, mapper Mapper, emit Emitter, counters *Counters) error {
	if err := setup(tctx, mapper); err != nil {
		return fmt.Errorf("map setup: %w", err)
	}
	var recs, lastRead int64
	for {
		k, v, err := rr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read split %d: %w", spec.Split.Index, err)
		}
		recs++
		if err := mapper.Map(tctx, k, v, emit); err != nil {
			return fmt.Errorf("map: %w", err)
		}
		if recs&1023 == 0 {
			if err := tctx.Err(); err != nil {
				return err
			}
			if env.Progress != nil {
				n := rr.BytesRead()
				env.Progress.Add(n - lastRead)
				lastRead = n
			}
		}
	}
	if err := cleanup(tctx, mapper, emit); err != nil {
		return fmt.Errorf("map cleanup: %w", err)
	}
	read := rr.BytesRead()
	if env.Progress != nil {
		env.Progress.Add(read - lastRead)
	}
	counters.Add(GroupTask, MapInputRecords, recs)
	counters.Add(GroupInput, BytesRead, read)
	return nil
}

// countCombined books a mapper's own combining: the collector (or the
// output writer) counted only what was emitted after it, so the records
// combined away are added back to MAP_OUTPUT_RECORDS, and their bytes to
// MAP_OUTPUT_BYTES when there is a collector that counts bytes (Hadoop
// counts map output before the combiner).
func countCombined(mapper Mapper, counters *Counters, collected bool) {
	c, ok := mapper.(CombiningMapper)
	if !ok {
		return
	}
	st := c.Combined()
	counters.Add(GroupTask, MapOutputRecords, st.InRecords-st.OutRecords)
	if collected {
		counters.Add(GroupTask, MapOutputBytes, st.InBytes-st.OutBytes)
	}
	counters.Add(GroupTask, CombineInputRecords, st.InRecords)
	counters.Add(GroupTask, CombineOutputRecords, st.OutRecords)
}

// countingWriter counts output records for the counters.
type countingWriter struct {
	w    RecordWriter
	recs int64
}

func (c *countingWriter) Emit(k, v []byte) error {
	c.recs++
	return c.w.Write(k, v)
}

// outputFS is the FS an OutputFormat creates a task's output file on: it
// counts the bytes that reach the file (BYTES_WRITTEN, as Hadoop counts
// them: separators, newlines and any format overhead included), and
// creates files only inside an existing attempt directory, so a
// straggler of an aborted job cannot recreate its directories.
type outputFS struct {
	FS
	written atomic.Int64
}

func (o *outputFS) Create(ctx context.Context, p string, opts CreateOptions) (io.WriteCloser, error) {
	opts.NoCreateParent = true
	w, err := o.FS.Create(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	return &countingFile{WriteCloser: w, n: &o.written}, nil
}

type countingFile struct {
	io.WriteCloser
	n *atomic.Int64
}

func (c *countingFile) Write(b []byte) (int, error) {
	n, err := c.WriteCloser.Write(b)
	c.n.Add(int64(n))
	return n, err
}

func runMap(tctx *taskContext, env TaskEnv, spec TaskSpec, counters *Counters) (*MapOutput, error) {
	job := spec.Job
	start := time.Now()
	in := &inputFS{FS: tctx.fs}
	rr, err := inputFormat(job).Open(tctx, in, job, spec.Split)
	if err != nil {
		return nil, fmt.Errorf("open split %d: %w", spec.Split.Index, err)
	}
	defer rr.Close()
	mapper := job.NewMapper()

	var emit Emitter
	var col *collector
	var cw *countingWriter
	var ofs *outputFS
	if job.NumReduces > 0 {
		col = newCollector(job, tctx, env.WorkDir, env.SortBufferBytes, counters, env.SortBuffers)
		col.memory = env.MapOutputMemory
		col.usage = tctx.usage
		defer col.release() // after a failure too
		emit = col
	} else {
		dir := AttemptDir(job.Output, spec.JobID, spec.AttemptID)
		if err := setupAttempt(tctx, tctx.fs, dir); err != nil {
			return nil, err
		}
		p := path.Join(dir, OutputName(true, spec.Index))
		ofs = &outputFS{FS: tctx.fs}
		w, err := outputFormat(job).Create(tctx, ofs, job, p)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", p, err)
		}
		cw = &countingWriter{w: w}
		emit = cw
		defer func() {
			if cw.w != nil { // failed: close what was written; the attempt dir is never promoted
				cw.w.Close()
			}
		}()
	}
	if err := mapAll(tctx, env, spec, rr, mapper, emit, counters); err != nil {
		return nil, err
	}
	countCombined(mapper, counters, col != nil)
	reportCacheAccess(tctx, env, spec, in, time.Since(start))
	if cw != nil {
		w := cw.w
		cw.w = nil
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("close output: %w", err)
		}
		counters.Add(GroupTask, MapOutputRecords, cw.recs)
		counters.Add(GroupOutput, BytesWritten, ofs.written.Load())
		return nil, nil
	}
	mapped := time.Now()
	out, err := col.finish(filepath.Join(env.WorkDir, "file.out"))
	if env.Logger != nil && err == nil {
		env.Logger.Info("map phases", "attempt", spec.AttemptID, "read_map_collect_ms", mapped.Sub(start).Milliseconds(),
			"spills", col.nspills, "spill_ms", col.spillTime.Milliseconds(), "final_sort_merge_ms", time.Since(mapped).Milliseconds())
	}
	return out, err
}
