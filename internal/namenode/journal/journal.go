package journal

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	segmentPrefix = "edits_"
	imagePrefix   = "image_"
	tmpSuffix     = ".tmp"
	imageEnd      = "smarth-image-end"
)

func segmentName(first uint64) string { return fmt.Sprintf("%s%020d", segmentPrefix, first) }
func imageName(txid uint64) string    { return fmt.Sprintf("%s%020d", imagePrefix, txid) }

// Loader receives the persisted state during Load.
type Loader interface {
	// LoadImage gets the records of the newest image, taken at txid.
	LoadImage(txid uint64, records [][]byte) error
	// ApplyEdit gets each logged record after the image, in order.
	ApplyEdit(txid uint64, payload []byte) error
}

// Journal is an edit log directory. Append and Roll must be called under
// the caller's own lock (they define the order); Sync must not be.
type Journal struct {
	fs     FS
	dir    string
	logger *slog.Logger
	// OnSync, if set, is told the duration and number of records of each
	// group commit (for metrics). Set before use.
	OnSync func(d time.Duration, records int)

	mu       sync.Mutex
	cond     *sync.Cond // signalled when a sync finishes; uses mu
	seg      File       // current segment; guarded by mu
	segFirst uint64     // first txid of seg; guarded by mu
	// segOff is how many bytes of seg hold records, segAlloc how many are
	// preallocated (zeros written and synced): used by the one goroutine
	// flushing (syncing set), or under mu with no flush running.
	segOff, segAlloc int64
	buf              []byte // appended, not yet written; guarded by mu
	spare            []byte // the other buffer of the double buffer; guarded by mu
	bufN             int    // records in buf; guarded by mu
	lastTx           uint64 // last txid appended; guarded by mu
	synced           uint64 // last txid known durable; guarded by mu
	syncing          bool   // a goroutine is writing and syncing; guarded by mu
	err              error  // sticky failure: once set, nothing more is durable; guarded by mu
	loaded           bool   // guarded by mu
	// noDirect: the file system refused direct I/O once; directLogged:
	// the direct mode was logged. Guarded by mu.
	noDirect, directLogged bool
	// noSpace is set while the file system refused room for the records
	// in buf (ENOSPC preallocating, before any of them was written), and
	// noSpaceGen counts such refusals: unlike err it clears once a later
	// flush writes them. Guarded by mu.
	noSpace    error
	noSpaceGen uint64
}

// Open prepares a journal in dir (created if missing). Call Load before
// anything else.
func Open(fs FS, dir string, logger *slog.Logger) (*Journal, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", dir, err)
	}
	j := &Journal{fs: fs, dir: dir, logger: logger}
	j.cond = sync.NewCond(&j.mu)
	return j, nil
}

type fileSet struct {
	images   []uint64 // txids, ascending
	segments []uint64 // first txids, ascending
}

func (j *Journal) scan() (fileSet, error) {
	names, err := j.fs.List(j.dir)
	if err != nil {
		return fileSet{}, fmt.Errorf("journal: list %s: %w", j.dir, err)
	}
	var fsSet fileSet
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, tmpSuffix):
			// A checkpoint that never finished.
			_ = j.fs.Remove(filepath.Join(j.dir, n))
		case strings.HasPrefix(n, imagePrefix):
			if tx, err := strconv.ParseUint(n[len(imagePrefix):], 10, 64); err == nil {
				fsSet.images = append(fsSet.images, tx)
			}
		case strings.HasPrefix(n, segmentPrefix):
			if tx, err := strconv.ParseUint(n[len(segmentPrefix):], 10, 64); err == nil {
				fsSet.segments = append(fsSet.segments, tx)
			}
		}
	}
	sort.Slice(fsSet.images, func(a, b int) bool { return fsSet.images[a] < fsSet.images[b] })
	sort.Slice(fsSet.segments, func(a, b int) bool { return fsSet.segments[a] < fsSet.segments[b] })
	return fsSet, nil
}

