package fsshell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"smarth/internal/client"
)

// MergeOptions are `hdfs dfs -getmerge`'s flags.
type MergeOptions struct {
	NewLine        bool // -nl: a newline after each file
	SkipEmptyFiles bool // -skip-empty-file: no newline after an empty file
}

// GetMerge concatenates remote files into one local file, as hdfs dfs
// -getmerge: each source (globs expanded) is a file, or a directory whose
// files (not its subdirectories) are taken in name order (the namenode
// lists in that order). Every source is
// checked before anything is written: a missing one is reported ("getmerge:
// `/x': No such file or directory") and nothing is written, as HDFS's Merge
// stops when collecting the paths failed. The file is written under a
// temporary name and renamed at the end, so a failed merge leaves no
// partial file; an existing file is replaced, an existing directory is
// "Is a directory".
func (s *Shell) GetMerge(ctx context.Context, srcArgs []string, local string, o MergeOptions) error {
	const cmd = "getmerge"
	if st, err := os.Stat(local); err == nil && st.IsDir() {
		return fail(cmd, local, client.ErrIsDir)
	}
	var files []client.FileInfo
	var errs []error
	for _, a := range srcArgs {
		ps, err := s.Expand(ctx, a)
		if err != nil {
			errs = append(errs, fail(cmd, a, err))
			continue
		}
		for _, p := range ps {
			st, err := s.FS.Stat(ctx, p)
			if err != nil {
				errs = append(errs, nameArg(fail(cmd, p, err), p, a))
				continue
			}
			if !st.IsDir {
				files = append(files, st)
				continue
			}
			ents, err := s.FS.List(ctx, st.Path)
			if err != nil {
				errs = append(errs, nameArg(fail(cmd, p, err), p, a))
				continue
			}
			for _, e := range ents {
				if !e.IsDir { // one level only, as HDFS
					files = append(files, e)
				}
			}
		}
	}
	switch {
	case len(errs) == 1 && len(srcArgs) == 1:
		return errs[0]
	case len(errs) > 0:
		for _, err := range errs {
			fmt.Fprintln(s.Err, err)
		}
		return fmt.Errorf("%d of %d sources failed, nothing merged: %w", len(errs), len(srcArgs), ErrSome)
	}
	return s.writeMerged(ctx, files, local, o)
}

func (s *Shell) writeMerged(ctx context.Context, files []client.FileInfo, local string, o MergeOptions) (err error) {
	const cmd = "getmerge"
	// Hadoop's local create makes missing parents.
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return fail(cmd, local, localErr(err))
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), "."+filepath.Base(local)+".smarth-getmerge-*")
	if err != nil {
		return fail(cmd, local, localErr(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	for _, f := range files {
		if f.Size != 0 {
			if err := s.copyOut(ctx, cmd, f.Path, tmp, ""); err != nil {
				return err
			}
		}
		if o.NewLine && (f.Size != 0 || !o.SkipEmptyFiles) {
			if _, err := tmp.WriteString("\n"); err != nil {
				return fail(cmd, local, localErr(err))
			}
		}
	}
	if err := tmp.Close(); err != nil {
		return fail(cmd, local, localErr(err))
	}
	// CreateTemp makes the file 0600; a merged copy is a plain 0644 file.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fail(cmd, local, localErr(err))
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return fail(cmd, local, localErr(err))
	}
	return nil
}
