package fsshell

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"smarth/internal/client"
)

// GetOptions are `hdfs dfs -get`'s flags.
type GetOptions struct {
	Overwrite bool // -f: replace an existing local file
	Preserve  bool // -p: keep modification and access times and permissions
}

// Get copies remote files or directory trees (globs expanded) to local
// ("-": stdout). A file is written to a temporary name and renamed at the
// end, so a failed get leaves no partial file.
func (s *Shell) Get(ctx context.Context, remoteArgs []string, local string, o GetOptions) error {
	remotes, err := s.ExpandAll(ctx, "get", remoteArgs)
	if err != nil {
		return err
	}
	dirTarget := false
	if local != "-" {
		if st, err := os.Stat(local); err == nil && st.IsDir() {
			dirTarget = true
		} else if len(remotes) > 1 {
			if err != nil {
				err = localErr(err)
			}
			return notDirTarget("get", local, err)
		}
	}
	return s.each(remotes, func(remote string) error {
		dst := local
		if dirTarget {
			dst = filepath.Join(local, path.Base(remote))
		}
		return nameArg(s.getOne(ctx, remote, dst, o), remote, pickArg(remoteArgs, remote))
	})
}

func (s *Shell) getOne(ctx context.Context, remote, dst string, o GetOptions) error {
	st, err := s.FS.Stat(ctx, remote)
	if err != nil {
		return fail("get", remote, err)
	}
	if st.IsDir {
		if dst == "-" {
			return fail("get", remote, client.ErrIsDir)
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fail("get", dst, localErr(err))
		}
		ents, err := s.FS.List(ctx, st.Path)
		if err != nil {
			return fail("get", remote, err)
		}
		for _, e := range ents {
			if err := s.getOne(ctx, e.Path, filepath.Join(dst, e.Name), o); err != nil {
				return err
			}
		}
		return s.keepLocal(st, dst, o)
	}
	if dst == "-" {
		return s.copyOut(ctx, "get", st.Path, s.Out, "")
	}
	if lst, err := os.Stat(dst); err == nil && (lst.IsDir() || !o.Overwrite) {
		if lst.IsDir() {
			return fail("get", dst, client.ErrIsDir)
		}
		return fail("get", dst, fs.ErrExist) // HDFS's words alone, as hdfs dfs -get says them
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".smarth-get-*")
	if err != nil {
		return fail("get", dst, localErr(err))
	}
	if err := s.copyToFile(ctx, st.Path, tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fail("get", dst, localErr(err))
	}
	// CreateTemp makes the file 0600, which would hide a plain copy
	// from the user's group; give it the usual 0644.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fail("get", dst, localErr(err))
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return fail("get", dst, localErr(err))
	}
	return s.keepLocal(st, dst, o)
}

// keepLocal gives a local copy the remote entry's permissions and times
// (get -p). Owner and group are left: they name users of the cluster,
// not necessarily of this host.
func (s *Shell) keepLocal(st client.FileInfo, dst string, o GetOptions) error {
	if !o.Preserve {
		return nil
	}
	if err := os.Chmod(dst, st.Mode.Perm()); err != nil {
		return fail("get", dst, localErr(err))
	}
	if err := os.Chtimes(dst, st.AccessTime, st.ModTime); err != nil {
		return fail("get", dst, localErr(err))
	}
	return nil
}

// copyToFile copies a remote file into the local file dst with
// FileReader.CopyToFile: large writes from the verified packets
// themselves, in the reading goroutine (issue 27; filecopy.go says why a
// writer of its own measured worse).
func (s *Shell) copyToFile(ctx context.Context, remote string, dst *os.File) error {
	r, err := s.FS.Open(ctx, remote)
	if err != nil {
		return fail("get", remote, err)
	}
	defer r.Close()
	bar := s.bar(r.Size(), "get "+path.Base(remote))
	if _, err := r.CopyToFile(dst, bar.add); err != nil {
		bar.stop()
		return fail("get", remote, err)
	}
	bar.finish()
	return nil
}
