package ipc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/connlimit"
)

// ServerOptions configure a Server. Zero values take the defaults named.
type ServerOptions struct {
	// Interceptor wraps every call as grpc.UnaryInterceptor does; the
	// generated handlers pass it the same grpc.UnaryServerInfo.
	Interceptor grpc.UnaryServerInterceptor
	// MaxMessage bounds a request payload; default DefaultMaxMessage.
	MaxMessage int
	// Workers handler goroutines are reused across calls (default 64); a
	// call arriving while all are busy gets a goroutine of its own, as
	// with grpc.NumStreamWorkers (MaxCalls bounds them all).
	Workers int
	// MaxInFlight bounds the calls of one connection being handled or
	// whose replies are not yet written (default 4096): beyond it the
	// server stops reading that connection until a reply has gone out,
	// so a client that sends calls and does not read its replies gets
	// backpressure (as from Hadoop IPC's responder or HTTP/2 flow
	// control) rather than piling up goroutines and reply buffers.
	MaxInFlight int
	// MaxCalls bounds the calls being handled at once across all
	// connections (default DefaultMaxCalls), as Hadoop IPC's handler
	// count plus its call queue (ipc.server.handler.queue.size) do; with
	// MaxInFlight alone, N connections could run N x MaxInFlight handler
	// goroutines. A call beyond it waits, unread: its connection's
	// reader stops until a handler returns (see acquireCall for why it
	// waits rather than being refused). A call's slot is given back when
	// its handler returns, before its reply is written, so a client that
	// does not read its replies holds none (its replies are bounded by
	// MaxInFlight instead).
	MaxCalls int
	// IdleTimeout: a connection with no call in flight and no frame
	// received for between this and 1.5 times this (default 2 minutes)
	// is told to go away and closed once the client has closed its side,
	// as Hadoop IPC's ipc.client.connection.maxidletime; the client
	// dials again on its next call.
	IdleTimeout time.Duration
	// Logger gets refused connections; default discard.
	Logger *slog.Logger
	// ReplyState, when set, is the server's state id (a namenode's
	// applied edit), sent with the reply of every call whose metadata
	// has StateKey; read after the handler returned.
	ReplyState func() uint64

	// Tests shorten these; zero: the constants of the same names.
	writeTimeout, goAwayWait, stopGrace time.Duration
}

// Server serves unary gRPC services over this transport. It implements
// grpc.ServiceRegistrar, so generated Register...Server functions work.
type Server struct {
	opts    ServerOptions
	methods map[string]*method // by full method name, "/pkg.Service/Method"
	work    chan *serverCall
	// handling holds a token per call being handled, MaxCalls at most: a
	// buffered channel rather than a counter and a condition, because a
	// reader waiting for a slot must also give up when its connection
	// breaks, and Go queues a channel's waiting senders in order, so the
	// readers of many connections get slots in turn.
	handling chan struct{}
	quit     chan struct{} // closed by stop: idle workers exit
	startMu  sync.Once

	mu     sync.Mutex // guards the fields below
	lis    map[net.Listener]struct{}
	conns  map[*serverConn]struct{}
	closed bool

	conwg sync.WaitGroup // connection readers
}

type method struct {
	full    string
	srv     any
	handler grpc.MethodHandler
}

var _ grpc.ServiceRegistrar = (*Server)(nil)

// NewServer returns a server with no services.
func NewServer(opts ServerOptions) *Server {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.Workers <= 0 {
		opts.Workers = 64
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 4096
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = DefaultMaxCalls
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 2 * time.Minute
	}
	if opts.writeTimeout <= 0 {
		opts.writeTimeout = WriteTimeout
	}
	if opts.goAwayWait <= 0 {
		opts.goAwayWait = goAwayWait
	}
	if opts.stopGrace <= 0 {
		opts.stopGrace = stopGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, methods: map[string]*method{}, work: make(chan *serverCall), quit: make(chan struct{}),
		handling: make(chan struct{}, opts.MaxCalls),
		lis:      map[net.Listener]struct{}{}, conns: map[*serverConn]struct{}{}}
}

// DefaultMaxCalls is the server-wide bound on calls being handled when
// ServerOptions.MaxCalls is zero: about Hadoop IPC's default (10 handlers
// and a queue of 100 calls per handler, 1,010). The namenode's calls wait
// on its locks and the journal's group commit, not on each other, and
// `smarth bench nn` at 64 threads has at most 64 in flight; 1024 leaves
// room for bursts from many clients while bounding handler goroutines
// (a few KiB of stack each, more for a grown one) to a few MiB.
const DefaultMaxCalls = 1024

