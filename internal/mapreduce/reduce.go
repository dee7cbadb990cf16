package mapreduce

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"
)

// fetched is one map's segment for this reduce, in memory or on disk.
type fetched struct {
	mem  []byte
	file string
	size int64
}

// fetchAll copies this reduce's segment of every map output, keeping
// segments in memory while they fit in the reduce memory budget and
// streaming the rest to local disk. Outputs known at launch (spec.Inputs)
// are fetched at once; with a MapLocator the rest are fetched as their
// maps finish, so a reduce launched early (slow start) has most of its
// input by the time the last map ends. The first failure is returned as a
// *FetchError so the map can be re-run.
func fetchAll(tctx *taskContext, env TaskEnv, spec TaskSpec) ([]fetched, int64, error) {
	numMaps := spec.NumMaps
	if numMaps == 0 {
		numMaps = len(spec.Inputs)
	}
	if env.Locator == nil && len(spec.Inputs) < numMaps {
		return nil, 0, fmt.Errorf("reduce %d knows %d of %d map outputs and has no locator for the rest", spec.Index, len(spec.Inputs), numMaps)
	}
	sh := &shuffle{tctx: tctx, env: env, spec: spec, out: make([]fetched, numMaps), budget: env.ReduceMemoryBytes}
	if sh.budget <= 0 {
		sh.budget = DefaultReduceMemoryBytes
	}
	par := env.ParallelFetches
	if par <= 0 {
		par = DefaultParallelFetches
	}
	// Buffered for every map, so queueing never blocks on the fetchers.
	work := make(chan MapOutputRef, numMaps)
	var wg sync.WaitGroup
	for range min(par, max(1, numMaps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh.fetchFrom(work)
		}()
	}
	queued := make([]bool, numMaps)
	nqueued := 0
	enqueue := func(refs []MapOutputRef) error {
		for _, r := range refs {
			if r.MapIndex < 0 || r.MapIndex >= numMaps {
				return fmt.Errorf("map output of map %d, but the job has %d maps", r.MapIndex, numMaps)
			}
			if !queued[r.MapIndex] {
				queued[r.MapIndex] = true
				nqueued++
				work <- r
			}
		}
		return nil
	}
	qerr := enqueue(spec.Inputs)
	for qerr == nil && nqueued < numMaps && !sh.failed() && tctx.Err() == nil {
		var refs []MapOutputRef
		if refs, qerr = env.Locator.MapOutputs(tctx); qerr == nil {
			qerr = enqueue(refs)
		}
	}
	close(work)
	wg.Wait()
	switch {
	case sh.err != nil:
		return sh.out, sh.total, sh.err
	case qerr != nil:
		return sh.out, sh.total, qerr
	}
	return sh.out, sh.total, tctx.Err()
}

// shuffle is the state of one reduce's fetches, shared by its fetchers.
type shuffle struct {
	tctx   *taskContext
	env    TaskEnv
	spec   TaskSpec
	out    []fetched // by map index; each written by one fetcher
	budget int64

	mu    sync.Mutex // guards used, total, err
	used  int64      // bytes of the budget taken by segments in memory
	total int64      // bytes fetched
	err   error      // the first failure
}

func (s *shuffle) failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

// reserve takes n bytes of the memory budget if they are free.
func (s *shuffle) reserve(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+n > s.budget {
		return false
	}
	s.used += n
	return true
}

// fetchFrom fetches the outputs sent on work until it is closed, skipping
// them once the shuffle has failed.
func (s *shuffle) fetchFrom(work <-chan MapOutputRef) {
	for ref := range work {
		if s.failed() || s.tctx.Err() != nil {
			continue // drain
		}
		f, err := fetchOne(s.tctx, s.env, s.spec, ref, s.reserve)
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.total += f.size
		s.mu.Unlock()
		s.out[ref.MapIndex] = f
	}
}

