package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"smarth/internal/datanode/store/vfs"
)

// Handle is an open replica for reading. Its files stay valid even if the
// replica is finalized (renamed) meanwhile.
type Handle struct {
	Replica          // as it was when opened; Visible bounds what may be read
	Data    vfs.File // the block file (an *os.File on vfs.OS: sendfile works)
	Meta    vfs.File // the meta file; chunk i's checksum is at MetaHeaderLen+4*i
}

// Close closes both files.
func (h *Handle) Close() error {
	err := h.Data.Close()
	if err2 := h.Meta.Close(); err == nil {
		err = err2
	}
	return err
}

// ReadChecksums reads the checksums of chunks [first, first+len(dst)/4).
func (h *Handle) ReadChecksums(dst []byte, first int64) error {
	_, err := h.Meta.ReadAt(dst, MetaHeaderLen+first*checksumSize)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("reading checksums of %s: %w", h.Name(), err)
	}
	return nil
}

// Open opens a replica for reading. The replica must have a generation
// stamp at least gs (a newer one comes from a recovery the reader has not
// heard of), must not be temporary and must not be marked corrupt.
func (s *Store) Open(id, gs uint64) (*Handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.replicas[id]
	switch {
	case !ok || r.State == Temporary:
		return nil, fmt.Errorf("%w: no replica of %s on this node", ErrNotFound, BlockName(id, gs))
	case r.GS < gs:
		return nil, fmt.Errorf("%w: replica %s is older than the requested generation stamp %d", ErrNotFound, r.Name(), gs)
	case r.Corrupt:
		return nil, fmt.Errorf("%w: %s failed checksum verification and is not served", ErrCorrupt, r.Name())
	}
	data, err := s.fs.Open(r.dataPath())
	if err != nil {
		return nil, err
	}
	meta, err := s.fs.Open(r.metaPath())
	if err != nil {
		data.Close()
		return nil, err
	}
	return &Handle{Replica: r.Replica, Data: data, Meta: meta}, nil
}

// Verify reads a replica's first n bytes (all of them if n < 0) and checks
// them against the stored checksums. throttle is called with the number of
// bytes about to be read, to rate-limit scanning (nil: no limit). A
// mismatch returns an error wrapping ErrCorrupt.
func (s *Store) Verify(id, gs uint64, n int64, throttle func(int)) error {
	h, err := s.Open(id, gs)
	if err != nil {
		return err
	}
	defer h.Close()
	if n < 0 || n > h.Visible {
		n = h.Visible
	}
	bpc := h.BytesPerChecksum
	const chunksPerRead = 256
	data := bufio.NewReaderSize(io.NewSectionReader(h.Data, 0, n), 1<<20)
	buf := make([]byte, bpc*chunksPerRead)
	sums := make([]byte, checksumSize*chunksPerRead)
	for off := int64(0); off < n; {
		k := int(min(int64(len(buf)), n-off))
		if throttle != nil {
			throttle(k)
		}
		if _, err := io.ReadFull(data, buf[:k]); err != nil {
			return fmt.Errorf("%w: %s: block file shorter than %d bytes: %v", ErrCorrupt, h.Name(), n, err)
		}
		chunks := int(chunkCount(int64(k), bpc))
		if err := h.ReadChecksums(sums[:chunks*checksumSize], off/int64(bpc)); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		for i := 0; i < chunks; i++ {
			c := buf[i*bpc : min((i+1)*bpc, k)]
			if crc32.Checksum(c, castagnoli) != binary.BigEndian.Uint32(sums[i*checksumSize:]) {
				return fmt.Errorf("%w: %s: checksum mismatch in chunk at offset %d", ErrCorrupt, h.Name(), off+int64(i*bpc))
			}
		}
		off += int64(k)
	}
	return nil
}

func crcOf(b []byte) uint32    { return crc32.Checksum(b, castagnoli) }
func beUint32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
