package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"

	"smarth/internal/datanode/store/vfs"
	"smarth/internal/diskperm"
)

// Writer appends to one replica. It is used by one goroutine at a time; the
// store may abandon it from another (to stop a stale write before recovery
// or deletion), after which every call fails.
type Writer struct {
	s       *Store
	r       *replica
	data    vfs.File
	meta    vfs.File
	bpc     int
	length  int64  // bytes written; only the owning goroutine changes it
	lastCRC uint32 // CRC of the partial last chunk when length%bpc != 0
	sums    []byte // scratch for checksums of a misaligned append

	need      int64  // bytes the replica may still take when created (see Store.create)
	stop      func() // guarded by s.mu: asks the owner to let go (set by SetStopper)
	done      chan struct{}
	closeOnce sync.Once
}

// CreateRBW creates a new replica being written, or a temporary one for
// re-replication (a transfer, see CreateTransferRBW). A stale unfinished
// replica of the same block with a lower or equal generation stamp and no
// writer is replaced; a finalized one or one being written is not
// (ErrExists), except by a transfer. expected is how long the replica may
// grow (0: unknown): see create.
func (s *Store) CreateRBW(id, gs uint64, bpc int, temporary bool, expected int64) (*Writer, error) {
	return s.create(id, gs, bpc, temporary, temporary, expected)
}

// CreateTransferRBW creates the replica being written of a datanode added
// to a pipeline (TRANSFER_RBW). Like every transfer, and as in HDFS, it
// replaces a finalized replica of the block with an older generation stamp:
// that replica is stale, its pipeline was recovered without this node (say
// a node upstream died just as this one finalized), and refusing would make
// the namenode's copies to this node fail for good.
func (s *Store) CreateTransferRBW(id, gs uint64, bpc int, expected int64) (*Writer, error) {
	return s.create(id, gs, bpc, false, true, expected)
}

// create makes the replica on a volume with room for expected bytes and
// their checksums above du_reserved and above what the replicas already
// being written there may still take (HDFS reserves a block per RBW
// replica the same way): replicas started together cannot each count on
// the same free space, and a write that the namenode placed on a stale
// view of this node's space is refused at setup, before it eats into the
// reserve, so the client moves on to another datanode.
func (s *Store) create(id, gs uint64, bpc int, temporary, transfer bool, expected int64) (*Writer, error) {
	need := int64(0)
	if expected > 0 {
		need = allocated(expected) + allocated(metaLen(expected, bpc))
	}
	free := s.statVolumes()
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.chooseVolumeLocked(BlockName(id, gs), free, need)
	if err != nil {
		return nil, err
	}
	if old, ok := s.replicas[id]; ok {
		switch {
		case old.State == Finalized && !(transfer && old.GS < gs && old.writer == nil):
			return nil, fmt.Errorf("%w: %s is finalized on this node", ErrExists, old.Name())
		case old.writer != nil:
			return nil, fmt.Errorf("%w: %s is being written on this node", ErrExists, old.Name())
		case old.GS > gs:
			return nil, fmt.Errorf("%w: %s has a newer generation stamp than %d", ErrExists, old.Name(), gs)
		}
		if err := s.removeLocked(old); err != nil {
			return nil, fmt.Errorf("replacing %s: %w", old.Name(), err)
		}
	}
	if !s.inServiceLocked(v) {
		return nil, fmt.Errorf("cannot create %s: data directory %s was taken out of service", BlockName(id, gs), v.dir)
	}
	state, dir := RBW, v.rbw
	if temporary {
		state, dir = Temporary, v.tmp
	}
	r := &replica{Replica: Replica{BlockID: id, GS: gs, State: state, BytesPerChecksum: bpc}, vol: v, dir: dir}
	data, err := s.fs.OpenFile(r.dataPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, diskperm.File)
	if err != nil {
		return nil, err
	}
	meta, err := s.fs.OpenFile(r.metaPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, diskperm.File)
	if err == nil {
		_, err = meta.Write(encodeMetaHeader(bpc))
	}
	if err != nil {
		data.Close()
		if meta != nil {
			meta.Close()
		}
		// Leftover files would be scanned as a replica at the next start.
		return nil, errors.Join(err, s.removeFile(r.dataPath()), s.removeFile(r.metaPath()))
	}
	w := &Writer{s: s, r: r, data: data, meta: meta, bpc: bpc, need: need, done: make(chan struct{})}
	r.writer = w
	s.replicas[id] = r
	if need > 0 {
		s.creating[w] = struct{}{}
	}
	return w, nil
}

