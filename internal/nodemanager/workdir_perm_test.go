package nodemanager

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/syncbuf"
)

// TestWorkDirPassageJobsPrivate: work_dir is a passage (0711) so that the
// users containers run as can reach their own directories under
// work_dir/containers, while a job's directory (its spills and map
// outputs) is the node manager's alone: one an older release left 0755
// with a 0644 spill is narrowed at start with a WARN naming it, and the
// containers directory is left to the container launcher.
func TestWorkDirPassageJobsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	work := filepath.Join(t.TempDir(), "nm")
	spill := filepath.Join(work, "job_7", "attempt_7_m_000000_0", "spill0")
	os.MkdirAll(filepath.Dir(spill), 0o755)
	os.WriteFile(spill, []byte("bob's map output"), 0o644)
	os.MkdirAll(filepath.Join(work, "containers"), 0o711)
	logs := &syncbuf.Buffer{}
	cfg := Config{}
	cfg.WorkDir = work
	nm := &NodeManager{cfg: cfg, log: slog.New(slog.NewTextHandler(logs, nil))}
	if err := nm.privateWorkDir(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{work: 0o711, filepath.Join(work, "job_7"): 0o700, spill: 0o600, filepath.Join(work, "containers"): 0o711} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %04o, want %04o", p, fi.Mode().Perm(), want)
		}
	}
	if !strings.Contains(logs.String(), "key=work_dir") || !strings.Contains(logs.String(), "spill0") {
		t.Errorf("no WARN naming the narrowed spill:\n%s", logs.String())
	}
}