// Load hands the newest image and the edits after it to l, cuts off a torn
// tail of the last segment, and opens a new segment for appends. It
// reports whether an image existed (false: a fresh directory, which the
// caller should checkpoint right away) and the last txid.
func (j *Journal) Load(l Loader) (bool, uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.loaded {
		return false, 0, errors.New("journal: already loaded")
	}
	files, err := j.scan()
	if err != nil {
		return false, 0, err
	}
	var imageTx uint64
	haveImage := len(files.images) > 0
	if haveImage {
		imageTx = files.images[len(files.images)-1]
		recs, err := j.readImage(imageTx)
		if err != nil {
			return false, 0, err
		}
		if err := l.LoadImage(imageTx, recs); err != nil {
			return false, 0, fmt.Errorf("journal: load %s: %w", imageName(imageTx), err)
		}
	} else if len(files.segments) > 0 {
		return false, 0, fmt.Errorf("journal: %s has edit log segments but no image; refusing to start from a partial history", j.dir)
	}
	last := imageTx
	for i, first := range files.segments {
		isLast := i == len(files.segments)-1
		if last, err = j.replaySegment(first, last, isLast, l); err != nil {
			return false, 0, err
		}
	}
	j.lastTx, j.synced = last, last
	if err := j.openSegment(last + 1); err != nil {
		return false, 0, err
	}
	j.loaded = true
	return haveImage, last, nil
}

func (j *Journal) readImage(txid uint64) ([][]byte, error) {
	name := filepath.Join(j.dir, imageName(txid))
	f, err := j.fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("journal: open image: %w", err)
	}
	defer f.Close()
	var recs [][]byte
	ended := false
	_, err = readRecords(f, func(tx uint64, p []byte) error {
		if ended {
			return fmt.Errorf("data after the end marker")
		}
		if tx != txid {
			return fmt.Errorf("record for txid %d in the image of %d", tx, txid)
		}
		if string(p) == imageEnd {
			ended = true
			return nil
		}
		recs = append(recs, p)
		return nil
	})
	if err == nil && !ended {
		err = errors.New("no end marker (incomplete)")
	}
	if err != nil {
		return nil, fmt.Errorf("journal: image %s is corrupt: %w", name, err)
	}
	return recs, nil
}

// replaySegment applies the records of one segment with txid > last and
// returns the new last txid.
func (j *Journal) replaySegment(first, last uint64, isLast bool, l Loader) (uint64, error) {
	name := filepath.Join(j.dir, segmentName(first))
	if first > last+1 {
		return last, fmt.Errorf("journal: gap in the edit log: %s starts at txid %d, last known is %d", name, first, last)
	}
	f, err := j.fs.Open(name)
	if err != nil {
		return last, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	applied := 0
	good, err := readRecords(f, func(tx uint64, p []byte) error {
		switch {
		case tx <= last:
			return nil // already in the image
		case tx != last+1:
			return fmt.Errorf("journal: %s: txid %d follows %d", name, tx, last)
		}
		if err := l.ApplyEdit(tx, p); err != nil {
			return fmt.Errorf("journal: replay txid %d from %s: %w", tx, name, err)
		}
		last = tx
		applied++
		return nil
	})
	if errors.Is(err, errTorn) {
		if !isLast {
			return last, fmt.Errorf("journal: %s is corrupt in the middle of the log: %w", name, err)
		}
		j.logger.Warn("edit log ends with a torn record; cutting it off (it was never acknowledged)",
			"segment", name, "offset", good, "error", err)
		if err := j.fs.Truncate(name, good); err != nil {
			return last, fmt.Errorf("journal: cut torn tail of %s: %w", name, err)
		}
		err = nil
	}
	if err != nil {
		return last, err
	}
	j.logger.Debug("replayed edit log segment", "segment", name, "records", applied)
	return last, nil
}

// openSegment starts a new segment whose first txid is first. Caller holds mu.
func (j *Journal) openSegment(first uint64) error {
	name := filepath.Join(j.dir, segmentName(first))
	f, err := j.createSegment(name)
	if err != nil {
		return fmt.Errorf("journal: create %s: %w", name, err)
	}
	if err := j.fs.SyncDir(j.dir); err != nil {
		f.Close()
		return fmt.Errorf("journal: sync %s: %w", j.dir, err)
	}
	j.seg, j.segFirst = f, first
	j.segOff, j.segAlloc = 0, 0
	return nil
}

// directFS is an FS whose segments may be written with direct I/O (OS).
type directFS interface{ DirectSegments() bool }

// createSegment creates a segment file: direct and synchronous when the
// FS asks for it and the file system allows it, else buffered. Called
// under mu.
func (j *Journal) createSegment(name string) (File, error) {
	if d, ok := j.fs.(directFS); ok && d.DirectSegments() && !j.noDirect {
		f, err := createDirect(name)
		if err == nil {
			if !j.directLogged {
				j.directLogged = true
				j.logger.Info("edit log segments are written with direct synchronous I/O", "dir", j.dir)
			}
			return f, nil
		}
		if !errors.Is(err, errNoDirect) {
			return nil, err
		}
		_ = j.fs.Remove(name)
		j.noDirect = true
		j.logger.Warn("the edit log's file system refuses direct I/O; segments are written through the page cache and fdatasync'd instead",
			"dir", j.dir, "error", err)
	}
	return j.fs.Create(name)
}

// PreallocChunk is how far ahead of the records a segment is filled with
// zeros (HDFS's EditLogFileOutputStream preallocates 1 MiB the same way).
// Overwriting bytes that already exist leaves the file's size and extents
// alone, so the fdatasync of a group commit flushes the data and nothing
// of the inode: no file-system journal transaction per commit. The reader
// takes the zeros after the last record as the end of the log.
const PreallocChunk = 1 << 20

// preallocator is a File that can fill a range with zeros in place.
type preallocator interface {
	Preallocate(off, n int64) error
}

// preallocate extends the zeros of seg to cover n more bytes of records.
// Called by the flushing goroutine.
func (j *Journal) preallocate(seg File, n int64) error {
	p, ok := seg.(preallocator)
	if !ok {
		return nil
	}
	for j.segOff+n > j.segAlloc {
		if err := p.Preallocate(j.segAlloc, PreallocChunk); err != nil {
			return err
		}
		j.segAlloc += PreallocChunk
	}
	return nil
}

// Append adds a record and returns its txid. It is durable only after
// Sync(txid) returns nil.
func (j *Journal) Append(payload []byte) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lastTx++
	j.buf = appendRecord(j.buf, j.lastTx, payload)
	j.bufN++
	return j.lastTx
}

