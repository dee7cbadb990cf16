package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"path"
	"sort"
	"strings"
	"sync"
)

// ErrCrashed is returned by every operation of a MemFS after Crash.
var ErrCrashed = errors.New("memfs: file system crashed")

// MemFS is an in-memory FS that remembers what is durable: a file's bytes
// up to its last Sync, and the directory entries as of the last SyncDir.
// Crash returns the state a machine would find after losing power at that
// instant; writes after that fail. For crash tests (as Pebble's strict
// MemFS), not for production.
type MemFS struct {
	mu      sync.Mutex
	files   map[string]*memData // current names; guarded by mu
	durable map[string]*memData // names as of the last SyncDir; guarded by mu
	crashed bool                // guarded by mu
	// FailSync, when set, is returned by every File.Sync (an I/O error).
	FailSync error
}

type memData struct {
	data   []byte
	synced int
}

// NewMemFS returns an empty MemFS.
func NewMemFS() *MemFS {
	return &MemFS{files: map[string]*memData{}, durable: map[string]*memData{}}
}

var _ FS = (*MemFS)(nil)

type memFile struct {
	fs   *MemFS
	d    *memData
	rd   *bytes.Reader
	name string
}

func (f *memFile) Read(p []byte) (int, error) {
	if f.rd == nil {
		return 0, fmt.Errorf("memfs: %s not open for reading", f.name)
	}
	return f.rd.Read(p)
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.crashed {
		return 0, ErrCrashed
	}
	f.d.data = append(f.d.data, p...)
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.crashed {
		return ErrCrashed
	}
	if f.fs.FailSync != nil {
		return f.fs.FailSync
	}
	f.d.synced = len(f.d.data)
	return nil
}

func (f *memFile) Close() error { return nil }

func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return nil, ErrCrashed
	}
	d := &memData{}
	m.files[path.Clean(name)] = d
	return &memFile{fs: m, d: d, name: name}, nil
}

func (m *MemFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return nil, ErrCrashed
	}
	d, ok := m.files[path.Clean(name)]
	if !ok {
		return nil, fmt.Errorf("open %s: %w", name, errNotExist)
	}
	return &memFile{fs: m, d: d, rd: bytes.NewReader(bytes.Clone(d.data)), name: name}, nil
}

var errNotExist = errors.New("file does not exist")

func (m *MemFS) Rename(o, n string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return ErrCrashed
	}
	d, ok := m.files[path.Clean(o)]
	if !ok {
		return fmt.Errorf("rename %s: %w", o, errNotExist)
	}
	delete(m.files, path.Clean(o))
	m.files[path.Clean(n)] = d
	return nil
}

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return ErrCrashed
	}
	if _, ok := m.files[path.Clean(name)]; !ok {
		return fmt.Errorf("remove %s: %w", name, errNotExist)
	}
	delete(m.files, path.Clean(name))
	return nil
}

func (m *MemFS) Truncate(name string, size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return ErrCrashed
	}
	d, ok := m.files[path.Clean(name)]
	if !ok {
		return fmt.Errorf("truncate %s: %w", name, errNotExist)
	}
	if int(size) < len(d.data) {
		d.data = d.data[:size]
		// A truncate is durable once synced; the journal truncates only
		// what was never acknowledged, so treat it as immediate.
		d.synced = min(d.synced, int(size))
	}
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return nil, ErrCrashed
	}
	dir = path.Clean(dir) + "/"
	var names []string
	for n := range m.files {
		if strings.HasPrefix(n, dir) && !strings.Contains(n[len(dir):], "/") {
			names = append(names, n[len(dir):])
		}
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) MkdirAll(string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return ErrCrashed
	}
	return nil
}

func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crashed {
		return ErrCrashed
	}
	dir = path.Clean(dir) + "/"
	for n := range m.durable {
		if strings.HasPrefix(n, dir) {
			delete(m.durable, n)
		}
	}
	for n, d := range m.files {
		if strings.HasPrefix(n, dir) {
			m.durable[n] = d
		}
	}
	return nil
}

// Crash freezes m (every later operation fails with ErrCrashed) and returns
// what survives: durable names with their synced bytes, plus, if rng is not
// nil, a random part of the unsynced tail of each file, as a torn write
// would leave.
func (m *MemFS) Crash(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashed = true
	out := NewMemFS()
	for n, d := range m.durable {
		keep := d.synced
		if rng != nil && len(d.data) > d.synced {
			keep += rng.Intn(len(d.data) - d.synced + 1)
		}
		nd := &memData{data: bytes.Clone(d.data[:keep]), synced: keep}
		out.files[n] = nd
		out.durable[n] = nd
	}
	return out
}

// ReadFile returns a file's current content (for tests).
func (m *MemFS) ReadFile(name string) ([]byte, error) {
	f, err := m.Open(name)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}