func fetchOne(tctx *taskContext, env TaskEnv, spec TaskSpec, ref MapOutputRef, reserve func(int64) bool) (fetched, error) {
	fail := func(err error) (fetched, error) {
		return fetched{}, &FetchError{MapIndex: ref.MapIndex, Attempt: ref.Attempt, Err: err}
	}
	rc, size, err := env.Fetcher.Fetch(tctx, ref, spec.Index)
	if err != nil {
		return fail(err)
	}
	defer rc.Close()
	if m, ok := rc.(interface{ Bytes() []byte }); ok && int64(len(m.Bytes())) == size {
		// A map output this process holds in memory: use it as it is,
		// outside the reduce's budget (the memory is the map output's).
		if err := verifySegment(rc); err != nil {
			return fail(err)
		}
		if env.Progress != nil {
			env.Progress.Add(size)
		}
		return fetched{mem: m.Bytes(), size: size}, nil
	}
	if reserve(size) {
		buf := make([]byte, size)
		if _, err := io.ReadFull(rc, buf); err != nil {
			return fail(err)
		}
		if err := verifySegment(rc); err != nil {
			return fail(err)
		}
		if env.Progress != nil {
			env.Progress.Add(size)
		}
		return fetched{mem: buf, size: size}, nil
	}
	p := filepath.Join(env.WorkDir, fmt.Sprintf("map_%d.seg", ref.MapIndex))
	f, err := os.Create(p)
	if err != nil {
		return fetched{}, err
	}
	defer f.Close()
	n, err := io.Copy(f, rc)
	if tctx.counters != nil {
		tctx.counters.Add(GroupFS, FileBytesWritten, n)
	}
	if err == nil && n != size {
		err = fmt.Errorf("short segment: got %d of %d bytes", n, size)
	}
	if err == nil {
		err = verifySegment(rc)
	}
	if err != nil {
		return fail(err)
	}
	if env.Progress != nil {
		env.Progress.Add(size)
	}
	return fetched{file: p, size: size}, f.Close()
}

func runReduce(tctx *taskContext, env TaskEnv, spec TaskSpec, counters *Counters) error {
	job := spec.Job
	start := time.Now()
	segs, shuffled, err := fetchAll(tctx, env, spec)
	if err != nil {
		return err
	}
	shuffleDone := time.Now()
	defer func() {
		if env.Logger != nil {
			env.Logger.Info("reduce phases", "attempt", spec.AttemptID, "shuffle_ms", shuffleDone.Sub(start).Milliseconds(),
				"merge_reduce_write_ms", time.Since(shuffleDone).Milliseconds(), "shuffle_bytes", shuffled)
		}
	}()
	counters.Add(GroupTask, ReduceShuffleBytes, shuffled)
	streams := make([]recordStream, 0, len(segs))
	var inMemory int64
	for _, s := range segs {
		switch {
		case s.mem != nil:
			streams = append(streams, &memSegment{b: s.mem})
			inMemory += int64(len(s.mem))
		case s.file != "":
			counters.Add(GroupFS, FileBytesRead, s.size) // the merge reads the spilled segment once
			f, err := os.Open(s.file)
			if err != nil {
				return err
			}
			defer f.Close()
			streams = append(streams, &readerSegment{br: bufio.NewReaderSize(f, 256<<10), remaining: s.size})
		}
	}
	tctx.usage.held(inMemory)
	cmp, bo := defaultCompare(job)
	m, err := newMerger(cmp, bo, streams)
	if err != nil {
		return err
	}

	dir := AttemptDir(job.Output, spec.JobID, spec.AttemptID)
	if err := setupAttempt(tctx, tctx.fs, dir); err != nil {
		return err
	}
	p := path.Join(dir, OutputName(false, spec.Index))
	ofs := &outputFS{FS: tctx.fs}
	w, err := outputFormat(job).Create(tctx, ofs, job, p)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	cw := &countingWriter{w: w}
	reducer := job.NewReducer()
	err = reduceAll(tctx, reducer, newGrouper(m, cmp, bo), cw, counters)
	if cerr := w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", p, cerr)
	}
	if err != nil {
		return err
	}
	counters.Add(GroupTask, ReduceOutputRecords, cw.recs)
	counters.Add(GroupOutput, BytesWritten, ofs.written.Load())
	return nil
}

func reduceAll(tctx *taskContext, reducer Reducer, g *grouper, out Emitter, counters *Counters) error {
	if err := setup(tctx, reducer); err != nil {
		return fmt.Errorf("reduce setup: %w", err)
	}
	var groups int64
	for g.nextGroup() {
		groups++
		if err := reducer.Reduce(tctx, g.key, g, out); err != nil {
			return fmt.Errorf("reduce: %w", err)
		}
		if groups&1023 == 0 && tctx.Err() != nil {
			return tctx.Err()
		}
	}
	if g.err != nil {
		return g.err
	}
	if err := cleanup(tctx, reducer, out); err != nil {
		return fmt.Errorf("reduce cleanup: %w", err)
	}
	counters.Add(GroupTask, ReduceInputGroups, groups)
	counters.Add(GroupTask, ReduceInputRecords, g.records)
	return nil
}
