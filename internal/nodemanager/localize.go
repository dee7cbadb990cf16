package nodemanager

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"smarth/internal/mapreduce"
)

// Shipped files (Hadoop's distributed cache): a job's -files and
// -archives are fetched from the DFS once per job on this node, as the
// job's user (so DFS permissions decide what a job may ship), into the
// job's directory, which is the node manager's alone; archives are
// unpacked there. Each container then gets them in its work directory
// under their link names: hard links to the job's copy where the two
// directories share a file system (root-owned and read-only to the
// task, so one attempt cannot change what the next one runs), else
// copies owned by the task's user.

// Limits on what one job's shipped files may put on a node's disk, so
// that a job cannot fill it with an archive bomb.
const (
	maxShippedBytes   = 8 << 30
	maxArchiveEntries = 100_000
)

type shippedCache struct {
	mu   sync.Mutex
	jobs map[string]*jobShipped
}

type jobShipped struct {
	once sync.Once
	dir  string
	err  error
}

// fetch localizes job's shipped files once; concurrent attempts of the
// job wait for the first.
func (c *shippedCache) fetch(ctx context.Context, job, jobDir string, fsys mapreduce.FS, items []mapreduce.Shipped) (string, error) {
	c.mu.Lock()
	if c.jobs == nil {
		c.jobs = map[string]*jobShipped{}
	}
	js := c.jobs[job]
	if js == nil {
		js = &jobShipped{}
		c.jobs[job] = js
	}
	c.mu.Unlock()
	js.once.Do(func() {
		js.dir = filepath.Join(jobDir, "shipped")
		js.err = localizeAll(ctx, fsys, js.dir, items)
		if js.err != nil {
			os.RemoveAll(js.dir)
		}
	})
	if js.err != nil {
		// A later attempt (the DFS was briefly unreachable) tries again.
		c.mu.Lock()
		if c.jobs[job] == js {
			delete(c.jobs, job)
		}
		c.mu.Unlock()
	}
	return js.dir, js.err
}

// forget drops a finished job's entry (its directory goes with the job's).
func (c *shippedCache) forget(job string) {
	c.mu.Lock()
	delete(c.jobs, job)
	c.mu.Unlock()
}

func localizeAll(ctx context.Context, fsys mapreduce.FS, dir string, items []mapreduce.Shipped) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := mkdirAll0755(dir); err != nil { // below the job's 0700 directory
		return err
	}
	budget := int64(maxShippedBytes)
	for _, it := range items {
		if err := localizeOne(ctx, fsys, dir, it, &budget); err != nil {
			return fmt.Errorf("%s: %w", it.Path, err)
		}
	}
	return nil
}

func localizeOne(ctx context.Context, fsys mapreduce.FS, dir string, it mapreduce.Shipped, budget *int64) error {
	st, err := fsys.Stat(ctx, it.Path)
	if err != nil {
		return err
	}
	if st.IsDir {
		return errors.New("is a directory (ship a directory as an archive)")
	}
	if st.Size > *budget {
		return fmt.Errorf("%d bytes: over the %d bytes a job may ship to a node", st.Size, int64(maxShippedBytes))
	}
	in, err := fsys.Open(ctx, it.Path)
	if err != nil {
		return err
	}
	defer in.Close()
	dst := filepath.Join(dir, it.Name)
	if !it.Archive {
		// Executable: a shipped script is run by its name, as Hadoop's
		// localized files are.
		n, err := writeFile(dst, in, 0o755, *budget)
		*budget -= n
		return err
	}
	raw := dst + ".archive"
	n, err := writeFile(raw, in, 0o600, *budget)
	*budget -= n
	if err != nil {
		return err
	}
	defer os.Remove(raw)
	if err := mkdirAll0755(dst); err != nil {
		return err
	}
	return unpack(raw, it.Path, dst, budget)
}

// writeFile copies at most limit bytes of r to a new file.
func writeFile(dst string, r io.Reader, mode fs.FileMode, limit int64) (int64, error) {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if err == nil {
		// The mode whatever the daemon's umask (0077): the task's user
		// reads these through its own directory's link; what keeps
		// others out is the job directory above the original (0700).
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("over the %d bytes a job may ship to a node", int64(maxShippedBytes))
	}
	return n, err
}