// RegisterService registers desc's unary methods with impl. Streaming
// methods are not carried: calling one fails with Unimplemented.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	if impl != nil && desc.HandlerType != nil {
		ht := reflect.TypeOf(desc.HandlerType).Elem()
		if st := reflect.TypeOf(impl); !st.Implements(ht) {
			panic(fmt.Sprintf("ipc: RegisterService found the handler of type %v that does not satisfy %v", st, ht))
		}
	}
	for i := range desc.Methods {
		m := &desc.Methods[i]
		full := "/" + desc.ServiceName + "/" + m.MethodName
		if _, dup := s.methods[full]; dup {
			panic("ipc: duplicate method " + full)
		}
		s.methods[full] = &method{full: full, srv: impl, handler: m.Handler}
	}
}

// ErrServerStopped is Serve's answer when the server was stopped before
// it began serving (a daemon closed right after it started), as gRPC's
// Serve answers grpc.ErrServerStopped.
var ErrServerStopped = errors.New("ipc: server stopped")

// Serve accepts connections on lis until it is closed or the server stops.
// Each connection must start with Preface.
func (s *Server) Serve(lis net.Listener) error {
	s.startMu.Do(func() {
		for range s.opts.Workers {
			go s.worker()
		}
	})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		lis.Close()
		return ErrServerStopped
	}
	s.lis[lis] = struct{}{}
	s.mu.Unlock()
	var pause time.Duration
	for {
		nc, err := lis.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			if !closed && isTemporary(err) {
				s.mu.Unlock()
				pause = acceptBackoff(pause)
				s.opts.Logger.Warn("ipc: accept failed; retrying", "error", err, "retry_in", pause)
				time.Sleep(pause)
				continue
			}
			delete(s.lis, lis)
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		pause = 0
		s.serveConn(nc)
	}
}

// isTemporary: an accept error worth retrying, such as EMFILE or ENFILE
// when too many clients hold descriptors (grpc.Server and http.Server
// retry the same errors).
func isTemporary(err error) bool { return connlimit.Temporary(err) }

// acceptBackoff is the pause after a failed accept: 5 ms, doubling to
// at most 1 s, as http.Server's.
func acceptBackoff(last time.Duration) time.Duration { return connlimit.AcceptBackoff(last) }

// serveConn starts nc's reader, unless the server has stopped.
func (s *Server) serveConn(nc net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &peer.Peer{Addr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr()}
	if st := tlsState(nc); st != nil {
		p.AuthInfo = credentials.TLSInfo{State: *st, CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}
	}
	c := &serverConn{s: s, nc: nc, ctx: peer.NewContext(ctx, p), cancel: cancel,
		inflight: make(chan struct{}, s.opts.MaxInFlight), done: make(chan struct{})}
	c.w = newFrameWriter(nc, s.opts.writeTimeout, func(error) { c.close() })
	c.w.onReplies = func(n int) {
		for range n {
			<-c.inflight
		}
	}
	// Made stopped, started once c is complete: the check may run at once.
	c.idle = time.AfterFunc(time.Duration(1<<63-1), c.idleCheck)
	c.idle.Stop()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		cancel()
		return
	}
	s.conns[c] = struct{}{}
	s.conwg.Add(1)
	s.mu.Unlock()
	c.idle.Reset(s.opts.IdleTimeout / 2)
	go c.read()
}

// tlsState is the TLS state of a connection the mux terminated, or a
// *tls.Conn's.
func tlsState(nc net.Conn) *tls.ConnectionState {
	switch c := nc.(type) {
	case *sniffedConn:
		return c.tls
	case *tls.Conn:
		st := c.ConnectionState()
		return &st
	}
	return nil
}

// GracefulStop stops accepting, tells every connection to go away, waits
// for the calls being handled to be answered, and closes every connection.
// A connection still open goAwayWait+stopGrace after (a client that does
// not read its replies, or a handler that does not return) is closed, its
// calls' contexts cancelled, so the stop ends.
func (s *Server) GracefulStop() { s.stop(true) }

// Stop closes every listener and connection at once; calls being handled
// see their contexts cancelled and their replies are dropped.
func (s *Server) Stop() { s.stop(false) }

func (s *Server) stop(graceful bool) {
	s.mu.Lock()
	if !s.closed {
		close(s.quit)
	}
	s.closed = true
	for l := range s.lis {
		l.Close()
	}
	conns := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		if graceful {
			// Tell the client to go away; it closes its side after its
			// last call, the reader sees the end, waits for the calls,
			// then closes. A client that does not close is cut off.
			// Sent from its own goroutine: the one writing may wait
			// for a client that does not read.
			go c.goAway()
		} else {
			c.close()
		}
	}
	if !graceful {
		return
	}
	done := make(chan struct{})
	go func() { s.conwg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(s.opts.goAwayWait + s.opts.stopGrace):
	}
	s.mu.Lock()
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	<-done
}

