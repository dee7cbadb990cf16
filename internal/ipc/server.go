package ipc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
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
	// with grpc.NumStreamWorkers.
	Workers int
	// MaxInFlight bounds the calls of one connection being handled at
	// once (default 4096): beyond it the server stops reading that
	// connection until one finishes, so one client cannot pile up
	// unbounded goroutines and buffers.
	MaxInFlight int
	// Logger gets refused connections; default discard.
	Logger *slog.Logger
}

// Server serves unary gRPC services over this transport. It implements
// grpc.ServiceRegistrar, so generated Register...Server functions work.
type Server struct {
	opts    ServerOptions
	methods map[string]*method // by full method name, "/pkg.Service/Method"
	work    chan *serverCall
	quit    chan struct{} // closed by stop: idle workers exit
	startMu sync.Once

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
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, methods: map[string]*method{}, work: make(chan *serverCall), quit: make(chan struct{}),
		lis: map[net.Listener]struct{}{}, conns: map[*serverConn]struct{}{}}
}

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
		return errors.New("ipc: server stopped")
	}
	s.lis[lis] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := lis.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			delete(s.lis, lis)
			s.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		s.serveConn(nc)
	}
}

// serveConn starts nc's reader, unless the server has stopped.
func (s *Server) serveConn(nc net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &peer.Peer{Addr: nc.RemoteAddr(), LocalAddr: nc.LocalAddr()}
	if st := tlsState(nc); st != nil {
		p.AuthInfo = credentials.TLSInfo{State: *st, CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}
	}
	c := &serverConn{s: s, nc: nc, ctx: peer.NewContext(ctx, p), cancel: cancel,
		inflight: make(chan struct{}, s.opts.MaxInFlight), mdCache: map[string]metadata.MD{}}
	c.w = newFrameWriter(nc, func(error) { nc.Close() })
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

// GracefulStop stops accepting, stops reading calls, waits for the calls
// being handled to be answered, and closes every connection.
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
			goAway := getBuf(5)
			*goAway = append(*goAway, 0, 0, 0, 1, kindGoAway)
			_ = c.w.send(goAway)
			_ = c.nc.SetReadDeadline(time.Now().Add(goAwayWait))
		} else {
			c.cancel()
			c.nc.Close()
		}
	}
	if graceful {
		s.conwg.Wait()
	}
}

// goAwayWait is how long a stopping server keeps reading a connection it
// told to go away.
const goAwayWait = 3 * time.Second

// serverConn is one client connection.
type serverConn struct {
	s        *Server
	nc       net.Conn
	ctx      context.Context // carries the peer; cancelled when the connection ends
	cancel   context.CancelFunc
	w        *frameWriter
	inflight chan struct{} // a slot per call being handled
	calls    sync.WaitGroup
	// mdCache maps a call's encoded metadata to its decoded form: a
	// client sends the same identity on every call. Only the reader
	// touches it. The MD values are shared between calls, which is safe
	// because gRPC's accessors copy before handing them out.
	mdCache map[string]metadata.MD
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
	defer func() {
		c.calls.Wait() // replies of calls in flight still go out
		c.cancel()
		c.nc.Close()
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
	_ = c.nc.SetReadDeadline(time.Time{})
	max := s.opts.MaxMessage + MaxHeader
	for {
		buf, err := readFrame(br, max)
		var big *oversizeError
		if errors.As(err, &big) {
			// Refuse the one call, as HDFS's "RPC data length exceeded",
			// and keep serving the connection.
			id, err := skipOversize(br, big)
			if err != nil {
				s.opts.Logger.Warn("ipc: closing connection", "peer", c.nc.RemoteAddr().String(), "error", err)
				return
			}
			c.reply(id, nil, status.Errorf(codes.ResourceExhausted, "ipc: call of %d bytes exceeds the server's limit of %d", big.n, big.max))
			continue
		}
		if err != nil {
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
		md, ok := c.mdCache[string(h.mdRaw)]
		if !ok {
			if md, err = decodeMD(h.mdRaw); err != nil {
				putBuf(buf)
				return
			}
			// At most 256 entries of at most 4 KiB: a client sending
			// new metadata on every call costs a decode per call, not
			// memory.
			if len(h.mdRaw) <= 4<<10 {
				if len(c.mdCache) >= 256 {
					clear(c.mdCache)
				}
				c.mdCache[string(h.mdRaw)] = md
			}
		}
		m := s.methods[string(h.method)]
		if m == nil {
			c.reply(h.id, nil, status.Errorf(codes.Unimplemented, "unknown method %s", h.method))
			putBuf(buf)
			continue
		}
		call := &serverCall{c: c, m: m, id: h.id, timeout: h.timeout, md: md, payload: h.payload, buf: buf}
		c.inflight <- struct{}{}
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
	defer func() {
		<-c.inflight
		c.calls.Done()
	}()
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
	if cctx != nil {
		cctx.release()
	}
	putBuf(call.buf)
	c.reply(call.id, resp, err)
}

// reply sends a call's answer: resp on success, else err's status.
func (c *serverConn) reply(id uint64, resp any, err error) {
	buf := getBuf(256)
	if err == nil {
		msg, ok := resp.(proto.Message)
		if !ok {
			err = status.Errorf(codes.Internal, "ipc: reply %T is not a protobuf message", resp)
		} else {
			b := appendReplyHeader(*buf, id, codes.OK, "")
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
		// As gRPC: an error that is not a status is Unknown.
		st := status.Convert(err)
		*buf = appendReplyHeader((*buf)[:0], id, st.Code(), st.Message())
	}
	finishFrame(*buf)
	_ = c.w.send(buf)
}