// unpack extracts the archive at raw (named dfsName in the DFS) into dst:
// regular files and directories only, every name inside dst.
func unpack(raw, dfsName, dst string, budget *int64) error {
	lower := strings.ToLower(dfsName)
	switch {
	case strings.HasSuffix(lower, ".zip") || strings.HasSuffix(lower, ".jar"):
		zr, err := zip.OpenReader(raw)
		if err != nil {
			return err
		}
		defer zr.Close()
		if len(zr.File) > maxArchiveEntries {
			return fmt.Errorf("%d entries: over the %d an archive may hold", len(zr.File), maxArchiveEntries)
		}
		for _, f := range zr.File {
			mode := f.Mode()
			if err := extract(dst, f.Name, mode, budget, func() (io.ReadCloser, error) { return f.Open() }); err != nil {
				return err
			}
		}
		return nil
	case strings.HasSuffix(lower, ".tar") || strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz"):
		f, err := os.Open(raw)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if !strings.HasSuffix(lower, ".tar") {
			gz, err := gzip.NewReader(f)
			if err != nil {
				return err
			}
			defer gz.Close()
			r = gz
		}
		tr := tar.NewReader(r)
		for n := 0; ; n++ {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if n >= maxArchiveEntries {
				return fmt.Errorf("over the %d entries an archive may hold", maxArchiveEntries)
			}
			mode := h.FileInfo().Mode()
			if err := extract(dst, h.Name, mode, budget, func() (io.ReadCloser, error) { return io.NopCloser(tr), nil }); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("not an archive this runtime unpacks (.zip, .jar, .tar, .tar.gz, .tgz)")
}

// extract writes one archive entry below dst. Names that would land
// outside dst, links, devices and pipes are refused: an archive is
// data, and a link could point a later write at any file the node
// manager may write.
func extract(dst, name string, mode fs.FileMode, budget *int64, open func() (io.ReadCloser, error)) error {
	rel := strings.TrimSuffix(filepath.FromSlash(name), string(filepath.Separator))
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("archive entry %q leaves the archive's directory", name)
	}
	target := filepath.Join(dst, rel)
	switch {
	case mode.IsDir():
		return mkdirAll0755(target)
	case mode.IsRegular():
	default:
		return fmt.Errorf("archive entry %q is a %v, not a file or directory", name, mode.Type())
	}
	if err := mkdirAll0755(filepath.Dir(target)); err != nil {
		return err
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	n, err := writeFile(target, r, perm, *budget)
	*budget -= n
	if err != nil {
		return fmt.Errorf("archive entry %q: %w", name, err)
	}
	return nil
}

// linkShipped puts every shipped item from the job's directory src into
// a container's work directory dst; uid and gid are the container user's
// (-1: the node manager's own, the default executor).
func linkShipped(src, dst string, items []mapreduce.Shipped, uid, gid int) error {
	for _, it := range items {
		from, to := filepath.Join(src, it.Name), filepath.Join(dst, it.Name)
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(from, p)
			if err != nil {
				return err
			}
			out := filepath.Join(to, rel)
			if d.IsDir() {
				if err := os.Mkdir(out, 0o755); err != nil {
					return err
				}
				if err := os.Chmod(out, 0o755); err != nil { // umask aside
					return err
				}
				return chownIf(out, uid, gid)
			}
			if err := os.Link(p, out); err == nil {
				return nil
			} else if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, fs.ErrPermission) {
				return err
			}
			// Another file system (or links refused): a copy, the user's.
			info, err := d.Info()
			if err != nil {
				return err
			}
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			if _, err := writeFile(out, in, info.Mode().Perm(), info.Size()); err != nil {
				return err
			}
			return chownIf(out, uid, gid)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", it.Name, err)
		}
	}
	return nil
}

func chownIf(p string, uid, gid int) error {
	if uid < 0 {
		return nil
	}
	return os.Lchown(p, uid, gid)
}

// mkdirAll0755 makes dir and its missing parents 0755 whatever the
// daemon's umask: the task's user must pass through an unpacked
// archive's directories.
func mkdirAll0755(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if err := mkdirAll0755(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(dir, 0o755)
}
