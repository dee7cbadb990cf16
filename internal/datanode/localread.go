package datanode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// Local reads for WebHDFS (docs/architecture.md, "WebHDFS"). A WebHDFS
// OPEN redirected to this node used to read every block through the
// node's own client over loopback, then write it again to the HTTP
// caller: two passes over the bytes. A block this node holds is now read
// here, straight from the replica store (or the memory cache), with the
// same access check the data port makes.

// LocalReplicas is what the WebHDFS handler (package datanode/webhdfs, which
// the datanode cannot import) uses to read replicas held by this node. A
// handler mounted as Config.WebHDFS that has a UseLocalReplicas method is
// given the datanode when it starts.
type LocalReplicas interface {
	// ReadReplica writes bytes [off, off+n) of the located block lb to w
	// and returns how many it wrote. lb is as the namenode gave it: this
	// node must be among its locations (a replica the namenode does not
	// list, say one it found corrupt or is deleting, is not served) and
	// its block access token must allow reading the block, as on the data
	// port. Only a finalized replica with lb's generation stamp is served,
	// and every byte written was verified against the stored checksums
	// first, because an HTTP reader cannot verify them itself. An error
	// wrapping ErrNoLocalReplica means nothing was written and the caller
	// should read elsewhere; after any other error the first `written`
	// bytes are good and the rest must come from another replica (a
	// checksum mismatch also marks the replica corrupt and reports it to
	// the namenode, as the scanner does).
	ReadReplica(w io.Writer, lb *dfspb.LocatedBlock, off, n int64) (written int64, err error)
}

// ErrNoLocalReplica: this node has no replica it may serve for the read
// (none, another generation stamp, not finalized, marked corrupt, shorter
// than the range).
var ErrNoLocalReplica = errors.New("no usable local replica")

// localReadPiece is how much of a block is read, verified and written at
// a time: big enough that the write reaches the socket in few system
// calls, small enough to stay in the CPU cache while it is checksummed.
const localReadPiece = 1 << 20

// ReadReplica implements LocalReplicas.
func (d *DataNode) ReadReplica(w io.Writer, lb *dfspb.LocatedBlock, off, n int64) (int64, error) {
	b := lb.GetBlock()
	id, gs := b.GetBlockId(), b.GetGenerationStamp()
	if off < 0 || n < 0 {
		return 0, fmt.Errorf("%w: invalid range [%d, %d) of %s", ErrNoLocalReplica, off, off+n, store.BlockName(id, gs))
	}
	if !slices.ContainsFunc(lb.GetLocations(), func(l *dfspb.DatanodeInfo) bool { return l.GetId() == d.ID() }) {
		return 0, fmt.Errorf("%w: the namenode does not list this node for %s", ErrNoLocalReplica, store.BlockName(id, gs))
	}
	if _, err := d.tokens.Check(lb.GetToken(), blocktoken.Want{BlockID: id, GS: gs, Mode: blocktoken.Read}, time.Now()); err != nil {
		d.metrics.tokenRefusals.Inc()
		d.log.Warn("access token refused", "op", "WEBHDFS_OPEN", "block", id, "err", err)
		return 0, fmt.Errorf("%w: access token refused: %v", ErrNoLocalReplica, err)
	}
	if blk := d.cachedReplica(b); blk != nil {
		defer blk.Release()
		if blk.GS == gs && off+n <= blk.Length {
			d.metrics.cacheHits.Inc()
			return d.writeCached(w, blk.Data()[off:off+n])
		}
	}
	h, err := d.store.Open(id, gs)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoLocalReplica, err)
	}
	defer h.Close()
	if h.State != store.Finalized || h.GS != gs || off+n > h.Visible {
		return 0, fmt.Errorf("%w: %s is %s with %d readable bytes; wanted stamp %d, bytes [%d, %d)",
			ErrNoLocalReplica, h.Name(), h.State, h.Visible, gs, off, off+n)
	}
	d.metrics.cacheMisses.Inc()
	bpc := int64(h.BytesPerChecksum)
	start, end := off-off%bpc, min((off+n+bpc-1)/bpc*bpc, h.Visible)
	written, err := d.writeVerified(w, h, start, end, off, off+n)
	if err != nil {
		var ce *datatransfer.ChecksumError
		if errors.As(err, &ce) || errors.Is(err, store.ErrCorrupt) {
			d.metrics.checksumFailures.Inc()
			d.scanner.corrupt(h.Replica, err)
		}
		return written, err
	}
	d.metrics.blocksRead.Inc()
	(&diskSource{d: d, h: h, start: start, end: end}).finish()
	return written, nil
}

// writeCached writes bytes of a cached replica, verified when it was
// cached, straight from the mapping.
func (d *DataNode) writeCached(w io.Writer, data []byte) (int64, error) {
	var written int64
	for len(data) > 0 {
		k := min(len(data), localReadPiece)
		m, err := w.Write(data[:k])
		written += int64(m)
		d.metrics.bytesRead.Add(float64(m))
		d.metrics.bytesReadMemory.Add(float64(m))
		d.metrics.localReadBytes.Add(float64(m))
		if err != nil {
			return written, err
		}
		data = data[k:]
	}
	return written, nil
}

// writeVerified reads the chunk-aligned range [start, end) of h, checks
// each piece against the meta file's checksums and writes the part of it
// inside [from, to) to w. A piece with a bad chunk is not written at all.
func (d *DataNode) writeVerified(w io.Writer, h *store.Handle, start, end, from, to int64) (int64, error) {
	bpc := int64(h.BytesPerChecksum)
	piece := max(localReadPiece/bpc*bpc, bpc)
	buf := make([]byte, piece)
	sums := make([]byte, datatransfer.ChunkCount(int(piece), int(bpc))*datatransfer.ChecksumSize)
	var written int64
	for pos := start; pos < end; {
		k := min(piece, end-pos)
		data := buf[:k]
		if m, err := h.Data.ReadAt(data, pos); int64(m) < k {
			return written, fmt.Errorf("%w: %s: block file ends at %d: %v", store.ErrCorrupt, h.Name(), pos+int64(m), err)
		}
		s := sums[:datatransfer.ChunkCount(int(k), int(bpc))*datatransfer.ChecksumSize]
		if err := h.ReadChecksums(s, pos/bpc); err != nil {
			return written, fmt.Errorf("%w: %v", store.ErrCorrupt, err)
		}
		if i := datatransfer.VerifyChecksums(s, data, int(bpc)); i >= 0 {
			at := pos + int64(i)*bpc
			return written, &datatransfer.ChecksumError{Offset: at, Want: binary.BigEndian.Uint32(s[i*4:]),
				Got: datatransfer.CRC32C(data[int64(i)*bpc : min(int64(i+1)*bpc, k)])}
		}
		lo, hi := max(from, pos), min(to, pos+k)
		if lo < hi {
			m, err := w.Write(data[lo-pos : hi-pos])
			written += int64(m)
			d.metrics.bytesRead.Add(float64(m))
			d.metrics.bytesReadDisk.Add(float64(m))
			d.metrics.localReadBytes.Add(float64(m))
			if err != nil {
				return written, err
			}
		}
		pos += k
	}
	return written, nil
}

// localReplicasUser is a WebHDFS handler that can read local replicas.
type localReplicasUser interface {
	UseLocalReplicas(LocalReplicas)
}

var _ LocalReplicas = (*DataNode)(nil)
