// Package errorfs wraps a vfs.FS and injects disk faults by rule, as
// Pebble's errorfs does: an operation kind and a path predicate pick the
// calls a rule applies to, and the rule fails them (EIO, ENOSPC, ...) or
// silently flips a byte of what a read returns. Rules are added and
// removed while the file system is in use, so a test can make a disk fail
// part way through a run and heal it again.
package errorfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"smarth/internal/datanode/store/vfs"
)

// Op is a kind of file-system operation.
type Op uint32

// The operations a rule can match; combine them with |.
const (
	OpOpenRead  Op = 1 << iota // Open, or OpenFile without write flags
	OpOpenWrite                // OpenFile for writing, without O_CREATE
	OpCreate                   // OpenFile with O_CREATE, CreateTemp
	OpRead                     // File.Read and ReadAt
	OpWrite                    // File.Write and WriteAt
	OpSync                     // File.Sync
	OpStat                     // Stat, File.Stat
	OpReadDir                  // ReadDir
	OpRename                   // Rename (matched on either path)
	OpRemove                   // Remove, RemoveAll
	OpMkdir                    // MkdirAll
	OpTruncate                 // Truncate
	OpStatfs                   // Statfs

	// OpAll is every operation: a disk that is gone.
	OpAll Op = 1<<iota - 1
)

var opNames = []string{"open-read", "open-write", "create", "read", "write", "sync", "stat", "readdir", "rename", "remove", "mkdir", "truncate", "statfs"}

func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Rule is one fault. Ops and Path choose the calls; Err is returned by
// them, or, with Flip set, reads succeed with one byte changed.
type Rule struct {
	Ops Op
	// Path matches the file's path (see Glob, Under); nil matches every path.
	Path func(path string) bool
	// Err is the error the calls fail with (wrapped in an *os.PathError as
	// the os package's are), e.g. syscall.EIO or syscall.ENOSPC.
	Err error
	// From, for reads and writes, is the file offset where the fault
	// starts: bytes before it are read or written, and the call returns
	// how many with Err (a bad sector, a disk filling up). Reads and
	// writes wholly before it are not faulted. 0: every call.
	From int64
	// Flip, if true, makes the rule silent: a read covering offset From
	// succeeds, with the byte at From XORed with 0x10 (a bit flip the disk
	// did not notice). Err is ignored.
	Flip bool
	// Full, for Statfs, makes the call succeed and report no space
	// available, as on a disk that filled up (pair it with ENOSPC on
	// writes). Err is ignored.
	Full bool
}

// Glob matches paths with filepath.Match: against the whole path if the
// pattern has a separator, else against the base name ("blk_*").
func Glob(pattern string) func(string) bool {
	if _, err := filepath.Match(pattern, ""); err != nil {
		panic(fmt.Sprintf("errorfs: bad pattern %q: %v", pattern, err))
	}
	whole := strings.ContainsRune(pattern, filepath.Separator)
	return func(path string) bool {
		if !whole {
			path = filepath.Base(path)
		}
		ok, _ := filepath.Match(pattern, path)
		return ok
	}
}

// Under matches dir and every path below it.
func Under(dir string) func(string) bool {
	dir = filepath.Clean(dir)
	return func(path string) bool {
		path = filepath.Clean(path)
		return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
	}
}

// Injected is a rule in force: Hits counts the calls it faulted, Remove
// takes it out.
type Injected struct {
	Rule
	fs   *FS
	hits atomic.Int64
}

// Hits is how many calls the rule has faulted so far.
func (in *Injected) Hits() int64 { return in.hits.Load() }

// Remove takes the rule out; calls from then on are not faulted by it.
func (in *Injected) Remove() {
	in.fs.mu.Lock()
	defer in.fs.mu.Unlock()
	for i, r := range in.fs.rules {
		if r == in {
			in.fs.rules = append(in.fs.rules[:i:i], in.fs.rules[i+1:]...)
			return
		}
	}
}

// FS is a vfs.FS that faults the calls its rules match and passes the
// rest to the file system it wraps.
type FS struct {
	inner vfs.FS
	mu    sync.Mutex
	rules []*Injected // guarded by mu
}

// Wrap returns inner with no rules yet.
func Wrap(inner vfs.FS) *FS { return &FS{inner: inner} }

// Add puts a rule in force.
func (fs *FS) Add(r Rule) *Injected {
	if r.Err == nil && !r.Flip && !r.Full {
		panic("errorfs: a rule needs Err, Flip or Full")
	}
	in := &Injected{Rule: r, fs: fs}
	fs.mu.Lock()
	fs.rules = append(fs.rules, in)
	fs.mu.Unlock()
	return in
}

// match returns the first rule for op on any of paths, nil if none.
func (fs *FS) match(op Op, paths ...string) *Injected {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, r := range fs.rules {
		if r.Ops&op == 0 || (r.Flip && op != OpRead) || (r.Full && op != OpStatfs) {
			continue // a flip only changes what a read returns, Full what statfs does
		}
		for _, p := range paths {
			if r.Path == nil || r.Path(p) {
				return r
			}
		}
	}
	return nil
}

