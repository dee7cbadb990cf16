package journal

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"smarth/internal/diskperm"
)

// File is an open file of an FS.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Sync makes the file's data durable (fdatasync).
	Sync() error
}

// FS is the little of a file system the journal needs.
type FS interface {
	// Create creates or truncates name for writing.
	Create(name string) (File, error)
	// Open opens name for reading.
	Open(name string) (File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	// Truncate cuts name to size durably: the cut survives a crash. The
	// journal cuts a torn tail and then opens a new segment after it; were
	// the cut lost, the torn record would come back in the middle of the
	// log and the next start would refuse it.
	Truncate(name string, size int64) error
	// List returns the names (not paths) in dir.
	List(dir string) ([]string, error)
	MkdirAll(dir string) error
	// SyncDir makes creations, renames and removals in dir durable.
	SyncDir(dir string) error
}

// OS is the real file system. New segments are written with direct,
// synchronous I/O (O_DIRECT|O_DSYNC) where the file system allows it,
// else, or with Buffered, through the page cache and fdatasync'd at each
// group commit as HDFS's EditLogFileOutputStream does.
type OS struct {
	Buffered bool
}

// DirectSegments reports whether segments should be tried with direct I/O.
func (o OS) DirectSegments() bool { return !o.Buffered }

// errNoDirect: the file system refuses direct I/O.
var errNoDirect = errors.New("direct I/O not supported")

var _ FS = OS{}

type osFile struct{ *os.File }

func (f osFile) Sync() error { return fdatasync(f.File) }

var zeros = make([]byte, PreallocChunk)

// Preallocate writes zeros over [off, off+n) without moving the write
// offset; they become durable with the next Sync.
func (f osFile) Preallocate(off, n int64) error { return writeZeros(f.File, zeros, off, n) }

// writeZeros writes [off, off+n) of f from zeros, a chunk at a time.
func writeZeros(f *os.File, zeros []byte, off, n int64) error {
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := f.WriteAt(zeros[:k], off); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	return nil
}

func (OS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, diskperm.File)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OS) Rename(o, n string) error { return os.Rename(o, n) }
func (OS) Remove(name string) error { return os.Remove(name) }
func (OS) Truncate(name string, size int64) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (OS) MkdirAll(dir string) error { return os.MkdirAll(dir, diskperm.Dir) }

func (OS) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (OS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
