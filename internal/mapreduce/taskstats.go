package mapreduce

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Hadoop's File System Counters and the resource figures of its
// TaskCounter, named as Hadoop names them so job output reads the same.
const (
	GroupFS = "File System Counters"

	// HDFS_BYTES_READ and the like are made of the FS's scheme and these
	// suffixes (Hadoop's FileSystemCounter: BYTES_READ, BYTES_WRITTEN).
	fsBytesRead    = "_BYTES_READ"
	fsBytesWritten = "_BYTES_WRITTEN"

	FileBytesRead    = "FILE" + fsBytesRead
	FileBytesWritten = "FILE" + fsBytesWritten
	HDFSBytesRead    = "HDFS" + fsBytesRead
	HDFSBytesWritten = "HDFS" + fsBytesWritten

	CPUMillis           = "CPU_MILLISECONDS"
	GCTimeMillis        = "GC_TIME_MILLIS"
	PhysicalMemoryBytes = "PHYSICAL_MEMORY_BYTES"
)

// Schemer is an optional FS capability: the URI scheme its File System
// Counters are named by ("HDFS" for the DFS, "FILE" for a local
// directory). An FS without it counts as HDFS, the runtime's home.
type Schemer interface {
	Scheme() string
}

func (dfs) Scheme() string        { return "HDFS" }
func (*LocalFS) Scheme() string   { return "FILE" }
func (s SharedFS) Scheme() string { return schemeOf(s.FS) }

func schemeOf(f FS) string {
	if s, ok := f.(Schemer); ok {
		return s.Scheme()
	}
	return "HDFS"
}

// statsFS counts the bytes a task reads and writes through the job's FS
// (its input split, side files, its output), as Hadoop's per-scheme
// FileSystem statistics do. Capabilities the runtime looks for on the FS
// (CacheReporter) stay on the FS the task was given: only the task's
// own I/O goes through this.
type statsFS struct {
	FS
	read, written atomic.Int64
}

func (s *statsFS) Open(ctx context.Context, p string) (File, error) {
	f, err := s.FS.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, n: &s.read}, nil
}

func (s *statsFS) Create(ctx context.Context, p string, opts CreateOptions) (io.WriteCloser, error) {
	w, err := s.FS.Create(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	return &countingFile{WriteCloser: w, n: &s.written}, nil
}

// book adds the bytes moved to counters under the FS's scheme.
func (s *statsFS) book(c *Counters) {
	scheme := schemeOf(s.FS)
	c.Add(GroupFS, scheme+fsBytesRead, s.read.Load())
	c.Add(GroupFS, scheme+fsBytesWritten, s.written.Load())
}

// countedFile counts what is read through it; ServedBy passes through so
// the cache-access report still learns which datanode served the split.
type countedFile struct {
	File
	n *atomic.Int64
}

func (c *countedFile) Read(b []byte) (int, error) {
	n, err := c.File.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (c *countedFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.File.ReadAt(b, off)
	c.n.Add(int64(n))
	return n, err
}

func (c *countedFile) ServedBy(block uint64) string {
	if rs, ok := c.File.(ReadSource); ok {
		return rs.ServedBy(block)
	}
	return ""
}

// taskUsage measures the resources of one attempt. A task runs as a
// goroutine of the node manager (or local runner), locked to one OS
// thread for its life, so the thread's rusage (RUSAGE_THREAD) is the CPU
// its own code spent; the processes of its user code (Streaming commands)
// add their rusage from wait4, descendants included, as Hadoop's
// process-tree figures do. Helper goroutines a task starts (the reduce's
// parallel fetchers) run on other threads and are not in the figure.
// GC time is the stop-the-world pause time of the process's collector
// while the task ran: every pause stops the task too.
type taskUsage struct {
	cpu0   time.Duration
	gc0    time.Duration
	locked bool

	mu       sync.Mutex // guards childCPU, childRSS, memory
	childCPU time.Duration
	childRSS int64 // largest max RSS of a user-code process, bytes
	memory   int64 // largest in-process buffer the task held, bytes
}

func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func gcPauses() time.Duration {
	var s debug.GCStats
	debug.ReadGCStats(&s)
	return s.PauseTotal
}

// startUsage locks the calling goroutine to its thread and notes where
// the thread's CPU and the collector's pauses stand.
func startUsage() *taskUsage {
	runtime.LockOSThread()
	return &taskUsage{locked: true, cpu0: threadCPU(), gc0: gcPauses()}
}

// finish books the attempt's figures and unlocks the thread.
func (u *taskUsage) finish(c *Counters) {
	cpu := threadCPU() - u.cpu0
	u.stop()
	u.mu.Lock()
	defer u.mu.Unlock()
	c.Add(GroupTask, CPUMillis, (cpu + u.childCPU).Milliseconds())
	c.Add(GroupTask, GCTimeMillis, (gcPauses() - u.gc0).Milliseconds())
	c.Add(GroupTask, PhysicalMemoryBytes, u.memory+u.childRSS)
}

// stop unlocks the thread, once.
func (u *taskUsage) stop() {
	if u.locked {
		runtime.UnlockOSThread()
		u.locked = false
	}
}

// held notes an in-process buffer of n bytes the task holds (the map's
// sort buffer as filled, the reduce's in-memory segments); the largest
// counts toward PHYSICAL_MEMORY_BYTES.
func (u *taskUsage) held(n int64) {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.memory = max(u.memory, n)
	u.mu.Unlock()
}

// BookProcess adds the rusage of a finished user-code process of the task
// (a Streaming command, after Wait) to the task's CPU_MILLISECONDS and
// PHYSICAL_MEMORY_BYTES. Outside a task it does nothing.
func BookProcess(ctx context.Context, ps *os.ProcessState) {
	t, ok := ctx.(*taskContext)
	if !ok || t.usage == nil || ps == nil {
		return
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return
	}
	t.usage.mu.Lock()
	t.usage.childCPU += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	t.usage.childRSS = max(t.usage.childRSS, ru.Maxrss<<10) // Linux reports KiB
	t.usage.mu.Unlock()
}
