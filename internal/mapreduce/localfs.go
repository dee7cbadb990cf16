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
	"strings"
)

// LocalFS is an FS over a directory of the local file system: slash paths
// such as "/in/a.txt" are resolved under Root. It exists so apps can be
// tested with the local runner without a cluster. BlockLocations reports
// BlockSize-sized blocks on host "localhost" so that split computation
// behaves as on the DFS.
type LocalFS struct {
	Root      string
	BlockSize int64 // default 32 MiB
}

var _ FS = (*LocalFS)(nil)

// NewLocalFS returns an FS rooted at dir (created if missing).
func NewLocalFS(dir string) (*LocalFS, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &LocalFS{Root: dir}, nil
}

func (l *LocalFS) real(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%s: path must be absolute", p)
	}
	return filepath.Join(l.Root, filepath.FromSlash(path.Clean(p))), nil
}

// pathErr rewrites an os error so the message names the FS path, not the
// local one.
func pathErr(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: p, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: op, Path: p, Err: le.Err}
	}
	return err
}

// Create creates a file, and its parent directories unless
// opts.NoCreateParent.
func (l *LocalFS) Create(ctx context.Context, p string, opts CreateOptions) (io.WriteCloser, error) {
	rp, err := l.real(p)
	if err != nil {
		return nil, err
	}
	if opts.NoCreateParent {
		if st, err := os.Stat(filepath.Dir(rp)); err != nil || !st.IsDir() {
			return nil, &fs.PathError{Op: "create", Path: p, Err: fs.ErrNotExist}
		}
	} else if err := os.MkdirAll(filepath.Dir(rp), 0o755); err != nil {
		return nil, pathErr("create", p, err)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !opts.Overwrite {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(rp, flag, 0o644)
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	return f, nil
}

type localFile struct {
	*os.File
	size int64
}

func (f localFile) Size() int64 { return f.size }

// Open opens a file for reading.
func (l *LocalFS) Open(ctx context.Context, p string) (File, error) {
	rp, err := l.real(p)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(rp)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, pathErr("open", p, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: is a directory", p)
	}
	return localFile{File: f, size: st.Size()}, nil
}

// Stat describes a file or directory.
func (l *LocalFS) Stat(ctx context.Context, p string) (FileInfo, error) {
	rp, err := l.real(p)
	if err != nil {
		return FileInfo{}, err
	}
	st, err := os.Stat(rp)
	if err != nil {
		return FileInfo{}, pathErr("stat", p, err)
	}
	return FileInfo{Path: path.Clean(p), Size: st.Size(), IsDir: st.IsDir()}, nil
}

// List returns a directory's entries sorted by name; a file lists itself.
func (l *LocalFS) List(ctx context.Context, p string) ([]FileInfo, error) {
	st, err := l.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir {
		return []FileInfo{st}, nil
	}
	rp, _ := l.real(p)
	ents, err := os.ReadDir(rp)
	if err != nil {
		return nil, pathErr("list", p, err)
	}
	out := make([]FileInfo, 0, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, FileInfo{Path: path.Join(path.Clean(p), e.Name()), Size: info.Size(), IsDir: e.IsDir()})
	}
	return out, nil
}

// MkdirAll creates a directory and its parents.
func (l *LocalFS) MkdirAll(ctx context.Context, p string) error {
	rp, err := l.real(p)
	if err != nil {
		return err
	}
	return pathErr("mkdir", p, os.MkdirAll(rp, 0o755))
}

// Mkdir creates one directory whose parent exists; an existing path is
// an fs.ErrExist error.
func (l *LocalFS) Mkdir(ctx context.Context, p string) error {
	rp, err := l.real(p)
	if err != nil {
		return err
	}
	return pathErr("mkdir", p, os.Mkdir(rp, 0o755))
}

// Delete removes a file or directory; a non-empty directory needs
// recursive. Deleting a missing path is an fs.ErrNotExist error.
func (l *LocalFS) Delete(ctx context.Context, p string, recursive bool) error {
	rp, err := l.real(p)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(rp); err != nil {
		return pathErr("delete", p, err)
	}
	if recursive {
		return pathErr("delete", p, os.RemoveAll(rp))
	}
	return pathErr("delete", p, os.Remove(rp))
}

// Rename moves src to dst; dst must not exist.
func (l *LocalFS) Rename(ctx context.Context, src, dst string) error {
	rs, err := l.real(src)
	if err != nil {
		return err
	}
	rd, err := l.real(dst)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(rd); err == nil {
		return &fs.PathError{Op: "rename", Path: dst, Err: fs.ErrExist}
	}
	if err := os.MkdirAll(filepath.Dir(rd), 0o755); err != nil {
		return pathErr("rename", dst, err)
	}
	return pathErr("rename", src, os.Rename(rs, rd))
}

// BlockLocations cuts the file into BlockSize blocks on "localhost".
func (l *LocalFS) BlockLocations(ctx context.Context, p string, offset, length int64) ([]BlockLocation, error) {
	st, err := l.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if st.IsDir {
		return nil, fmt.Errorf("block locations %s: is a directory", p)
	}
	bs := l.BlockSize
	if bs <= 0 {
		bs = 32 << 20
	}
	end := min(offset+length, st.Size)
	var out []BlockLocation
	for b := (offset / bs) * bs; b < end; b += bs {
		out = append(out, BlockLocation{Offset: b, Length: min(bs, st.Size-b),
			Hosts: []string{"localhost"}, Racks: []string{"/default-rack"}})
	}
	return out, nil
}
