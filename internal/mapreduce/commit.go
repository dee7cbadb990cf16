package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// Output commit, as Hadoop's FileOutputCommitter (algorithm 1): every
// attempt writes under <output>/_temporary/<attempt>/; the runtime picks
// one successful attempt per task; when the whole job has succeeded,
// CommitJob moves the chosen attempts' files into <output>, deletes
// _temporary and writes _SUCCESS. A failed or killed job calls AbortJob,
// which removes the output directory it created, so no partial output is
// ever left behind.

// SetupJob creates the output's temporary directory.
func SetupJob(ctx context.Context, fsys FS, output string) error {
	return fsys.MkdirAll(ctx, path.Join(output, "_temporary"))
}

// CommitJob promotes the files of the given attempts and finalises output.
func CommitJob(ctx context.Context, fsys FS, output string, attempts []string) error {
	for _, a := range attempts {
		files, err := fsys.List(ctx, AttemptDir(output, a))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the attempt wrote nothing
		}
		if err != nil {
			return fmt.Errorf("commit %s: %w", a, err)
		}
		for _, f := range files {
			dst := path.Join(output, path.Base(f.Path))
			if err := fsys.Rename(ctx, f.Path, dst); err != nil {
				return fmt.Errorf("commit %s: %w", a, err)
			}
		}
	}
	if err := fsys.Delete(ctx, path.Join(output, "_temporary"), true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("commit: %w", err)
	}
	w, err := fsys.Create(ctx, path.Join(output, "_SUCCESS"), CreateOptions{Overwrite: true})
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return w.Close()
}

// AbortJob removes what the job wrote: its _temporary directory, then
// the output directory only if that is now empty. The output did not
// exist when the job was submitted (the resource manager checks), so an
// empty one is the job's own; a directory with anything else in it is
// never removed, whoever made it.
func AbortJob(ctx context.Context, fsys FS, output string) error {
	if output == "" || output == "/" {
		return nil
	}
	err := fsys.Delete(ctx, path.Join(output, "_temporary"), true)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Not recursive: fails, and so leaves the directory, when anything
	// else is inside; that is not an error of the abort.
	_ = fsys.Delete(ctx, output, false)
	return nil
}
