package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"smarth/internal/client"
)

// CpOptions are `hdfs dfs -cp`'s flags.
type CpOptions struct {
	Overwrite bool // -f: replace an existing file
	// Preserve (-p) keeps permissions, owner and group (changing the
	// owner needs a superuser, as in HDFS). Times are not kept: the
	// namespace has no setTimes yet.
	Preserve bool
}

// copyingSuffix marks a copy in progress, as HDFS's "._COPYING_": a
// reader never sees a half-copied file under the real name.
const copyingSuffix = "._COPYING_"

// Cp copies files and directory trees inside the file system. With several
// sources dst must be an existing directory; a source copied onto an
// existing directory goes into it under its own name.
func (s *Shell) Cp(ctx context.Context, srcArgs []string, dstArg string, o CpOptions) error {
	dst, err := s.Resolve(dstArg)
	if err != nil {
		return fail("cp", dstArg, err)
	}
	srcs, err := s.ExpandAll(ctx, "cp", srcArgs)
	if err != nil {
		return err
	}
	dstSt, dstErr := s.FS.Stat(ctx, dst)
	dstDir := dstErr == nil && dstSt.IsDir
	if len(srcs) > 1 && !dstDir {
		return fail("cp", dstArg, fmt.Errorf("%w: several sources need an existing directory as the target", client.ErrNotDir))
	}
	return s.each(srcs, func(src string) error {
		target := dst
		if dstDir {
			target = path.Join(dst, path.Base(src))
		}
		if target == src || strings.HasPrefix(target, strings.TrimSuffix(src, "/")+"/") {
			return fail("cp", target, fmt.Errorf("%w: cannot copy %s into itself", fs.ErrInvalid, src))
		}
		return s.cpOne(ctx, src, target, o)
	})
}

func (s *Shell) cpOne(ctx context.Context, src, dst string, o CpOptions) error {
	st, err := s.FS.Stat(ctx, src)
	if err != nil {
		return fail("cp", src, err)
	}
	if st.IsDir {
		if err := s.FS.Mkdir(ctx, dst, 0o755, false); err != nil && !errors.Is(err, fs.ErrExist) {
			return fail("cp", dst, err)
		}
		ents, err := s.FS.List(ctx, src)
		if err != nil {
			return fail("cp", src, err)
		}
		for _, e := range ents {
			if err := s.cpOne(ctx, e.Path, path.Join(dst, e.Name), o); err != nil {
				return err
			}
		}
		return s.preserve(ctx, st, dst, o)
	}
	if err := s.cpFile(ctx, src, dst, o); err != nil {
		return err
	}
	return s.preserve(ctx, st, dst, o)
}

// cpFile streams src into dst._COPYING_ and renames it into place at the
// end; on failure the temporary file is deleted.
func (s *Shell) cpFile(ctx context.Context, src, dst string, o CpOptions) error {
	if old, err := s.FS.Stat(ctx, dst); err == nil {
		if old.IsDir {
			return fail("cp", dst, client.ErrIsDir)
		}
		if !o.Overwrite {
			return fail("cp", dst, fs.ErrExist)
		}
	}
	r, err := s.FS.Open(ctx, src)
	if err != nil {
		return fail("cp", src, err)
	}
	defer r.Close()
	tmp := dst + copyingSuffix
	w, err := s.FS.Create(ctx, tmp, client.CreateOptions{Overwrite: true, NoCreateParent: true})
	if err != nil {
		return fail("cp", dst, err)
	}
	if _, err := io.CopyBuffer(w, r, make([]byte, 1<<20)); err != nil {
		_ = w.Abort()
		_ = s.FS.Delete(ctx, tmp, false)
		return fail("cp", src, err)
	}
	if err := w.Close(); err != nil {
		_ = s.FS.Delete(ctx, tmp, false)
		return fail("cp", dst, err)
	}
	if o.Overwrite {
		// Rename never replaces a file (HDFS semantics), so make room.
		if err := s.FS.Delete(ctx, dst, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = s.FS.Delete(ctx, tmp, false)
			return fail("cp", dst, err)
		}
	}
	if err := s.FS.Rename(ctx, tmp, dst); err != nil {
		_ = s.FS.Delete(ctx, tmp, false)
		return fail("cp", dst, err)
	}
	return nil
}

// preserve gives dst the permissions, owner and group of src (cp -p).
func (s *Shell) preserve(ctx context.Context, src client.FileInfo, dst string, o CpOptions) error {
	if !o.Preserve {
		return nil
	}
	if err := s.FS.SetPermission(ctx, dst, src.Mode&(fs.ModePerm|fs.ModeSticky)); err != nil {
		return fail("cp", dst, err)
	}
	cur, err := s.FS.Stat(ctx, dst)
	if err != nil {
		return fail("cp", dst, err)
	}
	if cur.Owner == src.Owner && cur.Group == src.Group {
		return nil
	}
	owner := src.Owner
	if cur.Owner == src.Owner {
		owner = "" // only the group differs: an owner may change that
	}
	return fail("cp", dst, s.FS.SetOwner(ctx, dst, owner, src.Group))
}

// PutTarget is where Put puts local given remote: into remote under the
// local's base name when remote is an existing directory, else remote
// itself. Call it before Put, while the answer is still Put's.
func (s *Shell) PutTarget(ctx context.Context, local, remote string) string {
	if st, err := s.FS.Stat(ctx, remote); err == nil && st.IsDir && local != "-" {
		return path.Join(remote, filepath.Base(local))
	}
	return remote
}

// KeepLocalModes gives the files and directories Put made at dst the
// permissions of their local sources (put -p). Times are not kept: the
// namespace has no setTimes yet.
func (s *Shell) KeepLocalModes(ctx context.Context, local, dst string) error {
	return filepath.WalkDir(local, func(lp string, d fs.DirEntry, err error) error {
		if err != nil {
			return fail("put", lp, localErr(err))
		}
		info, err := d.Info()
		if err != nil {
			return fail("put", lp, localErr(err))
		}
		rel, _ := filepath.Rel(local, lp)
		rp := path.Join(dst, filepath.ToSlash(rel))
		return fail("put", rp, s.FS.SetPermission(ctx, rp, info.Mode()&(fs.ModePerm|fs.ModeSticky)))
	})
}