// RecoverRBW reopens an RBW replica for pipeline recovery: a writer still
// attached is stopped, the replica is truncated to length (the bytes the
// client saw acknowledged) and moved to generation stamp newGS.
func (s *Store) RecoverRBW(id, newGS uint64, length int64, bpc int) (*Writer, error) {
	r, err := s.lockIdle(id)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if r.State == Finalized && r.Length >= length && r.GS <= newGS {
		// The pipeline failed after this node stored the last packet but
		// before the client saw the whole pipeline acknowledge it: take
		// the replica back to RBW; the resent packets finalize it again.
		// In a multi-pipeline write this is the usual case for the first
		// node: it stored the whole block (and sent FNFA) while a node
		// downstream, still receiving, failed.
		s.changedLocked(r)
		if err := s.moveLocked(r, r.vol.rbw); err != nil {
			return nil, err
		}
		r.State = RBW
	}
	switch {
	case r.State == Finalized:
		// The node holds the whole block: the client counts it as done
		// (ERROR_EXISTS) rather than as a failed node.
		return nil, fmt.Errorf("%w: %s is finalized, not being written", ErrExists, r.Name())
	case r.State != RBW:
		return nil, fmt.Errorf("%w: %s is %s, not being written", ErrNotFound, r.Name(), r.State)
	case r.GS > newGS:
		return nil, fmt.Errorf("%s has a newer generation stamp than %d", r.Name(), newGS)
	case r.Length < length:
		return nil, fmt.Errorf("%s has %d bytes, fewer than the %d acknowledged", r.Name(), r.Length, length)
	case bpc != r.BytesPerChecksum:
		return nil, fmt.Errorf("%s uses %d-byte checksum chunks, not %d", r.Name(), r.BytesPerChecksum, bpc)
	}
	if err := s.retruncateLocked(r, length, newGS); err != nil {
		return nil, err
	}
	return s.resumeLocked(r, length, bpc)
}

