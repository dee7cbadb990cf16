package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// FileReader reads a file. Read and Seek keep a position and are not safe
// for concurrent use (like os.File); ReadAt is, and does not move the
// position. Each replica is chosen closest first; a replica that fails or
// sends data not matching its checksums is skipped for the rest of this
// reader's life (checksum mismatches are reported to the namenode), and
// the locations are fetched again when every replica of a block failed.
type FileReader struct {
	f    *FileSystem
	path string
	size int64

	mu     sync.Mutex
	blocks []*dfspb.LocatedBlock // guarded by mu: in file order
	dead   map[string]bool       // guarded by mu: datanode addresses that failed for this reader
	why    map[string]string     // guarded by mu: the last error per failed address, for messages
	served map[uint64]string     // guarded by mu: block id -> datanode id of the last replica opened for it

	pos    int64        // sequential position
	cur    *blockReader // sequential block reader, nil if none
	ahead  *ahead       // CopyToFile's next short-circuit block in preparation, nil if none
	closed bool
}

// locationRefetches is how many times a read fetches block locations
// again after every replica of a block failed (HDFS: 3).
const locationRefetches = 3

// Open opens a file for reading.
func (f *FileSystem) Open(ctx context.Context, p string) (*FileReader, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat(ctx, p)
	if err != nil {
		return nil, relabel(err, "open")
	}
	if st.IsDir {
		return nil, &PathError{Op: "open", Path: p, Kind: ErrIsDir, Msg: kindText[ErrIsDir]}
	}
	lbs, err := f.locations(ctx, "open", p, 0, 1<<62)
	if err != nil {
		return nil, err
	}
	return &FileReader{f: f, path: p, size: lbs.GetFileLength(), blocks: allBlocks(lbs), dead: map[string]bool{},
		why: map[string]string{}, served: map[uint64]string{}}, nil
}

// ServedBy is the ID of the datanode that served the most recent read of
// block through this reader, "" if none did. A map task reports it with
// its cache access, so that a remote read asks for the block to be cached
// on the datanode that has just read it from disk (seed 003).
func (r *FileReader) ServedBy(block uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served[block]
}

// Size is the file's length when it was opened.
func (r *FileReader) Size() int64 { return r.size }

// Path is the file's path.
func (r *FileReader) Path() string { return r.path }

// Close releases the reader's connection.
func (r *FileReader) Close() error {
	r.closed = true
	r.dropAhead()
	if r.cur != nil {
		r.cur.close()
		r.cur = nil
	}
	return nil
}

// Seek sets the position for the next Read.
func (r *FileReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.pos + offset
	case io.SeekEnd:
		abs = r.size + offset
	default:
		return 0, &PathError{Op: "seek", Path: r.path, Kind: fs.ErrInvalid, Msg: "invalid whence"}
	}
	if abs < 0 {
		return 0, &PathError{Op: "seek", Path: r.path, Kind: fs.ErrInvalid, Msg: "negative position"}
	}
	r.pos = abs
	return abs, nil
}

// Read reads from the current position.
func (r *FileReader) Read(p []byte) (int, error) {
	n := 0
	refetches := 0
	for n < len(p) {
		b, err := r.chunk(len(p)-n, &refetches, n > 0)
		if err != nil {
			if n > 0 && err != io.EOF {
				return n, nil // the error comes back on the next call
			}
			return n, err
		}
		if b == nil {
			break
		}
		n += copy(p[n:], b)
	}
	return n, nil
}

