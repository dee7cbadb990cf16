package mapreduce

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// LocalOptions configure the in-process runner.
type LocalOptions struct {
	Registry *Registry
	// Parallelism is how many tasks run at once (default 2).
	Parallelism int
	// WorkDir holds spills and map outputs (default: a temporary directory
	// removed after each job).
	WorkDir           string
	SortBufferBytes   int
	ReduceMemoryBytes int64
	MaxAttempts       int // per task (default 4)
	// MapOutputMemoryBytes lets finished map outputs stay in memory up
	// to this many bytes (default 0: every output is written to WorkDir).
	MapOutputMemoryBytes int64
	Logger               *slog.Logger
}

// LocalRunner runs jobs in this process with the same task engine the node
// managers use (RunTask: split → map → partition/sort/spill/combine →
// fetch → merge → reduce → commit); only scheduling and the transport of
// map output differ. It is how apps are unit-tested.
type LocalRunner struct {
	fs      FS
	opts    LocalOptions
	seq     atomic.Int64
	buffers *SortBuffers
	memory  *MemoryBudget
}

var _ Runner = (*LocalRunner)(nil)

// NewLocalRunner returns a Runner executing jobs in-process against fs.
func NewLocalRunner(fs FS, opts LocalOptions) *LocalRunner {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 2
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &LocalRunner{fs: fs, opts: opts, buffers: NewSortBuffers(opts.Parallelism),
		memory: NewMemoryBudget(opts.MapOutputMemoryBytes)}
}

// FS is the runner's file system.
func (r *LocalRunner) FS() FS { return r.fs }

// Run runs one job to completion. A failed job returns its Result (state
// FAILED, counters so far) together with the error.
func (r *LocalRunner) Run(ctx context.Context, appName string, params map[string]string) (*Result, error) {
	start := time.Now()
	if a, err := r.opts.Registry.Lookup(appName); err == nil {
		if d, ok := a.(Driver); ok {
			err := d.Drive(ctx, r, params)
			res := &Result{JobID: "driver_" + appName, State: StateSucceeded, Elapsed: time.Since(start)}
			if err != nil {
				res.State, res.Error = StateFailed, err.Error()
			}
			return res, err
		}
	}
	plan, err := PlanJob(ctx, r.fs, r.opts.Registry, appName, params)
	if err != nil {
		return nil, err
	}
	jobID := fmt.Sprintf("job_local_%04d", r.seq.Add(1))
	res := &Result{JobID: jobID, State: StateSucceeded}
	counters := &Counters{}
	err = r.runPlan(ctx, jobID, plan, counters)
	res.Elapsed = time.Since(start)
	counters.Add(GroupJob, ElapsedMillis, res.Elapsed.Milliseconds())
	res.Counters = counters.Snapshot()
	if err != nil {
		res.State, res.Error = StateFailed, err.Error()
		if ctx.Err() != nil {
			res.State = StateKilled
		}
		AbortJob(context.WithoutCancel(ctx), r.fs, plan.Job.Output, jobID)
		return res, fmt.Errorf("job %s failed: %w", jobID, err)
	}
	return res, nil
}

