package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// Short-circuit local reads (HDFS's BlockReaderLocal, on with
// dfs.client.read.shortcircuit and dfs.domain.socket.path). For a replica
// on this host the client asks its datanode, over the datanode's unix
// socket (Config.DomainSocketPath), for read-only descriptors of the
// replica's block and meta files, presenting the block's read token as it
// would on the data port. It then checks the block against the meta
// file's CRC32Cs and has the kernel copy it (FileReader.CopyToFile):
// through the data port the bytes were copied three times (the datanode's
// sendfile into the socket, the client's read out of it, its write into
// the file), through the descriptors once, as cp copies them.
//
// Anything that goes wrong short of a checksum mismatch (no socket, a
// refusal, a hang-up, a short replica) sends that block over TCP instead,
// logged once per socket: the user sees an error only if TCP fails too. A
// socket that failed is left alone for shortCircuitRetry, as HDFS's
// DomainSocketFactory does. A mismatch is a corrupt replica, reported to
// the namenode as the TCP reader reports one, and the block is read from
// another replica.

// shortCircuitRetry is how long a datanode socket that failed is not
// tried again (HDFS's dfs.domain.socket.disable.interval.seconds, 600).
const shortCircuitRetry = 10 * time.Minute

// shortCircuit is a FileSystem's short-circuit state; nil when off.
type shortCircuit struct {
	template string // Config.DomainSocketPath
	log      *slog.Logger
	addrs    func() []net.IP // this host's interface addresses, looked up once

	mu      sync.Mutex
	resting map[string]time.Time // guarded by mu: socket path -> when it may be tried again
	logged  map[string]bool      // guarded by mu: socket paths whose first fallback was logged

	blocks    atomic.Int64 // block reads done through descriptors
	fallbacks atomic.Int64 // block reads that tried and went over TCP
}

func newShortCircuit(cfg Config) *shortCircuit {
	if cfg.DomainSocketPath == "" || cfg.NoShortCircuitReads || !canShortCircuit {
		return nil
	}
	return &shortCircuit{template: cfg.DomainSocketPath, log: cfg.Logger, addrs: sync.OnceValue(interfaceAddrs),
		resting: map[string]time.Time{}, logged: map[string]bool{}}
}

// ShortCircuitStats counts this client's block reads through local
// replicas' descriptors, and those that tried and fell back to TCP.
func (f *FileSystem) ShortCircuitStats() (blocks, fallbacks int64) {
	if f.sc == nil {
		return 0, 0
	}
	return f.sc.blocks.Load(), f.sc.fallbacks.Load()
}

// socketFor is datanode d's socket when d is on this host and its socket
// is not resting after a failure, else "".
func (s *shortCircuit) socketFor(d *dfspb.DatanodeInfo, now time.Time) string {
	if !isLocalIP(d.GetIpAddr(), s.addrs()) {
		return ""
	}
	path := datatransfer.SocketPath(s.template, int(d.GetDataPort()))
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.resting[path]; ok {
		if now.Before(until) {
			return ""
		}
		delete(s.resting, path)
	}
	return path
}

// fellBack records a block read that goes over TCP after trying path:
// logged the first time for the socket (then at debug level), and a
// socket that failed, rather than refused this one block, rests.
func (s *shortCircuit) fellBack(path string, lb *dfspb.LocatedBlock, err error, rest bool) {
	s.fallbacks.Add(1)
	s.mu.Lock()
	first := !s.logged[path]
	s.logged[path] = true
	if rest {
		s.resting[path] = time.Now().Add(shortCircuitRetry)
	}
	s.mu.Unlock()
	level := slog.LevelDebug
	if first {
		level = slog.LevelInfo
	}
	msg := "short-circuit local read refused; reading the block over TCP"
	if rest {
		msg = fmt.Sprintf("short-circuit local reads through this socket failed; reading over TCP (trying it again in %v)", shortCircuitRetry)
	}
	s.log.Log(context.Background(), level, msg, "socket", path, "block", lb.GetBlock().GetBlockId(), "err", err)
}