// WriteTo writes the rest of the file to w straight from the verified
// packets (no intermediate buffer); io.Copy uses it. With short-circuit
// reads on and w a file descriptor (`fs cat` to stdout), a block with a
// replica on this host is checked against its meta file and sent to w by
// the kernel from the replica's file (shortcircuit.go); any other block
// comes over TCP.
func (r *FileReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	refetches := 0
	out, isFile := w.(*os.File)
	defer r.dropAhead()
	for {
		if isFile && r.f.sc != nil && !r.closed && r.pos < r.size && r.betweenReads() {
			n, ok := r.streamShortCircuit(out)
			if n > 0 || ok {
				if r.cur != nil {
					r.cur.close()
					r.cur = nil
				}
				r.pos += n
				total += n
			}
			if ok {
				continue
			}
		}
		b, err := r.chunk(math.MaxInt, &refetches, false)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if b == nil {
			return total, nil
		}
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

// chunk returns up to max verified bytes at the current position and
// moves past them; they stay valid until the next call. It returns io.EOF
// at the end of the file; with stopOnFail, nil instead of failing over
// (Read returns what it has first).
func (r *FileReader) chunk(max int, refetches *int, stopOnFail bool) ([]byte, error) {
	if r.closed {
		return nil, &PathError{Op: "read", Path: r.path, Kind: fs.ErrClosed, Msg: "file already closed"}
	}
	for {
		if r.pos >= r.size {
			return nil, io.EOF
		}
		if r.cur == nil || r.cur.filePos() != r.pos {
			if r.cur != nil {
				r.cur.close()
				r.cur = nil
			}
			br, err := r.openAt(r.pos, -1, refetches)
			if err != nil {
				return nil, err
			}
			r.cur = br
		}
		b, err := r.cur.take(max)
		if len(b) > 0 {
			r.pos += int64(len(b))
			return b, nil
		}
		if err == io.EOF {
			r.cur.close()
			r.cur = nil
			continue
		}
		if err != nil {
			r.replicaFailed(r.cur, err)
			r.cur.close()
			r.cur = nil
			if stopOnFail {
				return nil, nil
			}
		}
	}
}

// ReadAt reads len(p) bytes at off; safe for concurrent use.
func (r *FileReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &PathError{Op: "read", Path: r.path, Kind: fs.ErrInvalid, Msg: "negative offset"}
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := len(p)
	if int64(want) > r.size-off {
		p = p[:r.size-off]
	}
	n := 0
	refetches := 0
	for n < len(p) {
		br, err := r.openAt(off+int64(n), int64(len(p)-n), &refetches)
		if err != nil {
			return n, err
		}
		for n < len(p) {
			m, err := br.read(p[n:])
			n += m
			if err == io.EOF {
				break
			}
			if err != nil {
				r.replicaFailed(br, err)
				break
			}
		}
		br.close()
	}
	if n < want {
		return n, io.EOF
	}
	return n, nil
}

// blockAt returns the block holding file offset off.
func (r *FileReader) blockAt(off int64) (*dfspb.LocatedBlock, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.blocks {
		if off >= b.GetOffset() && off < b.GetOffset()+b.GetBlock().GetNumBytes() {
			return b, nil
		}
	}
	return nil, &PathError{Op: "read", Path: r.path, Kind: ErrCorrupt, Msg: fmt.Sprintf("no block holds offset %d (file length %d)", off, r.size)}
}

// openAt opens a block reader at file offset off for up to length bytes
// of that block (length < 0: to the block's end) on the closest replica
// not yet failed, fetching the locations again when all have failed.
// refetches counts location refetches across one Read or ReadAt call, so
// replicas that open but then fail cannot loop forever.
func (r *FileReader) openAt(off, length int64, refetches *int) (*blockReader, error) {
	for {
		lb, err := r.blockAt(off)
		if err != nil {
			return nil, err
		}
		inBlock := off - lb.GetOffset()
		n := lb.GetBlock().GetNumBytes() - inBlock
		if length >= 0 && length < n {
			n = length
		}
		d := r.pickReplica(lb)
		if d == nil {
			if *refetches >= locationRefetches {
				return nil, r.noReplica(lb, r.lastErrs(lb))
			}
			*refetches++
			if err := r.refetch(*refetches); err != nil {
				return nil, err
			}
			continue
		}
		br, err := r.f.openBlock(lb, d, inBlock, n)
		if err == nil {
			r.mu.Lock()
			r.served[lb.GetBlock().GetBlockId()] = d.GetId()
			r.mu.Unlock()
			return br, nil
		}
		if tokenRefused(err) && *refetches < locationRefetches {
			// The token expired (a long-open reader) or the namenode
			// restarted with new block keys: the replica is fine, the
			// locations are stale. Ask again, as HDFS readers do.
			r.f.log.Info("block token refused; fetching locations and tokens again", "path", r.path,
				"block", lb.GetBlock().GetBlockId(), "node", nodeName(d), "err", err)
			*refetches++
			if err := r.refetch(*refetches); err != nil {
				return nil, err
			}
			continue
		}
		r.markDead(lb, d, err)
	}
}

func (r *FileReader) noReplica(lb *dfspb.LocatedBlock, errs []string) error {
	msg := fmt.Sprintf("block %d: no replica could be read", lb.GetBlock().GetBlockId())
	if len(lb.GetLocations()) == 0 {
		msg = fmt.Sprintf("block %d has no live replica (missing)", lb.GetBlock().GetBlockId())
	}
	if len(errs) > 0 {
		msg += " (" + strings.Join(errs, "; ") + ")"
	}
	return &PathError{Op: "read", Path: r.path, Kind: ErrCorrupt, Msg: msg}
}

// lastErrs names the replicas of lb that failed and why.
func (r *FileReader) lastErrs(lb *dfspb.LocatedBlock) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range lb.GetLocations() {
		if w, ok := r.why[dataAddr(d)]; ok {
			out = append(out, nodeName(d)+": "+w)
		}
	}
	return out
}

// pickReplica is the closest replica (the namenode sorts them) that has
// not failed for this reader.
func (r *FileReader) pickReplica(lb *dfspb.LocatedBlock) *dfspb.DatanodeInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return pickReplica(lb.GetLocations(), r.dead)
}

