package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
)

// crashFS is a LocalFS whose process "dies" at its n-th mutating call
// (create, mkdir, rename, delete): that call and every later one fail, as
// if the committing process was killed there. Reads keep working, for
// the test's own look at the result.
type crashFS struct {
	*LocalFS
	at    int64 // the mutating call that crashes (1-based); 0 never
	calls atomic.Int64
}

var errCrashed = errors.New("process killed (injected)")

func (c *crashFS) mutate() error {
	if n := c.calls.Add(1); c.at > 0 && n >= c.at {
		return errCrashed
	}
	return nil
}

func (c *crashFS) Create(ctx context.Context, p string, o CreateOptions) (io.WriteCloser, error) {
	if err := c.mutate(); err != nil {
		return nil, err
	}
	return c.LocalFS.Create(ctx, p, o)
}

func (c *crashFS) Mkdir(ctx context.Context, p string) error {
	if err := c.mutate(); err != nil {
		return err
	}
	return c.LocalFS.Mkdir(ctx, p)
}

func (c *crashFS) Rename(ctx context.Context, src, dst string) error {
	if err := c.mutate(); err != nil {
		return err
	}
	return c.LocalFS.Rename(ctx, src, dst)
}

func (c *crashFS) Delete(ctx context.Context, p string, recursive bool) error {
	if err := c.mutate(); err != nil {
		return err
	}
	return c.LocalFS.Delete(ctx, p, recursive)
}

const commitJob = "job_t_0001"

// prepareJob sets up a job over a fresh LocalFS whose attempts each
// wrote one part file, and returns the FS and the attempts.
func prepareJob(t *testing.T) (*LocalFS, []string) {
	t.Helper()
	lfs, err := NewLocalFS(filepath.Join(t.TempDir(), "fs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := SetupJob(ctx, lfs, "/data/out", commitJob); err != nil {
		t.Fatal(err)
	}
	var attempts []string
	for i := range 3 {
		a := fmt.Sprintf("attempt_%s_r_%06d_0", commitJob, i)
		dir := AttemptDir("/data/out", commitJob, a)
		if err := setupAttempt(ctx, lfs, dir); err != nil {
			t.Fatal(err)
		}
		w, err := lfs.Create(ctx, path.Join(dir, OutputName(false, i)), CreateOptions{NoCreateParent: true})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "part %d\n", i)
		w.Close()
		attempts = append(attempts, a)
	}
	return lfs, attempts
}

// outputState says what a reader of /data/out sees: "absent", "whole"
// (every part and _SUCCESS, nothing else) or a description of a partial
// output.
func outputState(t *testing.T, lfs *LocalFS) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(lfs.Root, "data", "out"))
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"_SUCCESS", "part-r-00000", "part-r-00001", "part-r-00002"}
	if slices.Equal(names, want) {
		return "whole"
	}
	return fmt.Sprintf("partial %v", names)
}

// naiveCommit is the commit smarth had before: each file renamed
// straight into the output. It is the control: the crash test must catch
// its half-visible output.
func naiveCommit(ctx context.Context, fsys FS, output, jobID string, attempts []string) error {
	for _, a := range attempts {
		files, err := fsys.List(ctx, AttemptDir(output, jobID, a))
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := fsys.Rename(ctx, f.Path, path.Join(output, path.Base(f.Path))); err != nil {
				return err
			}
		}
	}
	w, err := fsys.Create(ctx, path.Join(output, "_SUCCESS"), CreateOptions{})
	if err != nil {
		return err
	}
	return w.Close()
}

type commitFunc func(ctx context.Context, fsys FS, output, jobID string, attempts []string) error

