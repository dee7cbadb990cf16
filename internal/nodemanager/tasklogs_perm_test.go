package nodemanager

import (
	"log/slog"
	"os"
	"path/filepath"
	"smarth/internal/syncbuf"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/diskperm"
	"smarth/internal/mapreduce"
)

// TestTaskLogsPrivate: what a user's task prints stays the node manager's
// (log dir, job and attempt dirs 0700, stdout and stderr 0600) under the
// usual umask 022, and a log dir an older release left 0755 with 0644
// logs is narrowed when the node manager starts, with a WARN naming a log
// file and its old and new modes.
func TestTaskLogsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	work := filepath.Join(t.TempDir(), "nm")
	logDir := filepath.Join(work, "userlogs")
	l, err := openAttemptLog(logDir, "job_1", "attempt_1_m_000000_0", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	l.stderr.Write([]byte("alice's secret line\n"))
	l.Close()
	private := func(when string) {
		t.Helper()
		open, err := diskperm.Exposed(logDir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(open) > 0 {
			t.Errorf("%s, other OS users can reach task logs:\n%s", when, strings.Join(open, "\n"))
		}
	}
	private("after a task wrote its log")

	stderr := filepath.Join(logDir, "job_1", "attempt_1_m_000000_0", "stderr")
	for _, d := range []string{logDir, filepath.Dir(filepath.Dir(stderr)), filepath.Dir(stderr)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(stderr, 0o644); err != nil {
		t.Fatal(err)
	}
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "fs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.ResourceManager = "127.0.0.1:1" // never answers: only the start matters here
	cfg.FS, cfg.Registry, cfg.WorkDir, cfg.Hostname = lfs, mapreduce.NewRegistry(), work, "dn1"
	logs := &syncbuf.Buffer{}
	nm, err := New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.Start(); err != nil {
		t.Fatal(err)
	}
	nm.Close()
	private("after a start on a 0755/0644 log dir")
	if want := "key=log_dir path=" + stderr + " old_mode=0644 new_mode=0600"; !strings.Contains(logs.String(), want) {
		t.Errorf("no WARN %q in the node manager's log:\n%s", want, logs.String())
	}
}
