package store

import (
	"smarth/internal/units"

	"crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"smarth/internal/datanode/store/vfs"
	"smarth/internal/diskperm"
)

// State is a replica's state.
type State uint8

const (
	// Finalized: complete and immutable.
	Finalized State = iota + 1
	// RBW: being written, or left behind by a write that stopped; it waits
	// for the client to resume (pipeline recovery) or for lease recovery.
	RBW
	// RUR: under recovery by a primary datanode (lease recovery).
	RUR
	// Temporary: a re-replication copy in progress, invisible to reports.
	Temporary
)

func (s State) String() string {
	switch s {
	case Finalized:
		return "finalized"
	case RBW:
		return "rbw"
	case RUR:
		return "rur"
	case Temporary:
		return "temporary"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Errors, matched with errors.Is; the wrapping message says which replica.
var (
	ErrNotFound = errors.New("replica not found")
	ErrExists   = errors.New("replica already exists")
	ErrCorrupt  = errors.New("replica is corrupt")
	// ErrNoSpace: the volume's free space is at or below its reserve
	// (du_reserved), so it takes no new replica.
	ErrNoSpace = errors.New("out of space")
)

// Replica is a snapshot of one replica's state.
type Replica struct {
	BlockID          uint64
	GS               uint64
	Length           int64 // bytes in the block file covered by checksums
	Visible          int64 // bytes a reader may see: Length when finalized, acked bytes while written
	State            State
	BytesPerChecksum int
	Corrupt          bool
}

// Name is the HDFS-style block name used in messages, e.g. "blk_42_1001".
func (r Replica) Name() string { return BlockName(r.BlockID, r.GS) }

// BlockName formats a block id and generation stamp for messages.
func BlockName(id, gs uint64) string { return fmt.Sprintf("blk_%d_%d", id, gs) }

type replica struct {
	Replica
	vol        *volume // the data directory it lives in
	dir        string  // directory holding its two files
	writer     *Writer // non-nil while a writer has it open
	recoveryID uint64  // latest lease-recovery id seen
	original   State   // state before recovery started (RUR only)
}

func (r *replica) dataPath() string { return filepath.Join(r.dir, fmt.Sprintf("blk_%d", r.BlockID)) }
func (r *replica) metaPath() string {
	return filepath.Join(r.dir, fmt.Sprintf("blk_%d_%d.meta", r.BlockID, r.GS))
}

// Options tune a Store.
type Options struct {
	SyncOnClose bool // fsync block and meta files (and their directory) on finalize
	// Changed, if set, is called whenever a replica's bytes may no longer
	// be what a copy taken earlier holds: it is deleted or replaced, its
	// generation stamp or length changes, it goes back to being written or
	// under recovery, or it is marked corrupt. The datanode's memory cache
	// drops its copy. It is called with the store's lock held, so it must
	// be quick and must not call back into the store.
	Changed func(id uint64)
	// Remove deletes one file; default os.Remove. Tests inject failures.
	Remove func(path string) error
	// Reserve is the space kept free on each data directory's file system
	// (du_reserved): it is not reported as remaining, and no new replica
	// is created in a directory whose free space is at or below it.
	Reserve units.Reserve
	// VolumeChoice is the volume-choosing policy for new replicas:
	// RoundRobin (default) or AvailableSpace.
	VolumeChoice string
	// FS is the file system the store's files are on; default vfs.OS.
	// Tests wrap it (vfs/errorfs) to inject disk faults.
	FS vfs.FS
}

// Store is a datanode's replicas in one or more data directories
// (volumes, volumes.go).
type Store struct {
	dir  string // the first data directory
	id   string
	opts Options
	fs   vfs.FS // opts.FS or vfs.OS

	mu       sync.Mutex
	replicas map[uint64]*replica  // guarded by mu, as are the replicas' fields
	copying  map[uint64]bool      // new block ids of copy-on-truncate copies in progress (copy.go)
	creating map[*Writer]struct{} // guarded by mu: new replicas' writers with a need (promisedLocked)
	vols     []*volume            // guarded by mu: volumes in service
	failed   []FailedVolume       // guarded by mu: volumes taken out of service
	next     int                  // guarded by mu: round-robin position among vols
}

type versionFile struct {
	LayoutVersion int    `json:"layout_version"`
	DatanodeID    string `json:"datanode_id"`
}

// Open opens (creating if needed) the data directory dir, reads or makes its
// datanode id, and loads every replica found: finalized ones as they are,
// RBW ones truncated to their last checksummed chunk; temporary ones are
// discarded.
func Open(dir string, opts Options) (*Store, error) {
	return OpenVolumes([]string{dir}, opts)
}

// openVolume prepares one data directory's subdirectories.
func openVolume(fs vfs.FS, dir string) (*volume, error) {
	v := &volume{
		dir:       dir,
		finalized: filepath.Join(dir, "current", "finalized"),
		rbw:       filepath.Join(dir, "rbw"),
		tmp:       filepath.Join(dir, "tmp"),
	}
	if err := fs.RemoveAll(v.tmp); err != nil {
		return nil, err
	}
	for _, d := range []string{v.finalized, v.rbw, v.tmp} {
		if err := fs.MkdirAll(d, diskperm.Dir); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// ID is the datanode's stable id, kept in VERSION.
func (s *Store) ID() string { return s.id }

// Dir is the data directory.
func (s *Store) Dir() string { return s.dir }

// scan loads the replicas of one of v's directories.
func (s *Store) scan(v *volume, dir string, state State) error {
	entries, err := s.fs.ReadDir(dir)
	if err != nil {
		return err
	}
	blocks := map[uint64]bool{}
	metas := map[uint64][]uint64{} // id → generation stamps of meta files
	for _, e := range entries {
		if id, gs, ok := parseMetaName(e.Name()); ok {
			metas[id] = append(metas[id], gs)
		} else if id, ok := parseBlockName(e.Name()); ok {
			blocks[id] = true
		}
	}
	// A finalize renames the meta file first: a crash between the two
	// renames leaves the block file in rbw/. Complete the move.
	if state == Finalized {
		for id := range metas {
			if !blocks[id] {
				src := filepath.Join(v.rbw, fmt.Sprintf("blk_%d", id))
				if s.fs.Rename(src, filepath.Join(dir, fmt.Sprintf("blk_%d", id))) == nil {
					blocks[id] = true
				}
			}
		}
	}
	for id, gss := range metas {
		slices.Sort(gss)
		for _, old := range gss[:len(gss)-1] {
			_ = s.fs.Remove(filepath.Join(dir, fmt.Sprintf("blk_%d_%d.meta", id, old)))
		}
		if !blocks[id] {
			_ = s.fs.Remove(filepath.Join(dir, fmt.Sprintf("blk_%d_%d.meta", id, gss[len(gss)-1])))
			continue
		}
		if _, dup := s.replicas[id]; dup {
			// Finalized wins over a leftover RBW copy of the same block.
			_ = s.fs.Remove(filepath.Join(dir, fmt.Sprintf("blk_%d", id)))
			_ = s.fs.Remove(filepath.Join(dir, fmt.Sprintf("blk_%d_%d.meta", id, gss[len(gss)-1])))
			continue
		}
		r := &replica{Replica: Replica{BlockID: id, GS: gss[len(gss)-1], State: state}, vol: v, dir: dir}
		if err := s.load(r); err != nil {
			return err
		}
		s.replicas[id] = r
	}
	for id := range blocks {
		if _, ok := metas[id]; !ok {
			_ = s.fs.Remove(filepath.Join(dir, fmt.Sprintf("blk_%d", id)))
		}
	}
	return nil
}

// load fills in a scanned replica's length and checksum size.
func (s *Store) load(r *replica) error {
	meta, err := s.fs.Open(r.metaPath())
	if err != nil {
		return err
	}
	defer meta.Close()
	bpc, err := readMetaHeader(meta)
	if err != nil {
		r.BytesPerChecksum, r.Corrupt = 512, true
		return nil
	}
	r.BytesPerChecksum = bpc
	mi, err := meta.Stat()
	if err != nil {
		return err
	}
	di, err := s.fs.Stat(r.dataPath())
	if err != nil {
		return err
	}
	size := di.Size()
	chunks := (mi.Size() - MetaHeaderLen) / checksumSize
	if r.State == Finalized {
		r.Length, r.Visible = size, size
		if chunks != chunkCount(size, bpc) {
			r.Corrupt = true
		}
		return nil
	}
	// An RBW replica keeps only the prefix its checksums cover, and drops a
	// last chunk whose checksum does not match (a write torn by a crash).
	n := min(size, chunks*int64(bpc))
	if n > 0 {
		last := (n - 1) / int64(bpc) * int64(bpc)
		n = last + validPrefix(s.fs, r.dataPath(), meta, last, n, bpc)
	}
	if err := truncateReplica(s.fs, r.dataPath(), r.metaPath(), n, bpc); err != nil {
		return err
	}
	r.Length, r.Visible = n, n
	return nil
}

// validPrefix returns the longest prefix of the chunk [from, to) of a block
// file that matches the chunk's stored checksum (0 if none): a crash can
// leave more data than the checksum covers, or a torn chunk.
func validPrefix(fs vfs.FS, dataPath string, meta vfs.File, from, to int64, bpc int) int64 {
	f, err := fs.Open(dataPath)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, to-from)
	if _, err := f.ReadAt(buf, from); err != nil {
		return 0
	}
	var sum [checksumSize]byte
	if _, err := meta.ReadAt(sum[:], MetaHeaderLen+from/int64(bpc)*checksumSize); err != nil {
		return 0
	}
	want := beUint32(sum[:])
	var crc uint32
	best := int64(0)
	for i := range buf {
		crc = crc32.Update(crc, castagnoli, buf[i:i+1])
		if crc == want {
			best = int64(i + 1)
		}
	}
	return best
}

func parseBlockName(name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, "blk_")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	return id, err == nil
}

func parseMetaName(name string) (id, gs uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, "blk_")
	if !ok {
		return 0, 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".meta")
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(rest, "_")
	if !ok {
		return 0, 0, false
	}
	id, err1 := strconv.ParseUint(a, 10, 64)
	gs, err2 := strconv.ParseUint(b, 10, 64)
	return id, gs, err1 == nil && err2 == nil
}

// Get returns a snapshot of a replica.
func (s *Store) Get(id uint64) (Replica, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.replicas[id]
	if !ok {
		return Replica{}, false
	}
	return r.Replica, true
}

// Replicas returns snapshots of every replica except temporary ones, in
// block id order.
func (s *Store) Replicas() []Replica {
	s.mu.Lock()
	out := make([]Replica, 0, len(s.replicas))
	for _, r := range s.replicas {
		if r.State != Temporary {
			out = append(out, r.Replica)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Replica) int {
		switch {
		case a.BlockID < b.BlockID:
			return -1
		case a.BlockID > b.BlockID:
			return 1
		}
		return 0
	})
	return out
}

// MarkCorrupt records that a replica failed verification: it is never
// served again. It reports whether the replica (with that gs) was known.
func (s *Store) MarkCorrupt(id, gs uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.replicas[id]
	if !ok || (gs != 0 && r.GS != gs) {
		return false
	}
	r.Corrupt = true
	s.changedLocked(r)
	return true
}

// Delete removes a replica (the namenode's invalidate). gs 0 matches any
// generation stamp; otherwise it must match. A writer on the replica is
// stopped first.
func (s *Store) Delete(id, gs uint64) (Replica, error) {
	r, err := s.lockIdle(id)
	if err != nil {
		return Replica{}, err
	}
	defer s.mu.Unlock()
	if gs != 0 && r.GS != gs {
		return Replica{}, fmt.Errorf("%w: %s, replica has generation stamp %d", ErrNotFound, BlockName(id, gs), r.GS)
	}
	snap := r.Replica
	if err := s.removeLocked(r); err != nil {
		return Replica{}, err
	}
	return snap, nil
}

// removeLocked deletes r's files and forgets r. If a file cannot be
// removed, r stays known and is marked corrupt: forgotten, its files would
// come back as a live replica at the next start; known and corrupt, it is
// never served, it is reported to the namenode, and a later delete tries
// again.
func (s *Store) removeLocked(r *replica) error {
	s.changedLocked(r)
	if err := errors.Join(s.removeFile(r.dataPath()), s.removeFile(r.metaPath())); err != nil {
		r.Corrupt = true
		return fmt.Errorf("removing %s: %w", r.Name(), err)
	}
	if s.replicas[r.BlockID] == r {
		delete(s.replicas, r.BlockID)
	}
	return nil
}

// removeFile removes one file; one already gone is not an error.
func (s *Store) removeFile(path string) error {
	if err := s.opts.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// changedLocked tells Options.Changed that r is no longer what it was.
func (s *Store) changedLocked(r *replica) {
	if s.opts.Changed != nil {
		s.opts.Changed(r.BlockID)
	}
}

// lockIdle returns replica id with s.mu held and no writer attached,
// stopping a writer if one is attached. On error s.mu is not held.
func (s *Store) lockIdle(id uint64) (*replica, error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		r, ok := s.replicas[id]
		if !ok {
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: blk_%d", ErrNotFound, id)
		}
		w := r.writer
		if w == nil {
			return r, nil
		}
		stop := w.stop
		s.mu.Unlock()
		if attempt > 0 || stop == nil {
			// The writer's owner did not let go: close it ourselves.
			w.abandon()
		} else {
			stop()
		}
		select {
		case <-w.done:
		case <-time.After(10 * time.Second):
			w.abandon()
		}
	}
}