// goAwayWait is how long a server keeps reading a connection it told to
// go away; stopGrace how much longer GracefulStop waits for its replies.
const (
	goAwayWait = 3 * time.Second
	stopGrace  = 5 * time.Second
)

// serverConn is one client connection.
type serverConn struct {
	s   *Server
	nc  net.Conn
	ctx context.Context // carries the peer; cancelled when the connection breaks
	// cancel ends ctx, and so every call's context: when the connection
	// breaks or the client closes it without being asked to go away
	// (gRPC cancels a closed transport's streams). After a go-away the
	// calls in flight run to their replies.
	cancel    context.CancelFunc
	w         *frameWriter
	inflight  chan struct{} // a slot per call being handled or whose reply is unwritten
	calls     sync.WaitGroup
	done      chan struct{} // closed by close
	closeOnce sync.Once

	frames    atomic.Uint64 // frames read, for the idle check
	quiet     int           // idle checks in a row that saw nothing; idleCheck's
	seen      uint64        // frames at the last idle check; idleCheck's
	idle      *time.Timer
	goingAway atomic.Bool
	dlMu      sync.Mutex // orders read deadline changes
	goAwayAt  time.Time  // the read deadline after a go-away; guarded by dlMu

	// mdCache holds recently seen encoded metadata and its decoded form:
	// a client sends the same identity on every call. At most
	// mdCacheEntries entries whose encoding is at most mdCacheMax bytes
	// and which passed decoding and validation: the raw key and the
	// decoded strings are at most about 2 x 8 x 512 B = 8 KiB per
	// connection (plus map headers and the pair lists; mdPairs holds one
	// call's pairs more, bounded by MaxHeader). Only the reader touches
	// it. The MD values are shared between calls, which is safe because
	// gRPC's accessors copy before handing them out.
	mdCache [mdCacheEntries]mdEntry
	mdNext  int
	mdPairs []pair // the reader's scratch for decoding a call's pairs
}

type mdEntry struct {
	raw   string
	md    metadata.MD
	pairs []pair // md's pairs in order, for reuse by calls that miss
}

const (
	mdCacheEntries = 8
	mdCacheMax     = 512
)

// metadata decodes raw, from the cache when it was seen lately. A call
// that misses (an at-most-once call: the client's identity and the call's
// own ids) still takes the strings of pairs the cache holds rather than
// copying them, and is not cached itself when only some of its pairs were
// new: those are a call's ids, which never come back, and caching them
// would push the identity out.
func (c *serverConn) metadata(raw []byte) (metadata.MD, error) {
	for i := range c.mdCache {
		if e := &c.mdCache[i]; e.md != nil && e.raw == string(raw) {
			return e.md, nil
		}
	}
	md, pairs, fresh, err := decodeMDReusing(raw, c.knownPair, c.mdPairs)
	c.mdPairs = pairs
	if err != nil {
		return nil, err
	}
	if len(raw) <= mdCacheMax && (fresh == 0 || fresh == len(pairs)) {
		c.mdCache[c.mdNext] = mdEntry{raw: string(raw), md: md, pairs: slices.Clone(pairs)}
		c.mdNext = (c.mdNext + 1) % mdCacheEntries
	}
	return md, nil
}

// knownPair finds the pair k, v among the cached entries' pairs.
func (c *serverConn) knownPair(k, v []byte) (pair, bool) {
	for i := range c.mdCache {
		for _, p := range c.mdCache[i].pairs {
			if p.k == string(k) && p.v == string(v) {
				return p, true
			}
		}
	}
	return pair{}, false
}

// close breaks the connection: calls' contexts are cancelled, replies
// not yet written are dropped, a reader waiting for a slot gives up.
func (c *serverConn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.cancel()
		c.nc.Close()
		if c.idle != nil {
			c.idle.Stop()
		}
	})
}

// goAway tells the client to send nothing more here, and gives it
// goAwayWait to close its side.
func (c *serverConn) goAway() {
	if !c.goingAway.CompareAndSwap(false, true) {
		return
	}
	c.dlMu.Lock()
	c.goAwayAt = time.Now().Add(c.s.opts.goAwayWait)
	_ = c.nc.SetReadDeadline(c.goAwayAt)
	c.dlMu.Unlock()
	f := getBuf(5)
	*f = append(*f, 0, 0, 0, 1, kindGoAway)
	_ = c.w.send(f)
}