func (r *LocalRunner) runPlan(ctx context.Context, jobID string, plan *Plan, counters *Counters) error {
	job := plan.Job
	work := r.opts.WorkDir
	if work == "" {
		d, err := os.MkdirTemp("", "smarth-local-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	jobDir := filepath.Join(work, jobID)
	defer os.RemoveAll(jobDir)
	if err := SetupJob(ctx, r.fs, job.Output, jobID); err != nil {
		return err
	}
	nm := len(plan.Splits)
	outputs := make([]*MapOutput, nm)
	defer func() {
		for _, o := range outputs {
			o.Release()
		}
	}()
	mapAttempts := make([]string, nm)
	mapSpec := func(i int) TaskSpec {
		return TaskSpec{JobID: jobID, IsMap: true, Index: i, NumMaps: nm, Split: plan.Splits[i]}
	}
	err := r.runPhase(ctx, jobDir, job, nm, mapSpec, nil, counters, func(i int, attempt string, res *TaskResult) {
		outputs[i], mapAttempts[i] = res.Output, attempt // each index written by one goroutine
	})
	if err != nil {
		return err
	}
	counters.Add(GroupJob, LaunchedMaps, int64(nm))
	counters.Add(GroupJob, DataLocalMaps, int64(nm))
	if job.NumReduces == 0 {
		return CommitJob(ctx, r.fs, job.Output, jobID, mapAttempts)
	}
	refs := make([]MapOutputRef, nm)
	byAttempt := make(map[string]*MapOutput, nm)
	for i := range nm {
		refs[i] = MapOutputRef{MapIndex: i, Attempt: mapAttempts[i]}
		byAttempt[mapAttempts[i]] = outputs[i]
	}
	fetcher := FileFetcher(func(attempt string) (*MapOutput, bool) {
		o, ok := byAttempt[attempt]
		return o, ok
	})
	redSpec := func(i int) TaskSpec {
		return TaskSpec{JobID: jobID, Index: i, NumMaps: nm, Inputs: refs}
	}
	winners := make([]string, job.NumReduces)
	err = r.runPhase(ctx, jobDir, job, job.NumReduces, redSpec, fetcher, counters, func(i int, attempt string, _ *TaskResult) {
		winners[i] = attempt
	})
	if err != nil {
		return err
	}
	counters.Add(GroupJob, LaunchedReduces, int64(job.NumReduces))
	return CommitJob(ctx, r.fs, job.Output, jobID, winners)
}

// runPhase runs n tasks with bounded parallelism, retrying each up to
// MaxAttempts; the first task that exhausts its attempts fails the phase.
func (r *LocalRunner) runPhase(ctx context.Context, jobDir string, job *Job, n int, spec func(int) TaskSpec,
	fetcher Fetcher, counters *Counters, done func(int, string, *TaskResult)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, r.opts.Parallelism)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s := spec(i)
			var err error
			for a := range r.opts.MaxAttempts {
				kind := "r"
				if s.IsMap {
					kind = "m"
				}
				s.AttemptID = fmt.Sprintf("attempt_%s_%s_%06d_%d", s.JobID, kind, i, a)
				if s.Job, err = TaskJob(r.opts.Registry, job.App, job.Params, job.Output, job.NumReduces); err != nil {
					break
				}
				env := TaskEnv{FS: r.fs, WorkDir: filepath.Join(jobDir, s.AttemptID), Fetcher: fetcher,
					SortBufferBytes: r.opts.SortBufferBytes, ReduceMemoryBytes: r.opts.ReduceMemoryBytes, Logger: r.opts.Logger,
					SortBuffers: r.buffers, MapOutputMemory: r.memory}
				var res *TaskResult
				res, err = RunTask(ctx, env, s)
				if err == nil {
					counters.Merge(res.Counters)
					done(i, s.AttemptID, res)
					return
				}
				if ctx.Err() != nil {
					break
				}
				r.opts.Logger.Warn("task attempt failed", "attempt", s.AttemptID, "err", err)
			}
			once.Do(func() {
				firstErr = fmt.Errorf("%s task %d failed %d times; last error: %w", kindName(s.IsMap), i, r.opts.MaxAttempts, err)
				cancel()
			})
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

func kindName(isMap bool) string {
	if isMap {
		return "map"
	}
	return "reduce"
}

// FileFetcher fetches map output segments from local files, found by
// attempt ID; the local runner's transport and the node manager's
// shortcut for map output it holds itself.
type FileFetcher func(attempt string) (*MapOutput, bool)

// Fetch opens the segment of reduce in the attempt's output file.
func (f FileFetcher) Fetch(ctx context.Context, ref MapOutputRef, reduce int) (io.ReadCloser, int64, error) {
	out, ok := f(ref.Attempt)
	if !ok {
		return nil, 0, fmt.Errorf("no map output for %s", ref.Attempt)
	}
	return OpenSegment(out, reduce)
}

// OpenSegment opens reduce's segment of a map output. For an in-memory
// output the reader also has Bytes() []byte, the segment itself, which a
// reduce in the same process uses without copying.
func OpenSegment(out *MapOutput, reduce int) (io.ReadCloser, int64, error) {
	if reduce < 0 || reduce >= len(out.Index) {
		return nil, 0, fmt.Errorf("no partition %d in map output (%d partitions)", reduce, len(out.Index))
	}
	if out.Data != nil {
		seg := out.Index[reduce]
		if seg.Offset < 0 || seg.Length < 0 || seg.Offset+seg.Length > int64(len(out.Data)) {
			return nil, 0, fmt.Errorf("partition %d out of the map output's %d bytes", reduce, len(out.Data))
		}
		b := out.Data[seg.Offset : seg.Offset+seg.Length : seg.Offset+seg.Length]
		return memReader{Reader: bytes.NewReader(b), b: b, crc: seg.CRC}, seg.Length, nil
	}
	file, err := os.Open(out.Path)
	if err != nil {
		return nil, 0, err
	}
	seg := out.Index[reduce]
	return CheckedSegment(&sectionCloser{SectionReader: io.NewSectionReader(file, seg.Offset, seg.Length), f: file}, seg.CRC),
		seg.Length, nil
}

// memReader reads a segment held in memory.
type memReader struct {
	*bytes.Reader
	b   []byte
	crc uint32 // the map's CRC32C of b
}

// Verify checks the segment's bytes against the map's checksum.
func (m memReader) Verify() error { return checkCRC(SegmentCRC(m.b), m.crc) }

func (memReader) Close() error { return nil }

// Bytes is the whole segment, shared, not copied (the reader's position
// does not matter).
func (m memReader) Bytes() []byte { return m.b }

type sectionCloser struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionCloser) Close() error { return s.f.Close() }

// Job states as reported in Result.State.
const (
	StatePending   = "PENDING"
	StateRunning   = "RUNNING"
	StateSucceeded = "SUCCEEDED"
	StateFailed    = "FAILED"
	StateKilled    = "KILLED"
)
