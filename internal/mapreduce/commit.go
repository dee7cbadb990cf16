package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// Output commit. A job's output appears whole or not at all, whatever
// crashes when, and a job never removes anything it did not create.
//
// A job assembles its output in a staging directory of its own, a hidden
// sibling of the output named after the job (StagingDir), created when
// the job is set up. Every task attempt writes under
// <staging>/_temporary/<attempt>/, a directory it creates only while
// _temporary exists and whose files it creates without making parents.
// When the whole job has succeeded, CommitJob moves the chosen attempts'
// files up into <staging>, removes _temporary, writes _SUCCESS, and
// publishes the prepared directory with one rename to <output>. A crash
// before that rename leaves no <output> (only the hidden staging
// directory); after it, the output is complete.
//
// AbortJob removes the staging directory and nothing else. Once it is
// gone, a straggling attempt of the aborted job cannot recreate it: its
// attempt directory needs _temporary, and its files need their directory.

// StagingDir is where job jobID assembles output before publishing it:
// <parent>/.<name>._temporary_<jobID>, hidden from input listings (names
// starting with "." are skipped, as Hadoop does) and unique to the job.
func StagingDir(output, jobID string) string {
	dir, name := path.Split(path.Clean(output))
	return path.Join(dir, "."+name+"._temporary_"+jobID)
}

// AttemptDir is where an attempt writes its output files before commit.
func AttemptDir(output, jobID, attempt string) string {
	return path.Join(StagingDir(output, jobID), "_temporary", attempt)
}

// SetupJob creates the job's staging directory and its _temporary, as
// the job's user: a user who may not create the output may not create
// this either, so the job fails before it runs. The staging directory
// must not exist yet.
func SetupJob(ctx context.Context, fsys FS, output, jobID string) error {
	stage := StagingDir(output, jobID)
	if err := fsys.MkdirAll(ctx, path.Dir(stage)); err != nil {
		return fmt.Errorf("set up job %s: %w", jobID, err)
	}
	if err := fsys.Mkdir(ctx, stage); err != nil {
		return fmt.Errorf("set up job %s: %w", jobID, err)
	}
	if err := fsys.Mkdir(ctx, path.Join(stage, "_temporary")); err != nil {
		return fmt.Errorf("set up job %s: %w", jobID, err)
	}
	return nil
}

// setupAttempt creates an attempt's directory. It fails once the job's
// _temporary is gone (the job was aborted or committed), which is what
// keeps a straggler from writing after its job ended.
func setupAttempt(ctx context.Context, fsys FS, dir string) error {
	err := fsys.Mkdir(ctx, dir)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("attempt directory %s: the job's _temporary is gone (job aborted or already committed): %w", dir, err)
	}
	return err
}

// CommitJob promotes the files of the given attempts and publishes the
// output with one rename. It may be run again after a crash: files
// already moved are not looked for again.
func CommitJob(ctx context.Context, fsys FS, output, jobID string, attempts []string) error {
	stage := StagingDir(output, jobID)
	for _, a := range attempts {
		if err := promote(ctx, fsys, stage, AttemptDir(output, jobID, a)); err != nil {
			return fmt.Errorf("commit %s of job %s: %w", a, jobID, err)
		}
	}
	if err := fsys.Delete(ctx, path.Join(stage, "_temporary"), true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("commit job %s: %w", jobID, err)
	}
	w, err := fsys.Create(ctx, path.Join(stage, "_SUCCESS"), CreateOptions{Overwrite: true, NoCreateParent: true})
	if err != nil {
		return fmt.Errorf("commit job %s: %w", jobID, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("commit job %s: %w", jobID, err)
	}
	return publish(ctx, fsys, stage, output)
}

// promote moves an attempt's files up into the staging directory.
func promote(ctx context.Context, fsys FS, stage, dir string) error {
	files, err := fsys.List(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the attempt wrote nothing
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := fsys.Rename(ctx, f.Path, path.Join(stage, path.Base(f.Path))); err != nil {
			return err
		}
	}
	return nil
}

// publish renames the prepared directory to the output: the one step
// that makes the output visible. A DFS rename onto an existing directory
// would move the staging directory inside it, so an output that appeared
// meanwhile fails the commit instead.
func publish(ctx context.Context, fsys FS, stage, output string) error {
	if _, err := fsys.Stat(ctx, output); err == nil {
		return fmt.Errorf("commit: output directory %s appeared while the job ran: %w", output, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("commit: output directory %s: %w", output, err)
	}
	if err := fsys.Rename(ctx, stage, output); err != nil {
		return fmt.Errorf("commit: publish %s as %s: %w", stage, output, err)
	}
	return nil
}

// AbortJob removes the job's staging directory, and so everything the
// job wrote; it never touches the output directory, which the job has
// not created unless it committed.
func AbortJob(ctx context.Context, fsys FS, output, jobID string) error {
	err := fsys.Delete(ctx, StagingDir(output, jobID), true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