// idleCheck runs every IdleTimeout/2: two checks in a row that saw no
// frame arrive and no call in flight send the connection away.
func (c *serverConn) idleCheck() {
	select {
	case <-c.done:
		return
	default:
	}
	n := c.frames.Load()
	if len(c.inflight) == 0 && n == c.seen {
		c.quiet++
	} else {
		c.quiet = 0
	}
	c.seen = n
	if c.quiet >= 2 {
		c.goAway()
		return
	}
	c.idle.Reset(c.s.opts.IdleTimeout / 2)
}

// acquire takes an in-flight slot, waiting while MaxInFlight calls are
// unanswered; false when the connection broke meanwhile.
func (c *serverConn) acquire() bool {
	select {
	case c.inflight <- struct{}{}:
		return true
	case <-c.done:
		return false
	}
}

// acquireCall takes one of the server's MaxCalls slots for a call about
// to be handled, waiting while all are taken; false when the connection
// broke meanwhile. While it waits the connection is not read: the calls
// behind this one stay in the socket buffers, and TCP pushes back on the
// client, as Hadoop IPC's reader blocks on a full call queue. Refusing
// the call instead (ResourceExhausted, Hadoop's "server too busy" with
// ipc.backoff.enable) would fail a burst of calls that a moment's wait
// would have served: the namenode's handlers are short, so a full server
// frees slots within milliseconds, and our clients do not retry
// ResourceExhausted. A caller's deadline still holds while it waits (the
// client enforces it).
func (c *serverConn) acquireCall() bool {
	select {
	case c.s.handling <- struct{}{}:
		return true
	default:
	}
	select {
	case c.s.handling <- struct{}{}:
		return true
	case <-c.done:
		return false
	}
}

// readFrame reads the next frame. It waits as long as it takes for a
// frame to begin (idleness is idleCheck's business), but once one has
// begun, its rest must arrive within WriteTimeout: a peer cannot hold
// the reader with half a frame.
func (c *serverConn) readFrame(br *bufio.Reader, max int) (*[]byte, error) {
	if _, err := br.Peek(1); err != nil {
		return nil, err
	}
	whole := false
	if br.Buffered() >= 4 { // Peek would wait for the rest of the length
		h, _ := br.Peek(4)
		whole = br.Buffered()-4 >= int(binary.BigEndian.Uint32(h))
	}
	if whole {
		return readFrame(br, max)
	}
	c.dlMu.Lock()
	dl := time.Now().Add(c.s.opts.writeTimeout)
	if !c.goAwayAt.IsZero() && c.goAwayAt.Before(dl) {
		dl = c.goAwayAt
	}
	_ = c.nc.SetReadDeadline(dl)
	c.dlMu.Unlock()
	b, err := readFrame(br, max)
	c.dlMu.Lock()
	_ = c.nc.SetReadDeadline(c.goAwayAt) // zero: none
	c.dlMu.Unlock()
	return b, err
}

// serverCall is one call on its way to a handler.
type serverCall struct {
	c       *serverConn
	m       *method
	id      uint64
	timeout time.Duration
	md      metadata.MD
	payload []byte
	buf     *[]byte
}

