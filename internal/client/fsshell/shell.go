package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"smarth/internal/client"
)

// Shell runs fs commands with one client.
type Shell struct {
	FS       *client.FileSystem
	Out      io.Writer // command output
	Err      io.Writer // progress bars and per-path errors of multi-path commands
	Stdin    io.Reader
	Progress ProgressMode
	// IsTerminal says whether Err is a terminal (for ProgressAuto).
	IsTerminal bool
	Now        func() time.Time
	// Home is where relative paths start; default /user/<the client's
	// user>, HDFS's home directory.
	Home string

	// URI is the file system's "scheme://authority" (hdfs://nn:8020), for
	// the messages HDFS words with fully qualified paths (rm's trash
	// line, a destination whose parent is missing); "" prints plain paths.
	URI string

	// shown is the "scheme://authority" of the URI argument being worked
	// on ("" for a plain path): listings print paths under it, as hdfs
	// dfs prints them in the form they were given (PathData).
	shown string
	// relTo is the home directory while the argument being worked on is
	// a relative path ("" otherwise): hdfs dfs prints what a relative
	// argument names relative too ("ls rel" lists rel/r.txt).
	relTo string
}

// ErrSome is returned by multi-path commands when some paths failed
// (each was reported on Err).
var ErrSome = errors.New("some paths failed")