func pickReplica(locs []*dfspb.DatanodeInfo, dead map[string]bool) *dfspb.DatanodeInfo {
	for _, d := range locs {
		if !dead[dataAddr(d)] {
			return d
		}
	}
	return nil
}

// tokenRefused recognises a datanode refusing the block access token.
func tokenRefused(err error) bool {
	var se *datatransfer.StatusError
	return errors.As(err, &se) && se.Status == dfspb.OpStatus_OP_STATUS_ERROR_ACCESS_TOKEN
}

// refetch asks the namenode for the locations again, after a pause that
// grows with each round, and forgets which nodes failed.
func (r *FileReader) refetch(round int) error {
	time.Sleep(time.Duration(round) * 200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), r.f.cfg.RPCTimeout)
	defer cancel()
	lbs, err := r.f.locations(ctx, "read", r.path, 0, 1<<62)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.blocks = allBlocks(lbs)
	r.dead = map[string]bool{}
	r.mu.Unlock()
	return nil
}

// replicaFailed handles a read error in the middle of a block.
func (r *FileReader) replicaFailed(br *blockReader, err error) {
	r.f.log.Warn("replica read failed; trying another", "path", r.path, "block", br.lb.GetBlock().GetBlockId(), "node", nodeName(br.node), "err", err)
	r.markDead(br.lb, br.node, err)
}

// markDead skips d for the rest of this reader and reports a checksum
// mismatch to the namenode so the replica is never served again.
func (r *FileReader) markDead(lb *dfspb.LocatedBlock, d *dfspb.DatanodeInfo, err error) {
	r.mu.Lock()
	r.dead[dataAddr(d)] = true
	r.why[dataAddr(d)] = err.Error()
	r.mu.Unlock()
	var ce *datatransfer.ChecksumError
	if !errors.As(err, &ce) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.f.cfg.RPCTimeout)
	defer cancel()
	_, rerr := r.f.nn.ReportBadBlocks(ctx, &dfspb.ReportBadBlocksRequest{Blocks: []*dfspb.LocatedBlock{{
		Block: lb.GetBlock(), Offset: lb.GetOffset(), Locations: []*dfspb.DatanodeInfo{d},
	}}})
	if rerr != nil {
		r.f.log.Warn("reporting a corrupt replica failed", "block", lb.GetBlock().GetBlockId(), "node", nodeName(d), "err", rerr)
	}
}

func nodeName(d *dfspb.DatanodeInfo) string {
	if d.GetHostname() != "" && d.GetHostname() != d.GetIpAddr() {
		return d.GetHostname() + " (" + dataAddr(d) + ")"
	}
	return dataAddr(d)
}

// blockReader streams one range of one replica (READ_BLOCK), verifying
// every packet's checksums.
type blockReader struct {
	conn net.Conn
	pr   *datatransfer.PacketReader
	lb   *dfspb.LocatedBlock
	node *dfspb.DatanodeInfo
	io   time.Duration

	next int64 // block offset of the next byte read returns
	end  int64 // block offset where the requested range ends
	pkt  *datatransfer.Packet
	data []byte // unread part of pkt's data
	want int64  // block offset the next packet must start at
}