func (c *serverConn) read() {
	s := c.s
	var readErr error
	defer func() {
		// After a go-away the client closes its side when it has sent
		// its last call: those calls still run and are answered. Any
		// other end (a client gone, a broken or malformed stream) ends
		// the calls' contexts at once.
		if !c.goingAway.Load() || (readErr != io.EOF && !isTimeout(readErr)) {
			c.close()
		}
		c.calls.Wait()
		c.close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.conwg.Done()
	}()
	br := bufio.NewReaderSize(c.nc, 32<<10)
	var pre [len(Preface)]byte
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(br, pre[:]); err != nil || string(pre[:]) != Preface {
		s.opts.Logger.Warn("ipc: connection refused: no valid preface", "peer", c.nc.RemoteAddr().String(), "error", err)
		return
	}
	c.dlMu.Lock()
	_ = c.nc.SetReadDeadline(c.goAwayAt)
	c.dlMu.Unlock()
	max := s.opts.MaxMessage + MaxHeader
	for {
		buf, err := c.readFrame(br, max)
		c.frames.Add(1)
		var big *oversizeError
		if errors.As(err, &big) {
			// Refuse the one call, as HDFS's "RPC data length exceeded",
			// and keep serving the connection.
			id, err := skipOversize(br, big)
			if err != nil {
				readErr = err
				s.opts.Logger.Warn("ipc: closing connection", "peer", c.nc.RemoteAddr().String(), "error", err)
				return
			}
			if !c.acquire() {
				return
			}
			c.reply(id, nil, nil, status.Errorf(codes.ResourceExhausted, "ipc: call of %d bytes exceeds the server's limit of %d", big.n, big.max))
			continue
		}
		if err != nil {
			readErr = err
			if err != io.EOF && !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
				s.opts.Logger.Warn("ipc: closing connection", "peer", c.nc.RemoteAddr().String(), "error", err)
			}
			return
		}
		h, err := decodeCall(*buf)
		if err != nil {
			s.opts.Logger.Warn("ipc: closing connection: malformed call", "peer", c.nc.RemoteAddr().String(), "error", err)
			putBuf(buf)
			return
		}
		// Every reply holds a slot until written, refusals too.
		if !c.acquire() {
			putBuf(buf)
			return
		}
		md, err := c.metadata(h.mdRaw)
		if err != nil {
			c.reply(h.id, nil, nil, err)
			putBuf(buf)
			continue
		}
		m := s.methods[string(h.method)]
		if m == nil {
			c.reply(h.id, nil, nil, status.Errorf(codes.Unimplemented, "unknown method %s", h.method))
			putBuf(buf)
			continue
		}
		if !c.acquireCall() {
			putBuf(buf)
			return
		}
		call := &serverCall{c: c, m: m, id: h.id, timeout: h.timeout, md: md, payload: h.payload, buf: buf}
		c.calls.Add(1)
		select {
		case s.work <- call:
		default:
			go call.run()
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (s *Server) worker() {
	for {
		select {
		case call := <-s.work:
			call.run()
		case <-s.quit:
			return
		}
	}
}

func (call *serverCall) run() {
	c := call.c
	defer c.calls.Done() // the slot is freed when the reply is written
	ctx := metadata.NewIncomingContext(c.ctx, call.md)
	var cctx *callCtx
	if call.timeout > 0 {
		cctx = newCallCtx(ctx, call.timeout)
		ctx = cctx
	}
	dec := func(v any) error {
		msg, ok := v.(proto.Message)
		if !ok {
			return status.Errorf(codes.Internal, "ipc: %T is not a protobuf message", v)
		}
		err := proto.Unmarshal(call.payload, msg)
		// Unmarshal copies what it keeps: the frame can be reused now,
		// not only after a handler that may wait on a group commit.
		putBuf(call.buf)
		call.buf, call.payload = nil, nil
		if err != nil {
			return status.Errorf(codes.Internal, "ipc: cannot decode %s request: %v", call.m.full, err)
		}
		return nil
	}
	resp, err := call.m.handler(call.m.srv, ctx, dec, c.s.opts.Interceptor)
	<-c.s.handling // before the reply: writing it may wait on the client
	if cctx != nil {
		cctx.release()
	}
	putBuf(call.buf)
	var st *uint64
	if f := c.s.opts.ReplyState; f != nil && len(call.md[StateKey]) > 0 {
		v := f()
		st = &v
	}
	c.reply(call.id, st, resp, err)
}

// reply sends a call's answer: resp on success, else err's status; with
// the state id st when non-nil.
func (c *serverConn) reply(id uint64, st *uint64, resp any, err error) {
	buf := getBuf(256)
	if err == nil {
		msg, ok := resp.(proto.Message)
		if !ok {
			err = status.Errorf(codes.Internal, "ipc: reply %T is not a protobuf message", resp)
		} else {
			b := appendReplyHeader(*buf, id, st, codes.OK, "")
			if b, err = (proto.MarshalOptions{}).MarshalAppend(b, msg); err == nil {
				*buf = b
				if len(b)-4 > c.s.opts.MaxMessage+MaxHeader {
					err = status.Errorf(codes.ResourceExhausted, "ipc: reply of %d bytes exceeds the limit of %d", len(b), c.s.opts.MaxMessage)
				}
			} else {
				err = status.Errorf(codes.Internal, "ipc: cannot encode reply: %v", err)
			}
		}
	}
	if err != nil {
		// As gRPC's server: an error that is not a status is Unknown,
		// but a context's is DeadlineExceeded or Canceled (a handler
		// that gave up at the call's deadline: an unknown outcome to the
		// client, which may try elsewhere, not the server's answer).
		s, ok := status.FromError(err)
		if !ok {
			s = status.FromContextError(err)
		}
		*buf = appendReplyHeader((*buf)[:0], id, st, s.Code(), s.Message())
	}
	finishFrame(*buf)
	_ = c.w.send(buf)
}