// isLocalIP reports whether ip is an address of this host (HDFS's
// DFSUtilClient.isLocalAddress): loopback, or one of its interfaces'
// addresses (local).
func isLocalIP(ip string, local []net.IP) bool {
	a := net.ParseIP(ip)
	if a == nil {
		return false
	}
	if a.IsLoopback() {
		return true
	}
	for _, l := range local {
		if l.Equal(a) {
			return true
		}
	}
	return false
}

// interfaceAddrs are the addresses of this host's interfaces.
func interfaceAddrs() []net.IP {
	var out []net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, n.IP)
		}
	}
	return out
}

// localReplica is a replica's files as its datanode passed them:
// read-only descriptors of the block file and the meta file.
type localReplica struct {
	data, meta *os.File
	bpc        int // bytes per checksum, from the meta file's header
}

func (l *localReplica) close() {
	l.data.Close()
	l.meta.Close()
}

// openLocal asks the datanode serving the socket at path for lb's
// replica files. A refusal comes back as *datatransfer.StatusError.
func (f *FileSystem) openLocal(path string, lb *dfspb.LocatedBlock) (*localReplica, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.DialTimeout)
	defer cancel()
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("%s: not a unix socket connection", path)
	}
	_ = uc.SetDeadline(time.Now().Add(f.cfg.IOTimeout))
	if err := datatransfer.WriteShortCircuitOp(uc, &dfspb.ShortCircuitFdsOp{
		Block: lb.GetBlock(), Token: lb.GetToken(), ClientName: f.cfg.ClientName,
	}); err != nil {
		return nil, err
	}
	// Read unbuffered: the byte carrying the descriptors follows the
	// response, and must be read with its control message.
	resp, err := datatransfer.ReadResponse(uc)
	if err != nil {
		return nil, err
	}
	if err := datatransfer.ResponseError(resp); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("blk_%d_%d", lb.GetBlock().GetBlockId(), lb.GetBlock().GetGenerationStamp())
	files, err := datatransfer.ReceiveFDs(uc, name, name+".meta")
	if err != nil {
		return nil, err
	}
	lr := &localReplica{data: files[0], meta: files[1]}
	var hdr [datatransfer.MetaHeaderLen]byte
	if _, err := io.ReadFull(io.NewSectionReader(lr.meta, 0, int64(len(hdr))), hdr[:]); err != nil {
		lr.close()
		return nil, fmt.Errorf("%s: reading the meta header: %w", name, err)
	}
	if lr.bpc, err = datatransfer.ParseMetaHeader(hdr[:]); err != nil {
		lr.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return lr, nil
}

// localBlock is the block holding a file position made ready for a
// short-circuit copy from that position to the block's end: a local
// replica's files, checked against their checksums. lr is nil when the
// block is to be read over TCP.
type localBlock struct {
	pos  int64
	lb   *dfspb.LocatedBlock
	d    *dfspb.DatanodeInfo
	path string
	lr   *localReplica
}

// prepareLocal readies the block holding pos for a short-circuit copy:
// the first local replica whose datanode grants its files and whose
// bytes match their checksums. A replica that does not match is reported
// to the namenode, as the TCP reader reports one, and the next local one
// is tried; any other failure leaves the block to TCP. It runs beside
// the copy of the block before (CopyToFile), so it touches only what
// r.mu guards.
func (r *FileReader) prepareLocal(pos int64) *localBlock {
	sc := r.f.sc
	lb, err := r.blockAt(pos)
	if err != nil {
		return &localBlock{pos: pos} // the TCP path says what is wrong
	}
	inBlock := pos - lb.GetOffset()
	n := lb.GetBlock().GetNumBytes() - inBlock
	for {
		d, path := r.localReplica(lb)
		if d == nil || n <= 0 {
			return &localBlock{pos: pos, lb: lb}
		}
		lr, err := r.f.openLocal(path, lb)
		if err != nil {
			// A refusal of this block (its token, the replica's state)
			// leaves the socket in use; a failed socket rests.
			var se *datatransfer.StatusError
			sc.fellBack(path, lb, err, !errors.As(err, &se))
			return &localBlock{pos: pos, lb: lb}
		}
		err = checkLocal(lr, inBlock, n)
		if err == nil {
			return &localBlock{pos: pos, lb: lb, d: d, path: path, lr: lr}
		}
		lr.close()
		var ce *datatransfer.ChecksumError
		if !errors.As(err, &ce) {
			sc.fellBack(path, lb, err, false)
			return &localBlock{pos: pos, lb: lb}
		}
		r.f.log.Warn("short-circuit read found a corrupt replica; trying another", "path", r.path,
			"block", lb.GetBlock().GetBlockId(), "node", nodeName(d), "err", err)
		r.markDead(lb, d, err)
	}
}

