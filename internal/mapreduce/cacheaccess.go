package mapreduce

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ParamCacheAffinity is the job parameter giving the app's cache affinity
// (seed 003's CA, in [0,1]) sent with each map's cache access; unset, the
// namenode uses the value it has configured for the app.
const ParamCacheAffinity = "cache_affinity"

// cacheAccessTimeout bounds the report, which must not hold up the task
// for long when the namenode is slow.
const cacheAccessTimeout = 10 * time.Second

// inputFS is the FS an InputFormat opens a map's split on: it remembers
// the files opened, so that the task can ask which datanode served its
// block afterwards.
//
// It also times the reads, for the namenode's learned cache affinity: the
// time spent inside Read and ReadAt and the bytes they returned, not the
// mapper's own work between them.
type inputFS struct {
	FS
	mu     sync.Mutex // guards opened
	opened []File

	readNanos, readBytes atomic.Int64
}

func (i *inputFS) Open(ctx context.Context, p string) (File, error) {
	f, err := i.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	i.mu.Lock()
	i.opened = append(i.opened, f)
	i.mu.Unlock()
	return &timedFile{File: f, in: i}, nil
}

// timedFile adds each read's time and bytes to its inputFS.
type timedFile struct {
	File
	in *inputFS
}

func (t *timedFile) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := t.File.Read(p)
	t.in.readNanos.Add(int64(time.Since(start)))
	t.in.readBytes.Add(int64(n))
	return n, err
}

func (t *timedFile) ReadAt(p []byte, off int64) (int, error) {
	start := time.Now()
	n, err := t.File.ReadAt(p, off)
	t.in.readNanos.Add(int64(time.Since(start)))
	t.in.readBytes.Add(int64(n))
	return n, err
}

// servedBy is the datanode that served the last read of block through
// one of the opened files, "" if none says.
func (i *inputFS) servedBy(block uint64) string {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, f := range i.opened {
		if rs, ok := f.(ReadSource); ok {
			if d := rs.ServedBy(block); d != "" {
				return d
			}
		}
	}
	return ""
}

// reportCacheAccess tells a caching FS that the map has read its split's
// block: seed 003 has every map task ask for its block to be cached, even
// when it already is, to refresh its access time and goodness. A failure
// is logged and never fails the task: caching is an optimisation. ran is
// how long the task has run: its reads and its map function.
func reportCacheAccess(ctx context.Context, env TaskEnv, spec TaskSpec, in *inputFS, ran time.Duration) {
	cr, ok := env.FS.(CacheReporter)
	if !ok || spec.Split.BlockID == 0 {
		return
	}
	a := CacheAccess{BlockID: spec.Split.BlockID, App: spec.Job.App, JobID: spec.JobID, Host: env.Host,
		Datanode: in.servedBy(spec.Split.BlockID), Affinity: cacheAffinity(spec.Job.Params),
		ReadBytes: in.readBytes.Load(), ReadTime: time.Duration(in.readNanos.Load()), TaskTime: ran}
	ctx, cancel := context.WithTimeout(ctx, cacheAccessTimeout)
	defer cancel()
	if err := cr.ReportCacheAccess(ctx, a); err != nil && env.Logger != nil {
		env.Logger.Warn("reporting the map's cache access failed", "attempt", spec.AttemptID,
			"block", a.BlockID, "err", err)
	}
}

// cacheAffinity is the job's cache_affinity parameter, or -1 (the
// namenode's configured value) when unset or not a number in [0,1].
func cacheAffinity(params map[string]string) float64 {
	v, err := strconv.ParseFloat(params[ParamCacheAffinity], 64)
	if err != nil || v < 0 || v > 1 {
		return -1
	}
	return v
}