// LastTxID is the last txid appended.
func (j *Journal) LastTxID() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lastTx
}

// Err is the sticky error after a failed write or sync, or nil.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Sync returns once every record up to txid is durable. Concurrent callers
// share one write and one fdatasync: whoever finds no sync in progress
// writes everything appended so far; the others wait for it.
//
// The one who would write first yields the processor once. Calls arrive
// in bursts (a group commit's replies go out together, so its callers'
// next calls come back together), and without the yield the first of a
// burst to append synced its record alone while the rest, already
// runnable, queued behind that fdatasync for the next one: at 8 client
// threads over half the syncs carried one record. A yield with nothing
// else runnable costs well under a microsecond.
func (j *Journal) Sync(txid uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	yielded := false
	gen := j.noSpaceGen
	for j.synced < txid && j.err == nil {
		if j.noSpaceGen != gen {
			// A flush since this call began found no room: the records
			// stay buffered, and this caller is told now rather than
			// left waiting for an operator to free space.
			return j.noSpace
		}
		if j.syncing {
			j.cond.Wait()
			continue
		}
		if !yielded {
			yielded = true
			j.mu.Unlock()
			runtime.Gosched()
			j.mu.Lock()
			continue
		}
		j.flushLocked()
	}
	if j.synced >= txid {
		return nil
	}
	return j.err
}

// NoSpace is the error of the last flush, if the file system had no room
// for the records it held and they are still buffered; nil once they are
// written.
func (j *Journal) NoSpace() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.noSpace
}

// flushLocked writes and syncs the buffer, releasing mu meanwhile.
func (j *Journal) flushLocked() {
	buf, n, last, seg := j.buf, j.bufN, j.lastTx, j.seg
	j.buf, j.spare, j.bufN = j.spare[:0], nil, 0
	j.syncing = true
	j.mu.Unlock()
	start := time.Now()
	err := j.preallocate(seg, int64(len(buf)))
	if errors.Is(err, syscall.ENOSPC) {
		// Preallocation writes zeros past the records and nothing of
		// buf yet, so no record is torn and none is lost: keep them
		// buffered, ahead of any appended meanwhile, for a later flush.
		// HDFS stops the namenode here; refusing until space returns
		// keeps it serving reads.
		j.mu.Lock()
		j.syncing = false
		newer := j.buf
		j.buf = append(buf, newer...)
		j.spare = newer[:0]
		j.bufN += n
		j.noSpace = fmt.Errorf("journal: no space left on the edit log's file system (%s) for %d records: they are kept in memory, not yet durable, and written when space is freed: %w", j.dir, j.bufN, err)
		j.noSpaceGen++
		j.logger.Error("edit log is out of space; operations are not acknowledged until space is freed", "dir", j.dir, "records_held", j.bufN, "error", err)
		j.cond.Broadcast()
		return
	}
	if err == nil {
		_, err = seg.Write(buf)
	}
	if err == nil {
		j.segOff += int64(len(buf))
		err = seg.Sync()
	}
	d := time.Since(start)
	j.mu.Lock()
	j.syncing = false
	if err != nil {
		j.err = fmt.Errorf("journal: write edit log: %w", err)
		j.logger.Error("edit log write failed; no further operation can be acknowledged", "error", err)
		if _, direct := seg.(interface{ direct() }); direct && errors.Is(err, syscall.EINVAL) {
			j.logger.Error("the edit log's file system refused a direct write; if it cannot take direct I/O, set edit_log_io: buffered", "dir", j.dir)
		}
	} else {
		j.synced = last
		if j.noSpace != nil {
			j.logger.Info("edit log has space again; held records written", "dir", j.dir, "records", n)
			j.noSpace = nil
		}
	}
	j.spare = buf[:0]
	j.cond.Broadcast()
	if err == nil && j.OnSync != nil && n > 0 {
		j.OnSync(d, n)
	}
}