// crashEverywhere kills commit at each of its mutating calls in turn and
// returns what a reader saw after each crash.
func crashEverywhere(t *testing.T, commit commitFunc) []string {
	t.Helper()
	var seen []string
	for at := int64(1); ; at++ {
		lfs, attempts := prepareJob(t)
		cfs := &crashFS{LocalFS: lfs, at: at}
		err := commit(context.Background(), cfs, "/data/out", commitJob, attempts)
		seen = append(seen, outputState(t, lfs))
		if err == nil {
			return seen // at is past the commit's last mutating call
		}
		if !errors.Is(err, errCrashed) {
			t.Fatalf("crash at call %d: commit failed otherwise: %v", at, err)
		}
		// After the crash a restarted committer may finish the commit
		// (roll forward) or abort it; either way the output is whole or
		// absent, and an abort never removes a published output.
		if err := AbortJob(context.Background(), lfs, "/data/out", commitJob); err != nil {
			t.Fatal(err)
		}
		if s := outputState(t, lfs); s != seen[len(seen)-1] {
			t.Fatalf("crash at call %d: the abort after it changed the output from %s to %s", at, seen[len(seen)-1], s)
		}
	}
}

func TestCommitIsAllOrNothingWhereverItCrashes(t *testing.T) {
	seen := crashEverywhere(t, CommitJob)
	for i, s := range seen[:len(seen)-1] {
		if s != "absent" && s != "whole" {
			t.Errorf("killed at mutating call %d of the commit: a reader sees a %s output", i+1, s)
		}
	}
	if last := seen[len(seen)-1]; last != "whole" {
		t.Fatalf("the commit that was not killed left a %s output", last)
	}
	t.Logf("states after a crash at each of %d calls: %v", len(seen)-1, seen)
}

// The control: the same crashes expose the per-file commit's partial
// output, so the test above can fail.
func TestCrashCheckCatchesPerFileCommit(t *testing.T) {
	partial := 0
	for _, s := range crashEverywhere(t, naiveCommit) {
		if s != "absent" && s != "whole" {
			partial++
		}
	}
	if partial == 0 {
		t.Fatal("no crash of the per-file commit left a partial output: the crash check is blind")
	}
}

func TestStragglerCannotRecreateTemporary(t *testing.T) {
	for _, aborted := range []bool{true, false} { // false: the control
		lfs, _ := prepareJob(t)
		ctx := context.Background()
		if aborted {
			if err := AbortJob(ctx, lfs, "/data/out", commitJob); err != nil {
				t.Fatal(err)
			}
		}
		a := fmt.Sprintf("attempt_%s_m_%06d_9", commitJob, 0)
		dir := AttemptDir("/data/out", commitJob, a)
		err := setupAttempt(ctx, lfs, dir)
		if err == nil {
			_, err = (&outputFS{FS: lfs}).Create(ctx, path.Join(dir, "part-m-00000"), CreateOptions{})
		}
		_, serr := os.Stat(filepath.Join(lfs.Root, StagingDir("/data/out", commitJob)))
		if aborted && (err == nil || !errors.Is(serr, fs.ErrNotExist)) {
			t.Fatalf("a straggler after abort: write err %v, staging dir stat %v; want a refused write and no directory", err, serr)
		}
		if !aborted && err != nil {
			t.Fatalf("control: an attempt of a live job cannot write: %v", err)
		}
	}
}

func TestAbortLeavesAnExistingOutputAlone(t *testing.T) {
	lfs, _ := prepareJob(t)
	ctx := context.Background()
	keep := filepath.Join(lfs.Root, "data", "out")
	os.MkdirAll(keep, 0o755)
	os.WriteFile(filepath.Join(keep, "precious"), []byte("x"), 0o644)
	if err := AbortJob(ctx, lfs, "/data/out", commitJob); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(keep, "precious")); err != nil {
		t.Fatalf("abort removed a file it did not write: %v", err)
	}
	// And a commit refuses to publish over it.
	lfs2, attempts := prepareJob(t)
	os.MkdirAll(filepath.Join(lfs2.Root, "data", "out"), 0o755)
	if err := CommitJob(ctx, lfs2, "/data/out", commitJob, attempts); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("commit over an output that appeared: %v, want fs.ErrExist", err)
	}
}
