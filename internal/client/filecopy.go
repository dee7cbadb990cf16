package client

import (
	"fmt"
	"io"
	"math"
	"os"

	"smarth/internal/datatransfer"
)

// Copying a file to a local file (`fs get`) at the pace of a local copy
// (issue 27). WriteTo writes each verified 64 KiB packet with its own
// write(2): 16,000 system calls for a GiB. CopyToFile keeps the verified
// packets themselves (no copy into another buffer) and writes several at
// once with one pwritev(2), and reserves the destination's blocks up
// front (fallocate).
//
// Measured on the local cluster (docs/benchmarks.md, "fs get against
// cp"): 512 KiB to 1 MiB batches cut the client's system time by about a
// quarter; 2 MiB and more, or a second goroutine writing batches while
// the next are read, raised it to twice the old figure: the packets held
// back are more than the packet pool and the CPU cache keep warm, so the
// reader takes fresh buffers (page faults) and the write copies from
// memory rather than the cache.

// copyBatchBytes is how much verified data one pwritev writes.
var copyBatchBytes = 512 << 10

// maxIovecs bounds one pwritev call (Linux's IOV_MAX is 1024).
const maxIovecs = 1024

// copyBatch is verified data to be written at off: slices of packets the
// batch owns until they are written.
type copyBatch struct {
	off  int64
	size int
	data [][]byte
	pkts []*datatransfer.Packet
}

// write writes the batch with pwritev, releases its packets and empties
// it for the bytes after it.
func (b *copyBatch) write(dst *os.File) (int64, error) {
	n, err := pwritevAll(dst, b.data, b.off)
	for _, p := range b.pkts {
		p.Release()
	}
	clear(b.pkts)
	clear(b.data)
	b.off, b.size, b.data, b.pkts = b.off+n, 0, b.data[:0], b.pkts[:0]
	return n, err
}

// CopyToFile writes the rest of the file (from the current position) to
// dst at dst's current offset, and leaves dst's offset after the last
// byte written. Every byte is verified against its checksums, replicas
// fail over as in Read, and dst holds exactly the bytes written (on an
// error, a prefix of them: nothing unverified). It returns how many bytes
// it wrote. progress, if not nil, is told of each batch once written.
// With short-circuit reads on, a block with a replica on this host is
// checked against its meta file and copied by the kernel from the
// replica's file (shortcircuit.go); any other block comes over TCP.
func (r *FileReader) CopyToFile(dst *os.File, progress func(n int64)) (int64, error) {
	start, err := dst.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if rest := r.size - r.pos; rest > 0 {
		// Reserve the blocks now: the filesystem allocates them in large
		// extents rather than per write (measured: less system time), and
		// a full disk fails at once, before a GiB has crossed the network.
		// KEEP_SIZE: the file grows only with bytes written, so a failed
		// copy leaves no zeros at its end. Filesystems without fallocate
		// simply allocate as they write.
		reserve(dst, start, rest)
	}
	b := &copyBatch{off: start}
	var written int64
	flush := func() error {
		n, err := b.write(dst)
		written += n
		if progress != nil && n > 0 {
			progress(n)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", dst.Name(), err)
		}
		return nil
	}
	var readErr error
	refetches := 0
	for {
		if r.f.sc != nil && !r.closed && r.pos < r.size && r.betweenReads() {
			// A replica on this host: the kernel copies the block from
			// its file (shortcircuit.go). The batch goes first, so that
			// what is written stays one prefix of the file.
			if err := flush(); err != nil {
				return r.copyEnd(dst, start, written, err)
			}
			if n, ok := r.copyShortCircuit(dst, b.off); ok {
				if r.cur != nil {
					r.cur.close()
					r.cur = nil
				}
				r.pos += n
				b.off += n
				written += n
				if progress != nil && n > 0 {
					progress(n)
				}
				continue
			}
		}
		data, err := r.chunk(math.MaxInt, &refetches, false)
		if err == io.EOF || (err == nil && data == nil) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		// Take the packet the bytes live in, so that the reader's next
		// packet does not reuse its buffer before the batch is written.
		if p := r.cur.detach(); p != nil {
			b.pkts = append(b.pkts, p)
		}
		b.data = append(b.data, data)
		b.size += len(data)
		if b.size >= copyBatchBytes || len(b.data) >= maxIovecs {
			if err := flush(); err != nil {
				return r.copyEnd(dst, start, written, err)
			}
		}
	}
	// Even after a read error: what the batch holds was verified, and the
	// caller learns from the count how far the local file is good.
	if err := flush(); err != nil {
		return r.copyEnd(dst, start, written, err)
	}
	return r.copyEnd(dst, start, written, readErr)
}

// betweenReads: no block reader is part way through the range it was
// opened for at the current position, so the next bytes may come from
// anywhere.
func (r *FileReader) betweenReads() bool {
	return r.cur == nil || r.cur.filePos() != r.pos || r.cur.next >= r.cur.end
}

// copyEnd leaves dst's offset after the written bytes (and no next
// block in preparation).
func (r *FileReader) copyEnd(dst *os.File, start, written int64, err error) (int64, error) {
	r.dropAhead()
	if _, serr := dst.Seek(start+written, io.SeekStart); serr != nil && err == nil {
		err = serr
	}
	return written, err
}