// Roll makes everything appended durable, closes the current segment and
// starts a new one. It returns the last txid of the closed segment: the
// txid of an image of the caller's state taken now, under its lock.
func (j *Journal) Roll() (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.syncing {
		j.cond.Wait()
	}
	if j.err != nil {
		return 0, j.err
	}
	if j.bufN > 0 {
		j.flushLocked()
		for j.syncing {
			j.cond.Wait()
		}
		if j.err != nil {
			return 0, j.err
		}
		if j.bufN > 0 {
			// Out of space: the held records belong to this segment.
			return 0, j.noSpace
		}
	}
	last := j.lastTx
	if last+1 == j.segFirst {
		return last, nil // nothing in this segment; keep it
	}
	// The next segment is made before the current one is closed: a file
	// system out of space refuses it, and the log goes on in the current
	// segment (the roll, a checkpoint's, is refused and tried again later)
	// instead of being broken for good.
	name := filepath.Join(j.dir, segmentName(last+1))
	f, err := j.createSegment(name)
	if err == nil {
		if err = j.fs.SyncDir(j.dir); err != nil {
			f.Close()
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			_ = j.fs.Remove(name) // empty: no record was written to it
			return 0, fmt.Errorf("journal: no space left on the edit log's file system (%s) to start a new segment; the edit log goes on in the current one: %w", j.dir, err)
		}
		j.err = fmt.Errorf("journal: create %s: %w", name, err)
		return 0, j.err
	}
	if err := j.seg.Close(); err != nil {
		f.Close()
		j.err = fmt.Errorf("journal: close segment: %w", err)
		return 0, j.err
	}
	j.seg, j.segFirst = f, last+1
	j.segOff, j.segAlloc = 0, 0
	return last, nil
}

// Image collects the records of a checkpoint image in memory.
type Image struct {
	txid uint64
	buf  []byte
	n    int
}

// NewImage starts an image of the state at txid (from Roll).
func NewImage(txid uint64) *Image { return &Image{txid: txid} }

// Add appends one record.
func (im *Image) Add(payload []byte) {
	im.buf = appendRecord(im.buf, im.txid, payload)
	im.n++
}

// SaveImage writes im durably and then removes the images and segments it
// makes redundant. Call it without the caller's lock held.
func (j *Journal) SaveImage(im *Image) error {
	data := appendRecord(im.buf, im.txid, []byte(imageEnd))
	final := filepath.Join(j.dir, imageName(im.txid))
	tmp := final + tmpSuffix
	f, err := j.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("journal: create image: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = j.fs.Rename(tmp, final)
	}
	if err == nil {
		err = j.fs.SyncDir(j.dir)
	}
	if err != nil {
		_ = j.fs.Remove(tmp)
		return fmt.Errorf("journal: write image %s: %w", final, err)
	}
	j.logger.Info("checkpoint saved", "image", final, "txid", im.txid, "records", im.n, "bytes", len(data))
	return j.purge(im.txid)
}

// purge removes images older than txid and segments wholly at or below it.
func (j *Journal) purge(txid uint64) error {
	files, err := j.scan()
	if err != nil {
		return err
	}
	j.mu.Lock()
	current := j.segFirst
	j.mu.Unlock()
	for _, tx := range files.images {
		if tx < txid {
			_ = j.fs.Remove(filepath.Join(j.dir, imageName(tx)))
		}
	}
	for i, first := range files.segments {
		if first == current || i+1 >= len(files.segments) {
			continue
		}
		if files.segments[i+1]-1 <= txid {
			_ = j.fs.Remove(filepath.Join(j.dir, segmentName(first)))
		}
	}
	return j.fs.SyncDir(j.dir)
}

// Close syncs what was appended and closes the current segment.
func (j *Journal) Close() error {
	j.mu.Lock()
	last := j.lastTx
	j.mu.Unlock()
	err := j.Sync(last)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.seg != nil {
		if cerr := j.seg.Close(); err == nil {
			err = cerr
		}
		j.seg = nil
	}
	if j.err == nil {
		j.err = errors.New("journal: closed")
	}
	return err
}
