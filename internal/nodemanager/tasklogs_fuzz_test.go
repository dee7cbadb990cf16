package nodemanager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzOpenLogFile gives the task-log web path's three parts (job,
// attempt, file name; arbitrary, as a URL carries them) to openLogFile:
// whatever opens must be a stdout or stderr file of an attempt under the
// log directory, never a file beside or above it.
func FuzzOpenLogFile(f *testing.F) {
	base := f.TempDir()
	dir := filepath.Join(base, "logs")
	attempt := filepath.Join(dir, "job_1", "attempt_1_m_0_0")
	if err := os.MkdirAll(attempt, 0o755); err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{filepath.Join(attempt, "stderr"), filepath.Join(attempt, "secret"),
		filepath.Join(dir, "job_1", "stderr"), filepath.Join(base, "stderr")} {
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Add("job_1", "attempt_1_m_0_0", "stderr")
	f.Add("job_1", "attempt_1_m_0_0", "secret")
	f.Add("job_1", "..", "stderr")
	f.Add("..", "..", "stderr")
	f.Add("job_1/../..", "attempt_1_m_0_0", "stderr")
	f.Add("job_1", "attempt_1_m_0_0/..", "stderr")
	f.Add("job_1", "attempt_", "../stderr")
	f.Fuzz(func(t *testing.T, job, att, name string) {
		fh, err := openLogFile(dir, job, att, name)
		if err != nil {
			return
		}
		defer fh.Close()
		rel, err := filepath.Rel(dir, fh.Name())
		parts := strings.Split(rel, string(filepath.Separator))
		if err != nil || len(parts) != 3 || !strings.HasPrefix(parts[0], "job_") || !strings.HasPrefix(parts[1], "attempt_") ||
			(parts[2] != "stderr" && parts[2] != "stdout") || strings.Contains(rel, "..") {
			t.Fatalf("opened %s for %q %q %q", fh.Name(), job, att, name)
		}
	})
}