// readBufSize is small on purpose: packet bodies larger than the buffer
// go straight from the socket into the packet, one copy.
const readBufSize = 16 << 10

func (f *FileSystem) openBlock(lb *dfspb.LocatedBlock, d *dfspb.DatanodeInfo, off, n int64) (*blockReader, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.DialTimeout)
	defer cancel()
	conn, err := f.cfg.Dial(ctx, dataAddr(d))
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(f.cfg.IOTimeout))
	if err := datatransfer.WriteOp(conn, &dfspb.ReadBlockOp{
		Block: lb.GetBlock(), Offset: off, Length: n, Token: lb.GetToken(), ClientName: f.cfg.ClientName, VerifyChecksum: true,
	}); err != nil {
		conn.Close()
		return nil, err
	}
	rd := bufio.NewReaderSize(conn, readBufSize)
	resp, err := datatransfer.ReadResponse(rd)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := datatransfer.ResponseError(resp); err != nil {
		conn.Close()
		return nil, err
	}
	co := resp.GetChunkOffset()
	if co > off || co < 0 {
		conn.Close()
		return nil, fmt.Errorf("%w: read starts at chunk offset %d, after the requested %d", datatransfer.ErrProtocol, co, off)
	}
	pr := datatransfer.NewPacketReader(rd)
	pr.MaxDataLen = 4 << 20
	return &blockReader{conn: conn, pr: pr, lb: lb, node: d, io: f.cfg.IOTimeout, next: off, end: off + n, want: co}, nil
}

// filePos is the file offset of the next byte.
func (b *blockReader) filePos() int64 { return b.lb.GetOffset() + b.next }

// take returns up to max unread verified bytes of the current packet,
// reading the next packet when needed; io.EOF at the end of the range.
func (b *blockReader) take(max int) ([]byte, error) {
	if max <= 0 {
		return nil, nil
	}
	for b.next >= b.end || len(b.data) == 0 {
		if b.next >= b.end {
			return nil, io.EOF
		}
		if err := b.nextPacket(); err != nil {
			return nil, err
		}
	}
	n := int(min(int64(len(b.data)), int64(max), b.end-b.next))
	out := b.data[:n]
	b.data = b.data[n:]
	b.next += int64(n)
	return out, nil
}

// read copies verified bytes into p; io.EOF at the end of the range.
func (b *blockReader) read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.next < b.end {
		if len(b.data) == 0 {
			if err := b.nextPacket(); err != nil {
				return n, err
			}
			continue
		}
		m := copy(p[n:], b.data[:min(int64(len(b.data)), b.end-b.next)])
		b.data = b.data[m:]
		n += m
		b.next += int64(m)
	}
	if b.next >= b.end {
		return n, io.EOF
	}
	return n, nil
}

func (b *blockReader) nextPacket() error {
	if b.pkt != nil {
		b.pkt.Release()
		b.pkt = nil
	}
	_ = b.conn.SetReadDeadline(time.Now().Add(b.io))
	pkt, err := b.pr.Next()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	b.pkt = pkt
	h := pkt.Header
	if h.Heartbeat() {
		return nil
	}
	if h.Offset != b.want {
		return fmt.Errorf("%w: packet at block offset %d, expected %d", datatransfer.ErrProtocol, h.Offset, b.want)
	}
	if h.DataLen == 0 {
		if h.Last() {
			return fmt.Errorf("replica ended at block offset %d before the requested %d", b.want, b.end)
		}
		return nil
	}
	if err := pkt.Verify(); err != nil {
		return err
	}
	b.want += int64(h.DataLen)
	data := pkt.Data()
	if skip := b.next - h.Offset; skip > 0 {
		if skip >= int64(len(data)) {
			data = nil
		} else {
			data = data[skip:]
		}
	}
	b.data = data
	return nil
}

// detach hands the current packet, whose data take has just returned, to
// the caller, which must Release it; the next packet then gets a buffer of
// its own instead of reusing this one (CopyToFile writes it later).
func (b *blockReader) detach() *datatransfer.Packet {
	p := b.pkt
	b.pkt = nil
	return p
}

func (b *blockReader) close() {
	if b.pkt != nil {
		b.pkt.Release()
		b.pkt = nil
	}
	b.data = nil
	b.conn.Close()
}
