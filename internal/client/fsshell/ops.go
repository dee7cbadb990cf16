package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"smarth/internal/client"
	"smarth/internal/pathglob"
)

// Cat writes files to Out.
func (s *Shell) Cat(ctx context.Context, args []string) error {
	return s.eachPath(ctx, "cat", args, func(p string) error { return s.copyOut(ctx, "cat", p, s.Out, "") })
}

// Mkdir makes directories; with parents, missing parents too and no error
// if a directory is there already.
func (s *Shell) Mkdir(ctx context.Context, args []string, parents bool) error {
	return s.eachPath(ctx, "mkdir", args, func(p string) error {
		// The namenode's Mkdirs succeeds on an existing directory;
		// mkdir without -p says "File exists", and on a file, with or
		// without -p, "Is not a directory", as HDFS.
		if st, err := s.FS.Stat(ctx, p); err == nil && !st.IsDir {
			return fail("mkdir", p, client.ErrNotDir)
		} else if err == nil && !parents {
			return fail("mkdir", p, fs.ErrExist)
		}
		err := s.FS.Mkdir(ctx, p, 0o755, parents)
		if !parents && errors.Is(err, fs.ErrNotExist) {
			// HDFS names the missing parent, fully qualified:
			// "mkdir: `hdfs://nn:8020/a': No such file or directory".
			return &Error{Cmd: "mkdir", Path: s.qualify(path.Dir(p)), Err: fs.ErrNotExist}
		}
		return fail("mkdir", p, err)
	})
}

// RmOptions tune Rm.
type RmOptions struct {
	Recursive bool // directories and what they hold
	Force     bool // no error (and exit 0) for missing paths
	// SkipTrash deletes at once even when the trash is on.
	SkipTrash bool
}

// Rm deletes files, and directories with Recursive. With the trash on
// (client.TrashInterval) and without SkipTrash it moves each into the
// user's trash instead, printing "Moved: 'PATH' to trash at: WHERE";
// otherwise it prints "Deleted PATH", as HDFS does.
func (s *Shell) Rm(ctx context.Context, args []string, o RmOptions) error {
	return s.eachPathOpt(ctx, "rm", args, o.Force, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			if o.Force && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fail("rm", p, err)
		}
		if st.IsDir && !o.Recursive {
			return fail("rm", p, client.ErrIsDir)
		}
		if p == "/" {
			return fail("rm", p, fmt.Errorf("%w: the root directory cannot be deleted", fs.ErrInvalid))
		}
		if !o.SkipTrash {
			if done, err := s.moveToTrash(ctx, p); done || err != nil {
				return err
			}
		}
		if err := s.FS.Delete(ctx, p, o.Recursive); err != nil {
			if o.Force && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fail("rm", p, err)
		}
		fmt.Fprintln(s.Out, "Deleted", s.show(p))
		return nil
	})
}

// Rmdir deletes empty directories; with ignoreNonEmpty a non-empty one is
// left alone without an error.
func (s *Shell) Rmdir(ctx context.Context, args []string, ignoreNonEmpty bool) error {
	return s.eachPath(ctx, "rmdir", args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail("rmdir", p, err)
		}
		if !st.IsDir {
			return fail("rmdir", p, client.ErrNotDir)
		}
		err = s.FS.Delete(ctx, p, false)
		if ignoreNonEmpty && errors.Is(err, client.ErrNotEmpty) {
			return nil
		}
		return fail("rmdir", p, err)
	})
}

// Mv renames or moves; with several sources dst must be a directory. A
// failure caused by the destination (its parent missing, a file already
// there) names the destination, as HDFS does.
func (s *Shell) Mv(ctx context.Context, srcArgs []string, dstArg string) error {
	dst, err := s.Target(ctx, "mv", dstArg)
	if err != nil {
		return err
	}
	dstSt, dstErr := s.FS.Stat(ctx, dst)
	dstDir := dstErr == nil && dstSt.IsDir
	srcs, err := s.ExpandAll(ctx, "mv", srcArgs)
	if err != nil {
		return err
	}
	if len(srcs) > 1 && !dstDir {
		return notDirTarget("mv", dstArg, dstErr)
	}
	return s.each(srcs, func(src string) error {
		err := s.FS.Rename(ctx, src, dst)
		if err == nil {
			return nil
		}
		if _, serr := s.FS.Stat(ctx, src); serr != nil {
			return nameArg(fail("mv", src, err), src, pickArg(srcArgs, src))
		}
		// src is there, so the destination is at fault.
		target := dstArg
		if dstDir {
			target = path.Join(dstArg, path.Base(src))
		}
		return fail("mv", target, err)
	})
}

// pickArg is the arg that names p when there is a single one, so errors
// say what the user typed; p otherwise.
func pickArg(args []string, p string) string {
	if len(args) == 1 && !pathglob.Has(args[0]) {
		return args[0]
	}
	return p
}

// Touchz creates empty files. An existing empty file is created afresh
// (its times become now); a non-empty one is an error, as in HDFS.
func (s *Shell) Touchz(ctx context.Context, args []string) error {
	return s.eachPath(ctx, "touchz", args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		switch {
		case err == nil && st.IsDir:
			return fail("touchz", p, client.ErrIsDir)
		case err == nil && st.Size != 0:
			return fail("touchz", p, &client.PathError{Op: "touchz", Path: p, Msg: "Not a zero-length file"})
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return fail("touchz", p, err)
		}
		w, err := s.FS.Create(ctx, p, client.CreateOptions{Overwrite: err == nil, NoCreateParent: true})
		if err != nil {
			return fail("touchz", p, err)
		}
		return fail("touchz", p, w.Close())
	})
}

// Test answers `test -e|-d|-f|-s|-z PATH`: exists, is a directory, is a
// file, is non-empty, is zero length. A missing path is false, not an
// error; only a failure to ask (namenode down, permission) is.
func (s *Shell) Test(ctx context.Context, flag, arg string) (bool, error) {
	ps, err := s.Expand(ctx, arg)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fail("test", arg, err)
	}
	st, err := s.FS.Stat(ctx, ps[0])
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, client.ErrNotDir) {
		return false, nil
	}
	if err != nil {
		return false, nameArg(fail("test", ps[0], err), ps[0], arg)
	}
	switch flag {
	case "e":
		return true, nil
	case "d":
		return st.IsDir, nil
	case "f":
		return !st.IsDir, nil
	case "s":
		return st.Size > 0, nil
	case "z":
		return st.Size == 0, nil
	}
	return false, fail("test", arg, fmt.Errorf("%w: unknown test -%s (want -e, -d, -f, -s or -z)", fs.ErrInvalid, flag))
}
