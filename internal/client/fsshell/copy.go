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
	"time"

	"smarth/internal/client"
)

// CpOptions are `hdfs dfs -cp`'s flags.
type CpOptions struct {
	Overwrite bool // -f: replace an existing file
	// Preserve (-p) keeps times, permissions, owner and group (changing the
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
	dst, err := s.Target(ctx, "cp", dstArg)
	if err != nil {
		return err
	}
	srcs, err := s.ExpandAll(ctx, "cp", srcArgs)
	if err != nil {
		return err
	}
	dstSt, dstErr := s.FS.Stat(ctx, dst)
	dstDir := dstErr == nil && dstSt.IsDir
	if len(srcs) > 1 && !dstDir {
		return notDirTarget("cp", dstArg, dstErr)
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

// preserve gives dst the times, permissions, owner and group of src
// (cp -p). Times go first: a mode without the owner's write bit would
// forbid setting them afterwards.
func (s *Shell) preserve(ctx context.Context, src client.FileInfo, dst string, o CpOptions) error {
	if !o.Preserve {
		return nil
	}
	if err := s.FS.SetTimes(ctx, dst, src.ModTime, src.AccessTime); err != nil {
		return fail("cp", dst, err)
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

// LocalAttrs are the times and modes of a local file or tree, taken
// before a put reads it (reading moves the access time), for put -p.
type LocalAttrs struct {
	entries []localAttr // parents before children
}

type localAttr struct {
	rel          string // slash-separated, "." for the root
	mode         fs.FileMode
	mtime, atime time.Time
}

// SnapLocal records what put -p keeps of local and everything under it.
func SnapLocal(local string) (LocalAttrs, error) {
	var la LocalAttrs
	err := filepath.WalkDir(local, func(lp string, d fs.DirEntry, err error) error {
		if err != nil {
			return fail("put", lp, localErr(err))
		}
		info, err := d.Info()
		if err != nil {
			return fail("put", lp, localErr(err))
		}
		rel, _ := filepath.Rel(local, lp)
		la.entries = append(la.entries, localAttr{rel: filepath.ToSlash(rel), mode: info.Mode(), mtime: info.ModTime(), atime: accessTime(info)})
		return nil
	})
	return la, err
}

// KeepLocalModes gives the files and directories Put made at dst the
// modification and access times and the permissions their local sources
// had when snapped (put -p; owner and group name local users, so they
// stay). Times go first: a mode without the owner's write bit would
// forbid them.
func (s *Shell) KeepLocalModes(ctx context.Context, la LocalAttrs, dst string) error {
	for _, e := range la.entries {
		rp := path.Join(dst, e.rel)
		if err := s.FS.SetTimes(ctx, rp, e.mtime, e.atime); err != nil {
			return fail("put", rp, err)
		}
		if err := s.FS.SetPermission(ctx, rp, e.mode&(fs.ModePerm|fs.ModeSticky)); err != nil {
			return fail("put", rp, err)
		}
	}
	return nil
}
