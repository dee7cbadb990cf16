package client

import (
	"fmt"
	"io"
	"math"
	"os"

	"golang.org/x/sys/unix"

	"smarth/internal/datatransfer"
)

// Copying a file to a local file (`fs get`) at the pace of a local copy
// (issue 27). WriteTo writes each verified 64 KiB packet with its own
// write(2) and reads the next packet only once that write returned, so
// the socket, the checksum and the page cache take turns. CopyToFile
// keeps the verified packets themselves (no copy into another buffer),
// gathers them into batches of several MiB written with one pwritev(2)
// each by a second goroutine, and meanwhile reads and verifies the next
// packets; the destination's blocks are reserved up front (fallocate).

// copyBatchBytes is how much verified data one pwritev writes: large
// enough that a GiB takes a few hundred system calls rather than 16,000,
// small enough that the two batches in flight stay a few MiB of memory.
var copyBatchBytes = 4 << 20

// copyBatchesInFlight is how many full batches may wait for the writer
// while the next one is read.
const copyBatchesInFlight = 2

// maxIovecs bounds one pwritev call (Linux's IOV_MAX is 1024).
const maxIovecs = 1024

// copyBatch is verified data ready to be written at off: slices of
// packets the batch owns until they are written.
type copyBatch struct {
	off  int64
	data [][]byte
	pkts []*datatransfer.Packet
}

func (b *copyBatch) release() {
	for _, p := range b.pkts {
		p.Release()
	}
	b.pkts, b.data = nil, nil
}

// CopyToFile writes the rest of the file (from the current position) to
// dst at dst's current offset, and leaves dst's offset after the last
// byte written. Every byte is verified against its checksums, replicas
// fail over as in Read, and dst holds exactly the bytes written (on an
// error, a prefix of them: nothing unverified). It returns how many bytes
// it wrote. progress, if not nil, is told of each batch once written.
func (r *FileReader) CopyToFile(dst *os.File, progress func(n int64)) (int64, error) {
	start, err := dst.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if rest := r.size - r.pos; rest > 0 {
		// Reserve the blocks now: the filesystem allocates them in one
		// extent rather than per write, and a full disk fails here, before
		// a GiB has crossed the network. KEEP_SIZE: the file grows only
		// with bytes written, so a failed copy leaves no zeros at its end.
		// Filesystems without fallocate simply allocate as they write.
		_ = unix.Fallocate(int(dst.Fd()), unix.FALLOC_FL_KEEP_SIZE, start, rest)
	}
	batches := make(chan *copyBatch, copyBatchesInFlight)
	failed := make(chan struct{}) // closed when a write fails: stop reading
	written := make(chan writeResult, 1)
	go func() { written <- writeBatches(dst, batches, failed, progress) }()

	off := start
	cur := &copyBatch{off: off}
	var size int
	var readErr error
	refetches := 0
	for {
		b, err := r.chunk(math.MaxInt, &refetches, false)
		if err == io.EOF || (err == nil && b == nil) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		// Take the packet the bytes live in, so the reader's next packet
		// does not reuse its buffer before the writer is done with it.
		if p := r.cur.detach(); p != nil {
			cur.pkts = append(cur.pkts, p)
		}
		cur.data = append(cur.data, b)
		size += len(b)
		off += int64(len(b))
		if size >= copyBatchBytes || len(cur.data) >= maxIovecs {
			if !sendBatch(batches, cur, failed) {
				break // the writer failed; its error is below
			}
			cur, size = &copyBatch{off: off}, 0
		}
	}
	// Even after a read error: what the batch holds was verified, and the
	// caller learns from the count how far the file is good.
	if len(cur.data) > 0 {
		sendBatch(batches, cur, failed)
	}
	close(batches)
	res := <-written
	if _, err := dst.Seek(start+res.n, io.SeekStart); err != nil && res.err == nil {
		res.err = err
	}
	if res.err != nil {
		return res.n, fmt.Errorf("writing %s: %w", dst.Name(), res.err)
	}
	return res.n, readErr
}

// writeResult is what the writer goroutine did: bytes written in file
// order from the start, and the error that stopped it.
type writeResult struct {
	n   int64
	err error
}

// sendBatch hands b to the writer; false (and b released) when the
// writer has already stopped on an error.
func sendBatch(batches chan<- *copyBatch, b *copyBatch, failed <-chan struct{}) bool {
	select {
	case <-failed:
		b.release()
		return false
	default:
	}
	select {
	case batches <- b:
		return true
	case <-failed:
		b.release()
		return false
	}
}

// writeBatches writes each batch at its offset with pwritev and releases
// its packets; after a failed write it closes failed and releases the
// rest unwritten.
func writeBatches(dst *os.File, batches <-chan *copyBatch, failed chan<- struct{}, progress func(int64)) writeResult {
	var res writeResult
	for b := range batches {
		if res.err == nil {
			var n int64
			n, res.err = pwritevAll(dst, b.data, b.off)
			res.n += n
			if progress != nil {
				progress(n)
			}
		}
		b.release()
		if res.err != nil {
			close(failed)
			break
		}
	}
	for b := range batches { // only reached after an error: drain
		b.release()
	}
	return res
}

// pwritevAll writes every slice of bufs at off, going on after short
// writes and interrupted calls.
func pwritevAll(dst *os.File, bufs [][]byte, off int64) (int64, error) {
	var total int64
	fd := int(dst.Fd())
	for len(bufs) > 0 {
		n, err := unix.Pwritev(fd, bufs, off+total)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, io.ErrShortWrite
		}
		total += int64(n)
		for n > 0 && len(bufs) > 0 {
			if n >= len(bufs[0]) {
				n -= len(bufs[0])
				bufs = bufs[1:]
			} else {
				bufs[0] = bufs[0][n:]
				n = 0
			}
		}
	}
	return total, nil
}