// fail returns the error of a non-I/O call op on path, nil if no rule
// faults it.
func (fs *FS) fail(op Op, path string) error {
	if r := fs.match(op, path); r != nil {
		r.hits.Add(1)
		return &os.PathError{Op: op.String(), Path: path, Err: r.Err}
	}
	return nil
}

func openOp(flag int) Op {
	switch {
	case flag&os.O_CREATE != 0:
		return OpCreate
	case flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_TRUNC) != 0:
		return OpOpenWrite
	}
	return OpOpenRead
}

func (fs *FS) Open(name string) (vfs.File, error) { return fs.OpenFile(name, os.O_RDONLY, 0) }

func (fs *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if err := fs.fail(openOp(flag), name); err != nil {
		return nil, err
	}
	f, err := fs.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs}, nil
}

func (fs *FS) CreateTemp(dir, pattern string) (vfs.File, error) {
	if err := fs.fail(OpCreate, filepath.Join(dir, pattern)); err != nil {
		return nil, err
	}
	f, err := fs.inner.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &file{File: f, fs: fs}, nil
}

func (fs *FS) Stat(name string) (os.FileInfo, error) {
	if err := fs.fail(OpStat, name); err != nil {
		return nil, err
	}
	return fs.inner.Stat(name)
}

func (fs *FS) ReadDir(name string) ([]os.DirEntry, error) {
	if err := fs.fail(OpReadDir, name); err != nil {
		return nil, err
	}
	return fs.inner.ReadDir(name)
}

func (fs *FS) Rename(oldpath, newpath string) error {
	if r := fs.match(OpRename, oldpath, newpath); r != nil {
		r.hits.Add(1)
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: r.Err}
	}
	return fs.inner.Rename(oldpath, newpath)
}

func (fs *FS) Remove(name string) error {
	if err := fs.fail(OpRemove, name); err != nil {
		return err
	}
	return fs.inner.Remove(name)
}

func (fs *FS) RemoveAll(path string) error {
	if err := fs.fail(OpRemove, path); err != nil {
		return err
	}
	return fs.inner.RemoveAll(path)
}

func (fs *FS) MkdirAll(path string, perm os.FileMode) error {
	if err := fs.fail(OpMkdir, path); err != nil {
		return err
	}
	return fs.inner.MkdirAll(path, perm)
}

func (fs *FS) Truncate(name string, size int64) error {
	if err := fs.fail(OpTruncate, name); err != nil {
		return err
	}
	return fs.inner.Truncate(name, size)
}

func (fs *FS) Statfs(path string) (capacity, avail int64, err error) {
	r := fs.match(OpStatfs, path)
	if r == nil {
		return fs.inner.Statfs(path)
	}
	r.hits.Add(1)
	if !r.Full {
		return 0, 0, &os.PathError{Op: OpStatfs.String(), Path: path, Err: r.Err}
	}
	capacity, _, err = fs.inner.Statfs(path)
	return capacity, 0, err
}

// file faults the I/O calls of one open file. Rules are looked up on each
// call, so one added after the open applies to files already open.
type file struct {
	vfs.File
	fs *FS
}

// Fd is the wrapped file's descriptor (0 if it has none), for fadvise.
func (f *file) Fd() uintptr {
	if fd, ok := f.File.(vfs.Fder); ok {
		return fd.Fd()
	}
	return 0
}

// io runs an n-byte read or write at off: do is called with how many
// bytes to pass through (all of them unless a fault starts inside the
// range) and the call's result is then faulted or flipped.
func (f *file) io(op Op, p []byte, off int64, do func([]byte) (int, error)) (int, error) {
	r := f.fs.match(op, f.Name())
	if r == nil || off+int64(len(p)) <= r.From {
		return do(p)
	}
	if r.Flip {
		n, err := do(p)
		if k := r.From - off; k >= 0 && k < int64(n) {
			p[k] ^= 0x10
			r.hits.Add(1)
		}
		return n, err
	}
	r.hits.Add(1)
	n := 0
	if k := r.From - off; k > 0 {
		m, err := do(p[:k])
		if err != nil || int64(m) < k {
			return m, err
		}
		n = m
	}
	name := "read"
	if op == OpWrite {
		name = "write"
	}
	return n, &os.PathError{Op: name, Path: f.Name(), Err: r.Err}
}

func (f *file) pos() int64 {
	off, err := f.File.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0
	}
	return off
}

func (f *file) Read(p []byte) (int, error) {
	return f.io(OpRead, p, f.pos(), f.File.Read)
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	return f.io(OpRead, p, off, func(b []byte) (int, error) { return f.File.ReadAt(b, off) })
}

func (f *file) Write(p []byte) (int, error) {
	return f.io(OpWrite, p, f.pos(), f.File.Write)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	return f.io(OpWrite, p, off, func(b []byte) (int, error) { return f.File.WriteAt(b, off) })
}

func (f *file) Sync() error {
	if err := f.fs.fail(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *file) Stat() (os.FileInfo, error) {
	if err := f.fs.fail(OpStat, f.Name()); err != nil {
		return nil, err
	}
	return f.File.Stat()
}