// each runs f on every path, reporting failures on Err and going on; it
// returns the single error itself when there was one path.
func (s *Shell) each(paths []string, f func(p string) error) error {
	if len(paths) == 1 {
		return f(paths[0])
	}
	failed := 0
	for _, p := range paths {
		if err := f(p); err != nil {
			fmt.Fprintln(s.Err, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d paths failed: %w", failed, len(paths), ErrSome)
	}
	return nil
}

// PutOptions tune Put.
type PutOptions struct {
	// Cmd names the command in messages: put (the default),
	// copyFromLocal or moveFromLocal.
	Cmd         string
	Overwrite   bool
	Replication int
	BlockSize   int64
	WriteMode   string
}

func (o PutOptions) cmd() string {
	if o.Cmd == "" {
		return "put"
	}
	return o.Cmd
}

// Put copies local files, directories (recursively) or "-" (stdin) to
// remote. With several sources, or when remote is an existing directory,
// each goes into remote under its base name.
func (s *Shell) Put(ctx context.Context, locals []string, remote string, o PutOptions) error {
	dirTarget := false
	if st, err := s.FS.Stat(ctx, remote); err == nil && st.IsDir {
		dirTarget = true
	} else if len(locals) > 1 {
		return notDirTarget(o.cmd(), remote, err)
	}
	return s.each(locals, func(local string) error {
		dst := remote
		if dirTarget {
			if local == "-" {
				return fail(o.cmd(), remote, fmt.Errorf("%w: stdin needs a file name as the target", client.ErrIsDir))
			}
			dst = path.Join(remote, filepath.Base(local))
		}
		return s.putOne(ctx, local, dst, o)
	})
}

func (s *Shell) putOne(ctx context.Context, local, dst string, o PutOptions) error {
	if local == "-" {
		return s.putReader(ctx, s.Stdin, -1, "stdin", dst, o)
	}
	st, err := os.Stat(local)
	if err != nil {
		return fail(o.cmd(), local, localErr(err))
	}
	if st.IsDir() {
		if err := s.FS.Mkdir(ctx, dst, 0o755, true); err != nil {
			return fail(o.cmd(), dst, err)
		}
		ents, err := os.ReadDir(local)
		if err != nil {
			return fail(o.cmd(), local, localErr(err))
		}
		for _, e := range ents {
			if err := s.putOne(ctx, filepath.Join(local, e.Name()), path.Join(dst, e.Name()), o); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.Open(local)
	if err != nil {
		return fail(o.cmd(), local, localErr(err))
	}
	defer f.Close()
	return s.putReader(ctx, f, st.Size(), filepath.Base(local), dst, o)
}

// putReader streams r (size bytes, -1 unknown) into dst as hdfs dfs
// -put does: into dst._COPYING_, renamed to dst once complete, so dst
// never names a half-written file, even when the put is interrupted or
// killed. On a failure the temporary file is deleted.
func (s *Shell) putReader(ctx context.Context, r io.Reader, size int64, name, dst string, o PutOptions) error {
	if old, err := s.FS.Stat(ctx, dst); err == nil {
		if old.IsDir {
			return fail(o.cmd(), dst, client.ErrIsDir)
		}
		if !o.Overwrite {
			return fail(o.cmd(), dst, fs.ErrExist)
		}
	}
	tmp := dst + copyingSuffix
	w, err := s.createCopying(ctx, tmp, o)
	if err != nil {
		return fail(o.cmd(), dst, err)
	}
	// Whatever ends this put early (an error, Ctrl-C cancelling ctx),
	// the temporary file goes; the deletion must outlive ctx.
	done := false
	defer func() {
		if !done {
			_ = w.Abort()
			_ = s.FS.Delete(context.WithoutCancel(ctx), tmp, false)
		}
	}()
	bar := s.bar(size, "put "+name)
	if bar != nil {
		r = io.TeeReader(r, bar)
	}
	// The progress bar counts bytes accepted by the writer, i.e. queued
	// in the pipelines; Close waits for the acks.
	_, err = io.CopyBuffer(w, r, make([]byte, 1<<20))
	if err != nil {
		bar.stop()
		var pe *client.PathError
		if !errors.As(err, &pe) {
			err = localErr(err) // the local read failed
		}
		return fail(o.cmd(), dst, err)
	}
	if err := w.Close(); err != nil {
		bar.stop()
		return fail(o.cmd(), dst, err)
	}
	if o.Overwrite {
		// Rename never replaces a file (HDFS semantics): make room.
		if err := s.FS.Delete(ctx, dst, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
			bar.stop()
			return fail(o.cmd(), dst, err)
		}
	}
	if err := s.FS.Rename(ctx, tmp, dst); err != nil {
		bar.stop()
		return fail(o.cmd(), dst, err)
	}
	done = true
	bar.finish()
	return nil
}

// createCopying creates a put's temporary file. One left by a put that
// was killed outright is still open under the dead client's lease, so
// overwriting it fails until the lease expires; with -f it is deleted
// first (deleting needs no lease), so put -f works again at once.
func (s *Shell) createCopying(ctx context.Context, tmp string, o PutOptions) (*client.FileWriter, error) {
	opts := client.CreateOptions{Overwrite: true, Replication: o.Replication, BlockSize: o.BlockSize, WriteMode: o.WriteMode}
	w, err := s.FS.Create(ctx, tmp, opts)
	if err == nil || !o.Overwrite {
		return w, err
	}
	if derr := s.FS.Delete(ctx, tmp, false); derr != nil {
		return nil, err
	}
	return s.FS.Create(ctx, tmp, opts)
}

// localErr strips the *os.PathError's own path (the caller names it).
func localErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &client.PathError{Op: pe.Op, Path: pe.Path, Kind: pe.Err, Msg: pe.Err.Error()}
	}
	return err
}

// copyOut streams a remote file to w, with a progress bar named name
// (none if name is empty).
func (s *Shell) copyOut(ctx context.Context, cmd, remote string, w io.Writer, name string) error {
	r, err := s.FS.Open(ctx, remote)
	if err != nil {
		return fail(cmd, remote, err)
	}
	defer r.Close()
	var bar *progress
	if name != "" {
		bar = s.bar(r.Size(), cmd+" "+name)
	}
	if bar != nil {
		w = io.MultiWriter(w, bar)
	}
	if _, err := io.CopyBuffer(w, r, make([]byte, 1<<20)); err != nil {
		bar.stop()
		return fail(cmd, remote, err)
	}
	bar.finish()
	return nil
}

// Setrep sets the replication of a file (or every file under a
// directory); with wait it polls until every block has that many
// replicas, up to timeout.
func (s *Shell) Setrep(ctx context.Context, n int, paths []string, wait bool, timeout time.Duration) error {
	return s.eachPath(ctx, "setrep", paths, func(p string) error {
		files, err := s.files(ctx, p)
		if err != nil {
			return fail("setrep", p, err)
		}
		for _, f := range files {
			if err := s.FS.SetReplication(ctx, f, n); err != nil {
				return fail("setrep", f, err)
			}
			fmt.Fprintf(s.Out, "Replication %d set: %s\n", n, f)
		}
		if !wait {
			return nil
		}
		for _, f := range files {
			if err := s.waitReplication(ctx, f, n, timeout); err != nil {
				return fail("setrep", f, err)
			}
		}
		return nil
	})
}

// files lists the files at or under p.
func (s *Shell) files(ctx context.Context, p string) ([]string, error) {
	st, err := s.FS.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir {
		return []string{st.Path}, nil
	}
	var out []string
	err = s.walk(ctx, st.Path, func(fi client.FileInfo) error {
		if !fi.IsDir {
			out = append(out, fi.Path)
		}
		return nil
	})
	return out, err
}

func (s *Shell) walk(ctx context.Context, dir string, f func(client.FileInfo) error) error {
	ents, err := s.FS.List(ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := f(e); err != nil {
			return err
		}
		if e.IsDir {
			if err := s.walk(ctx, e.Path, f); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Shell) waitReplication(ctx context.Context, p string, n int, timeout time.Duration) error {
	fmt.Fprintf(s.Err, "Waiting for %s ...", p)
	deadline := time.Now().Add(timeout)
	for {
		locs, err := s.FS.BlockLocations(ctx, p, 0, 1<<62)
		if err != nil {
			return err
		}
		done := true
		for _, l := range locs {
			if len(l.Hosts) != n {
				done = false
			}
		}
		if done {
			fmt.Fprintln(s.Err, " done")
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(s.Err)
			return fmt.Errorf("replication did not reach %d within %v", n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond): // poll interval
		}
		fmt.Fprint(s.Err, ".")
	}
}

func trimSlash(p string) string {
	if p != "/" {
		return strings.TrimRight(p, "/")
	}
	return p
}