// resumeLocked attaches a writer that continues r (RBW, length bytes) at
// its end; a partial last chunk's checksum is read back so that the bytes
// appended to that chunk extend it (see Write).
func (s *Store) resumeLocked(r *replica, length int64, bpc int) (*Writer, error) {
	data, err := s.fs.OpenFile(r.dataPath(), os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	meta, err := s.fs.OpenFile(r.metaPath(), os.O_WRONLY, 0)
	if err != nil {
		data.Close()
		return nil, err
	}
	w := &Writer{s: s, r: r, data: data, meta: meta, bpc: bpc, length: length, done: make(chan struct{})}
	if partial := length % int64(bpc); partial != 0 {
		w.lastCRC, err = readChecksum(s.fs, r.metaPath(), (length-1)/int64(bpc))
		if err != nil {
			data.Close()
			meta.Close()
			return nil, err
		}
	}
	r.writer = w
	return w, nil
}

// retruncateLocked truncates r to length and renames its meta file to gs.
func (s *Store) retruncateLocked(r *replica, length int64, gs uint64) error {
	s.changedLocked(r)
	if err := truncateReplica(s.fs, r.dataPath(), r.metaPath(), length, r.BytesPerChecksum); err != nil {
		return err
	}
	if gs != r.GS {
		newMeta := filepath.Join(r.dir, fmt.Sprintf("blk_%d_%d.meta", r.BlockID, gs))
		if err := s.fs.Rename(r.metaPath(), newMeta); err != nil {
			return err
		}
		r.GS = gs
	}
	r.Length, r.Visible = length, length
	return nil
}

func readChecksum(fs vfs.FS, metaPath string, chunk int64) (uint32, error) {
	f, err := fs.Open(metaPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [checksumSize]byte
	if _, err := f.ReadAt(b[:], MetaHeaderLen+chunk*checksumSize); err != nil {
		return 0, fmt.Errorf("reading checksum %d of %s: %w", chunk, metaPath, err)
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

// Replica returns a snapshot of the replica being written.
func (w *Writer) Replica() Replica {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.r.Replica
}

// Length is the number of bytes written so far.
func (w *Writer) Length() int64 { return w.length }

// SetStopper registers how the store asks the writer's owner to stop (for
// instance by closing its connections), before recovery or deletion takes
// the replica over. The owner must then Close or Abort the writer.
func (w *Writer) SetStopper(stop func()) {
	w.s.mu.Lock()
	w.stop = stop
	w.s.mu.Unlock()
}

// Done is closed when the writer has been closed, finalized or abandoned.
func (w *Writer) Done() <-chan struct{} { return w.done }

// Write appends data at offset, which must be the current length. sums are
// the data's CRC32C checksums chunked from offset with the replica's chunk
// size, already verified by the caller; when offset falls inside a chunk
// (a replica resumed at an unaligned length) the on-disk checksums are
// recomputed instead.
func (w *Writer) Write(offset int64, data, sums []byte) error {
	if offset != w.length {
		return fmt.Errorf("write at offset %d of %s, which has %d bytes", offset, w.name(), w.length)
	}
	if len(data) == 0 {
		return nil
	}
	bpc := int64(w.bpc)
	firstChunk := offset / bpc
	if offset%bpc != 0 {
		sums = w.realign(offset, data)
	}
	if _, err := w.data.WriteAt(data, offset); err != nil {
		return err
	}
	if _, err := w.meta.WriteAt(sums, MetaHeaderLen+firstChunk*checksumSize); err != nil {
		return err
	}
	w.length += int64(len(data))
	if w.length%bpc != 0 {
		w.lastCRC = binary.BigEndian.Uint32(sums[len(sums)-checksumSize:])
	}
	w.s.mu.Lock()
	w.r.Length = w.length
	w.s.mu.Unlock()
	return nil
}

// WriteBatch is Write of consecutive packets at offset in one system
// call per file (writevAt): data[i] and sums[i] are one packet's data and
// its checksums. offset must be chunk-aligned and every data[i] but the
// last a whole number of chunks, so that the checksums are contiguous in
// the meta file; a batch of one is Write.
func (w *Writer) WriteBatch(offset int64, data, sums [][]byte) error {
	if len(data) == 1 {
		return w.Write(offset, data[0], sums[0])
	}
	bpc := int64(w.bpc)
	if offset != w.length {
		return fmt.Errorf("write at offset %d of %s, which has %d bytes", offset, w.name(), w.length)
	}
	if offset%bpc != 0 {
		return fmt.Errorf("batched write of %s at offset %d, inside a %d-byte chunk", w.name(), offset, bpc)
	}
	var n int64
	for i, d := range data {
		if i < len(data)-1 && int64(len(d))%bpc != 0 {
			return fmt.Errorf("batched write of %s: packet %d of %d bytes ends inside a chunk", w.name(), i, len(d))
		}
		if len(sums[i]) != (len(d)+w.bpc-1)/w.bpc*checksumSize {
			return fmt.Errorf("batched write of %s: packet %d has %d bytes of checksums for %d bytes", w.name(), i, len(sums[i]), len(d))
		}
		n += int64(len(d))
	}
	if n == 0 {
		return nil
	}
	if err := writevAt(w.data, data, offset); err != nil {
		return err
	}
	if err := writevAt(w.meta, sums, MetaHeaderLen+offset/bpc*checksumSize); err != nil {
		return err
	}
	w.length += n
	if w.length%bpc != 0 {
		last := sums[len(sums)-1]
		w.lastCRC = binary.BigEndian.Uint32(last[len(last)-checksumSize:])
	}
	w.s.mu.Lock()
	w.r.Length = w.length
	w.s.mu.Unlock()
	return nil
}

// writeEachAt writes bufs one after another at off, one WriteAt each.
func writeEachAt(f vfs.File, bufs [][]byte, off int64) error {
	for _, b := range bufs {
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// skipWritten drops the first n bytes of bufs (a short pwritev).
func skipWritten(bufs [][]byte, n int) [][]byte {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}

// realign computes on-disk checksums for data appended at an offset inside
// a chunk: the partial chunk's CRC is extended with crc32.Update, so the
// bytes already on disk need not be read back.
func (w *Writer) realign(offset int64, data []byte) []byte {
	bpc := int(w.bpc)
	head := min(bpc-int(offset%int64(bpc)), len(data))
	n := 1 + (len(data)-head+bpc-1)/bpc
	w.sums = append(w.sums[:0], make([]byte, n*checksumSize)...)
	binary.BigEndian.PutUint32(w.sums, crc32.Update(w.lastCRC, castagnoli, data[:head]))
	rest := data[head:]
	for i := 1; len(rest) > 0; i++ {
		k := min(bpc, len(rest))
		binary.BigEndian.PutUint32(w.sums[i*checksumSize:], crc32.Checksum(rest[:k], castagnoli))
		rest = rest[k:]
	}
	return w.sums
}

// Sync flushes the replica's block and meta files to disk (a packet with
// the sync flag: the client's hsync).
func (w *Writer) Sync() error {
	if err := w.data.Sync(); err != nil {
		return err
	}
	return w.meta.Sync()
}

// SetVisible makes the first n bytes readable (the datanode calls it as
// acks go upstream, so readers of a replica being written see only
// acknowledged bytes).
func (w *Writer) SetVisible(n int64) {
	w.s.mu.Lock()
	if n > w.r.Visible && w.r.writer == w {
		w.r.Visible = n
	}
	w.s.mu.Unlock()
}

func (w *Writer) name() string { return BlockName(w.r.BlockID, w.r.GS) }

// Finalize closes the replica and makes it finalized: its files move to
// current/finalized/ by rename (meta first; a scan completes a move torn by
// a crash). With Options.SyncOnClose the files are fsynced first.
func (w *Writer) Finalize() (Replica, error) {
	err := w.closeFiles(w.s.opts.SyncOnClose)
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	defer w.markDone()
	if w.r.writer != w {
		return Replica{}, fmt.Errorf("%s: writer was stopped", w.name())
	}
	w.r.writer = nil
	if err != nil {
		return w.r.Replica, err
	}
	r := w.r
	if err := s.moveLocked(r, r.vol.finalized); err != nil {
		return r.Replica, err
	}
	r.State, r.Length, r.Visible = Finalized, w.length, w.length
	if s.opts.SyncOnClose {
		// The files are finalized either way; an error here means the
		// rename may not survive a crash, so the write must not be acked.
		if err := syncDir(s.fs, r.vol.finalized); err != nil {
			return r.Replica, fmt.Errorf("%s: sync %s after finalize: %w", w.name(), r.vol.finalized, err)
		}
	}
	return r.Replica, nil
}

// Close closes the writer and keeps the replica as it is on disk (an RBW
// replica waits for recovery). A temporary replica is removed.
func (w *Writer) Close() error {
	err := w.closeFiles(false)
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	defer w.markDone()
	if w.r.writer == w {
		w.r.writer = nil
		if w.r.State == Temporary {
			err = errors.Join(err, s.removeLocked(w.r))
		}
	}
	return err
}

// Abort closes the writer and deletes the replica (e.g. after a checksum
// error: the bytes cannot be trusted). A replica whose files cannot be
// removed stays, marked corrupt (see removeLocked), and the error says so.
func (w *Writer) Abort() error {
	_ = w.closeFiles(false) // the files are being deleted: what a close loses does not matter
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	defer w.markDone()
	if w.r.writer == w {
		w.r.writer = nil
		return s.removeLocked(w.r)
	}
	return nil
}

// abandon is the store taking the replica back from an unresponsive owner.
func (w *Writer) abandon() {
	_ = w.closeFiles(false)
	w.s.mu.Lock()
	if w.r.writer == w {
		w.r.writer = nil
	}
	w.s.mu.Unlock()
	w.markDone()
}

func (w *Writer) markDone() { w.closeOnce.Do(func() { close(w.done) }) }

func (w *Writer) closeFiles(sync bool) error {
	var errs []error
	for _, f := range []vfs.File{w.data, w.meta} {
		if sync {
			if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
				errs = append(errs, err)
			}
		}
		if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// syncDir makes the renames into dir durable.
func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// moveLocked moves a replica's files to dir, meta file first (a scan
// completes a move torn by a crash between the two renames).
func (s *Store) moveLocked(r *replica, dir string) error {
	oldData, oldMeta, oldDir := r.dataPath(), r.metaPath(), r.dir
	r.dir = dir
	if err := s.fs.Rename(oldMeta, r.metaPath()); err != nil {
		r.dir = oldDir
		return err
	}
	if err := s.fs.Rename(oldData, r.dataPath()); err != nil {
		_ = s.fs.Rename(r.metaPath(), oldMeta)
		r.dir = oldDir
		return err
	}
	return nil
}