// ahead is the next block's preparation, running while the current
// block is copied.
type ahead struct {
	pos  int64
	done chan *localBlock
}

// copyShortCircuit copies the rest of the block holding r.pos into dst at
// dstOff from a checked local replica, when there is one; ok is false
// when the block must be read over TCP instead, and dst is then as it
// was.
func (r *FileReader) copyShortCircuit(dst *os.File, dstOff int64) (n int64, ok bool) {
	b := r.takeLocal()
	if b == nil {
		return 0, false
	}
	defer b.lr.close()
	inBlock := r.pos - b.lb.GetOffset()
	n, err := copyChecked(b.lr, inBlock, b.lb.GetBlock().GetNumBytes()-inBlock, dst, dstOff)
	if err != nil {
		// A local file failed part way: the TCP path writes the block
		// again from its start, or reports the destination's error.
		r.f.sc.fellBack(b.path, b.lb, err, false)
		return 0, false
	}
	r.servedLocal(b)
	return n, true
}

// streamShortCircuit writes the rest of the block holding r.pos to w from
// a checked local replica, when there is one (`fs cat`): the kernel sends
// the block file's pages to w (sendfile), so nothing is copied through
// this process. It returns the bytes written; ok is false when the rest
// of the block, after those bytes, must come over TCP: no local replica,
// or a send that failed (if w itself failed, the TCP path's first write
// says so).
func (r *FileReader) streamShortCircuit(w *os.File) (n int64, ok bool) {
	b := r.takeLocal()
	if b == nil {
		return 0, false
	}
	defer b.lr.close()
	inBlock := r.pos - b.lb.GetOffset()
	n, err := sendChecked(b.lr, inBlock, b.lb.GetBlock().GetNumBytes()-inBlock, w)
	if err != nil {
		r.f.sc.fellBack(b.path, b.lb, err, false)
		return n, false
	}
	r.servedLocal(b)
	return n, true
}

// takeLocal is the block holding r.pos made ready for a short-circuit
// read (the one prepared ahead, or prepared now), or nil when it is to
// be read over TCP. While the caller copies it, the next block is made
// ready (its replica's files requested and checked): on two cores the
// check costs no time beside the copy.
func (r *FileReader) takeLocal() *localBlock {
	var b *localBlock
	if a := r.ahead; a != nil && a.pos == r.pos {
		b = <-a.done
		r.ahead = nil
	} else {
		r.dropAhead()
		b = r.prepareLocal(r.pos)
	}
	if b.lr == nil {
		return nil
	}
	if next := b.lb.GetOffset() + b.lb.GetBlock().GetNumBytes(); next < r.size {
		a := &ahead{pos: next, done: make(chan *localBlock, 1)}
		r.ahead = a
		go func() { a.done <- r.prepareLocal(next) }()
	}
	return b
}

// servedLocal counts a block read through its local replica's files.
func (r *FileReader) servedLocal(b *localBlock) {
	r.f.sc.blocks.Add(1)
	r.mu.Lock()
	r.served[b.lb.GetBlock().GetBlockId()] = b.d.GetId()
	r.mu.Unlock()
}

// dropAhead waits for a next block's preparation nobody will use and
// gives its files back.
func (r *FileReader) dropAhead() {
	if a := r.ahead; a != nil {
		r.ahead = nil
		if b := <-a.done; b.lr != nil {
			b.lr.close()
		}
	}
}

// localReplica is the first replica of lb, in the namenode's order, that
// has not failed for this reader and whose datanode is on this host with
// a socket to ask, and that socket.
func (r *FileReader) localReplica(lb *dfspb.LocatedBlock) (*dfspb.DatanodeInfo, string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range lb.GetLocations() {
		if r.dead[dataAddr(d)] {
			continue
		}
		if path := r.f.sc.socketFor(d, now); path != "" {
			return d, path
		}
	}
	return nil, ""
}
