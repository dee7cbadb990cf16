package nodemanager

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"smarth/internal/diskperm"
)

// Task attempt logs, as Hadoop's userlogs: every attempt this node runs
// gets <log_dir>/<job>/<attempt>/{stdout,stderr}, kept after the attempt
// (and its job) ended so an operator can read why a task did what it did,
// served by the node manager's HTTP under /logs/. stderr holds the
// attempt's own log records (start, phases, end) and whatever a Streaming
// command wrote to its stderr; stdout is for a command's stray output.
// Each file is capped at log_limit_bytes; job directories are removed
// log_retention after they were last written.

// logFiles are the files of one attempt's log directory.
var logFiles = []string{"stderr", "stdout"}

// attemptLog is one running attempt's open log files.
type attemptLog struct {
	stderr, stdout *cappedFile
}

// openAttemptLog creates the attempt's log directory and files.
func openAttemptLog(dir, jobID, attemptID string, limit int64) (*attemptLog, error) {
	d := filepath.Join(dir, jobID, attemptID)
	if err := os.MkdirAll(d, diskperm.Dir); err != nil {
		return nil, fmt.Errorf("task log dir: %w", err)
	}
	l := &attemptLog{}
	var err error
	if l.stderr, err = createCapped(filepath.Join(d, "stderr"), limit); err != nil {
		return nil, err
	}
	if l.stdout, err = createCapped(filepath.Join(d, "stdout"), limit); err != nil {
		l.stderr.Close()
		return nil, err
	}
	return l, nil
}

// Close closes both files.
func (l *attemptLog) Close() {
	l.stderr.Close()
	l.stdout.Close()
}

// logger writes the attempt's records to its stderr file and to the node
// manager's own log, so neither loses them.
func (l *attemptLog) logger(base *slog.Logger) *slog.Logger {
	return slog.New(fanout{slog.NewTextHandler(l.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}), base.Handler()})
}

// cappedFile is a log file that keeps the first limit bytes of what is
// written and says how much it dropped: a runaway task fills its quota,
// not the node's disk. Writes never fail the task.
type cappedFile struct {
	mu      sync.Mutex // guards f, written, dropped
	f       *os.File
	limit   int64
	written int64
	dropped int64
}

func createCapped(path string, limit int64) (*cappedFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, diskperm.File)
	if err != nil {
		return nil, fmt.Errorf("task log: %w", err)
	}
	return &cappedFile{f: f, limit: limit}, nil
}

func (c *cappedFile) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return len(b), nil
	}
	room := c.limit - c.written
	if c.limit <= 0 {
		room = int64(len(b))
	}
	n := min(int64(len(b)), max(room, 0))
	if n > 0 {
		m, _ := c.f.Write(b[:n])
		c.written += int64(m)
	}
	c.dropped += int64(len(b)) - n
	return len(b), nil
}

// Close ends the file, with a note of what the cap dropped.
func (c *cappedFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	if c.dropped > 0 {
		fmt.Fprintf(c.f, "\n[log truncated at %d bytes (log_limit_bytes); %d more bytes dropped]\n", c.written, c.dropped)
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// fanout is a slog handler that hands every record to several handlers.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range f {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range f {
		if h.Enabled(ctx, r.Level) {
			h.Handle(ctx, r.Clone())
		}
	}
	return nil
}

func (f fanout) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (f fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}

// expireLogs removes job log directories not written for retention.
func expireLogs(dir string, retention time.Duration, now time.Time) {
	if retention <= 0 {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "job_") {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > retention {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// openLogFile opens one log file of an attempt for reading, refusing any
// name that is not a job, an attempt and a log file of this node.
func openLogFile(dir, jobID, attemptID, name string) (*os.File, error) {
	if !validID(jobID, "job_") || !validID(attemptID, "attempt_") || !validLogName(name) {
		return nil, os.ErrNotExist
	}
	return os.Open(filepath.Join(dir, jobID, attemptID, name))
}

func validLogName(name string) bool {
	for _, f := range logFiles {
		if f == name {
			return true
		}
	}
	return false
}

// validID: an ID with the prefix and only letters, digits and _ (no path
// separators or dots: the ID becomes a path under log_dir).
func validID(id, prefix string) bool {
	if !strings.HasPrefix(id, prefix) || len(id) > 200 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

var _ io.Writer = (*cappedFile)(nil)

// privateWorkDir makes work_dir a passage (0711): containers' directories
// under work_dir/containers must be reachable by the users they run as,
// while every other entry (jobs' spills and map outputs, task logs) is the
// node manager's alone. Entries an older release left open are narrowed
// with a WARN naming each path (the task-log directory as log_dir, by
// Start). The containers directory is the
// container launcher's to keep (it sweeps it at start).
func (nm *NodeManager) privateWorkDir() error {
	if err := diskperm.MkdirAll(nm.cfg.WorkDir, diskperm.Passage); err != nil {
		return err
	}
	ents, err := os.ReadDir(nm.cfg.WorkDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := filepath.Join(nm.cfg.WorkDir, e.Name())
		if !e.IsDir() || e.Name() == "containers" || p == filepath.Clean(nm.logDir()) {
			continue // the log dir is narrowed as log_dir, next
		}
		if _, err := diskperm.Fix(p, diskperm.Dir, nm.log.With("key", "work_dir")); err != nil {
			return err
		}
	}
	return nil
}
