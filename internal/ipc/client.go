package ipc

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ClientOptions configure a Conn. Zero values take the defaults named.
type ClientOptions struct {
	// TLS, when set, wraps every connection in TLS verified against it
	// (ALPN is set to this transport's).
	TLS *tls.Config
	// Dial opens the TCP connection; default net.Dialer.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// MaxMessage bounds a reply payload; default DefaultMaxMessage.
	MaxMessage int
}

// Conn is a client of one server address, safe for concurrent use. It
// implements grpc.ClientConnInterface for unary methods, so generated
// clients (dfspb.NewClientProtocolClient(conn)) work unchanged. It
// connects on the first call and again on the first call after its
// connection broke; all calls share the one connection.
type Conn struct {
	addr string
	opts ClientOptions

	mu      sync.Mutex // guards the fields below
	cur     *clientConn
	dialing chan struct{} // closed when the dial in progress ends
	closed  bool
}

var _ grpc.ClientConnInterface = (*Conn)(nil)

// NewConn returns a Conn to addr; nothing is dialled until the first call.
func NewConn(addr string, opts ClientOptions) *Conn {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.Dial == nil {
		d := &net.Dialer{Timeout: 20 * time.Second, KeepAlive: 30 * time.Second}
		opts.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	return &Conn{addr: addr, opts: opts}
}

// Addr is the server address.
func (c *Conn) Addr() string { return c.addr }

// Close closes the connection; calls waiting on it fail with Canceled,
// later calls too.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		cur.fail(status.Error(codes.Canceled, "ipc: the client connection is closing"))
	}
	return nil
}

// Invoke makes a unary call with the outgoing metadata of ctx. Of the
// call options only grpc.Trailer is carried, for the server's state id.
func (c *Conn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	md, _ := metadata.FromOutgoingContext(ctx)
	return c.InvokeHeader(ctx, NewHeader(md), 0, method, args, reply, opts...)
}

// NewStream fails: only unary methods are carried.
func (c *Conn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "ipc: streaming calls are not supported")
}

// InvokeHeader makes a unary call with metadata h (ctx's outgoing
// metadata is not looked at). timeout, when positive, is the call's
// deadline if ctx has none: it is enforced by the connection's sweep
// (about a tenth of a second late at most) rather than by a timer per
// call, which would cost more than the rest of a small call's client work.
// A failure is a status error with gRPC's codes: Unavailable when the
// server cannot be reached or the connection broke, DeadlineExceeded or
// Canceled, else the server's.
func (c *Conn) InvokeHeader(ctx context.Context, h Header, timeout time.Duration, method string, args, reply any, opts ...grpc.CallOption) error {
	in, ok := args.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "ipc: %T is not a protobuf message", args)
	}
	out, ok := reply.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "ipc: %T is not a protobuf message", reply)
	}
	if h.err != nil {
		return h.err // metadata gRPC would refuse, refused as gRPC does
	}
	var expires time.Time // when the sweep fails the call; zero: ctx's deadline rules
	if dl, ok := ctx.Deadline(); ok {
		if timeout = time.Until(dl); timeout <= 0 {
			return status.Error(codes.DeadlineExceeded, "context deadline exceeded")
		}
	} else if timeout > 0 {
		expires = time.Now().Add(timeout)
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	pc := callPool.Get().(*pendingCall)
	pc.expires = expires
	var cc *clientConn
	var id uint64
	for attempt := 1; ; attempt++ {
		var err error
		if cc, err = c.conn(ctx, timeout); err != nil {
			callPool.Put(pc)
			return err
		}
		// A connection that broke or is going away before the call was
		// sent: nothing was sent, so the call goes on a new connection
		// (as gRPC retries a stream it never started), a few times.
		if id, err = cc.register(pc); err != nil && attempt < 3 {
			continue
		} else if err == errGoAway {
			callPool.Put(pc)
			return status.Errorf(codes.Unavailable, "connection error: ipc: %s keeps closing connections", c.addr)
		} else if err != nil {
			callPool.Put(pc)
			return err
		}
		buf := getBuf(256)
		b := appendCallHeader(*buf, id, timeout, method, h)
		b, err = proto.MarshalOptions{}.MarshalAppend(b, in)
		*buf = b
		if err == nil && len(b)-4 > c.opts.MaxMessage+MaxHeader {
			err = status.Errorf(codes.ResourceExhausted, "ipc: %s request of %d bytes exceeds the limit of %d", method, len(b), c.opts.MaxMessage)
		} else if err != nil {
			err = status.Errorf(codes.Internal, "ipc: cannot encode %s request: %v", method, err)
		}
		if err != nil {
			putBuf(buf)
			cc.abandon(id, pc)
			return err
		}
		finishFrame(b)
		// A failed write fails every pending call, this one too; a frame
		// refused because the server asked us to go away was never sent.
		if err := cc.w.send(buf); err == errGoAway {
			cc.withdraw(id, pc)
			if attempt < 3 {
				continue
			}
			callPool.Put(pc)
			return status.Errorf(codes.Unavailable, "connection error: ipc: %s keeps closing connections", c.addr)
		}
		break
	}

	select {
	case r := <-pc.ch:
		callPool.Put(pc)
		if r.hasState {
			setStateTrailer(opts, r.state)
		}
		return r.finish(method, out)
	case <-ctx.Done():
		cc.abandon(id, pc)
		return status.FromContextError(ctx.Err()).Err()
	}
}

// conn returns the live connection, dialling one if there is none.
func (c *Conn) conn(ctx context.Context, timeout time.Duration) (*clientConn, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return nil, status.Error(codes.Canceled, "ipc: the client connection is closing")
		}
		if cur := c.cur; cur != nil && !cur.broken.Load() {
			c.mu.Unlock()
			return cur, nil
		}
		if ch := c.dialing; ch != nil {
			c.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			c.mu.Lock()
			continue
		}
		ch := make(chan struct{})
		c.dialing = ch
		c.mu.Unlock()
		cc, err := c.dial(ctx, timeout)
		c.mu.Lock()
		c.dialing = nil
		close(ch)
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		if c.closed {
			c.mu.Unlock()
			cc.fail(status.Error(codes.Canceled, "ipc: the client connection is closing"))
			return nil, status.Error(codes.Canceled, "ipc: the client connection is closing")
		}
		c.cur = cc
		c.mu.Unlock()
		return cc, nil
	}
}

// dial connects, says the preface and starts the reader. Its errors read
// as gRPC's ("Error while dialing ...: connection refused"): callers tell
// a namenode that is down from one that refused a call by them.
func (c *Conn) dial(ctx context.Context, timeout time.Duration) (*clientConn, error) {
	if _, ok := ctx.Deadline(); !ok && timeout > 0 {
		// The call's timeout bounds the connect and the TLS handshake
		// too: a server that accepts and never answers must not hold
		// the caller beyond it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	nc, err := c.opts.Dial(ctx, c.addr)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "connection error: ipc: Error while dialing %s: %v", c.addr, err)
	}
	if c.opts.TLS != nil {
		cfg := c.opts.TLS.Clone()
		cfg.NextProtos = []string{ALPN}
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(c.addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, status.Errorf(codes.Unavailable, "connection error: ipc: TLS handshake with %s: %v", c.addr, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != ALPN {
			tc.Close()
			return nil, status.Errorf(codes.Unavailable, "connection error: ipc: %s does not speak %s over TLS (negotiated %q)", c.addr, ALPN, p)
		}
		nc = tc
	}
	cc := &clientConn{addr: c.addr, nc: nc, pending: map[uint64]*pendingCall{}, maxReply: c.opts.MaxMessage + MaxHeader}
	cc.w = newFrameWriter(nc, WriteTimeout, func(err error) {
		if isTimeout(err) {
			err = fmt.Errorf("the server read nothing for %v: %w", WriteTimeout, err)
		}
		cc.fail(status.Errorf(codes.Unavailable, "connection error: ipc: writing to %s: %v", c.addr, err))
	})
	cc.w.async = true // a caller never waits for the socket (writer.go)
	pre := getBuf(len(Preface))
	*pre = append(*pre, Preface...)
	if err := cc.w.send(pre); err != nil {
		return nil, status.Errorf(codes.Unavailable, "connection error: ipc: writing to %s: %v", c.addr, err)
	}
	go cc.read()
	return cc, nil
}

// clientConn is one connection and its calls waiting for replies.
type clientConn struct {
	addr     string
	nc       net.Conn
	w        *frameWriter
	maxReply int
	broken   atomic.Bool

	mu        sync.Mutex // guards the fields below
	pending   map[uint64]*pendingCall
	nextID    uint64
	err       error // why the connection broke; set once
	sweep     bool  // a sweep is scheduled
	goingAway bool  // the server said go away: no new calls here
}

// sweepEvery is how often calls with a timeout but no context deadline
// are checked while any is pending.
const sweepEvery = 100 * time.Millisecond

// pendingCall waits for one reply. They are pooled: a call whose waiter
// gave up goes back to the pool only once no reply can still arrive on it.
type pendingCall struct {
	ch      chan result
	expires time.Time // zero: no sweep deadline
}

var callPool = sync.Pool{New: func() any { return &pendingCall{ch: make(chan result, 1)} }}

type result struct {
	err      error // connection failure
	state    uint64
	hasState bool // the reply carried the server's state id
	code     codes.Code
	msg      string
	payload  []byte
	buf      *[]byte
}

// setStateTrailer gives a caller that asked for the call's trailer
// (grpc.Trailer, as over gRPC) the server's state id under StateKey.
func setStateTrailer(opts []grpc.CallOption, state uint64) {
	for _, o := range opts {
		if t, ok := o.(grpc.TrailerCallOption); ok && t.TrailerAddr != nil {
			*t.TrailerAddr = metadata.MD{StateKey: {strconv.FormatUint(state, 10)}}
		}
	}
}

func (r result) finish(method string, out proto.Message) error {
	if r.err != nil {
		return r.err
	}
	defer putBuf(r.buf)
	if r.code != codes.OK {
		return status.Error(r.code, r.msg)
	}
	if err := proto.Unmarshal(r.payload, out); err != nil {
		return status.Errorf(codes.Internal, "ipc: cannot decode %s reply: %v", method, err)
	}
	return nil
}

func (cc *clientConn) register(pc *pendingCall) (uint64, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.goingAway {
		return 0, errGoAway
	}
	if cc.err != nil {
		return 0, cc.err
	}
	cc.nextID++
	cc.pending[cc.nextID] = pc
	if !pc.expires.IsZero() && !cc.sweep {
		cc.sweep = true
		time.AfterFunc(sweepEvery, cc.sweepExpired)
	}
	return cc.nextID, nil
}

// sweepExpired fails the calls past their timeout, and schedules itself
// again while calls with a timeout are pending.
func (cc *clientConn) sweepExpired() {
	now := time.Now()
	var expired []*pendingCall
	cc.mu.Lock()
	more := false
	for id, pc := range cc.pending {
		switch {
		case pc.expires.IsZero():
		case !now.Before(pc.expires):
			delete(cc.pending, id)
			expired = append(expired, pc)
		default:
			more = true
		}
	}
	cc.sweep = more && cc.err == nil
	if cc.sweep {
		time.AfterFunc(sweepEvery, cc.sweepExpired)
	}
	cc.mu.Unlock()
	for _, pc := range expired {
		pc.ch <- result{err: status.Error(codes.DeadlineExceeded, "context deadline exceeded")}
	}
}

// goAway: the server is stopping. New calls go to a new connection;
// calls already sent are still answered here; the write side closes
// after the frames already queued, which tells the server we are done.
func (cc *clientConn) goAway() {
	cc.mu.Lock()
	cc.goingAway = true
	cc.mu.Unlock()
	cc.broken.Store(true)
	cc.w.closeWrite()
}

// abandon forgets a call whose caller stopped waiting, and pools it.
func (cc *clientConn) abandon(id uint64, pc *pendingCall) {
	cc.withdraw(id, pc)
	callPool.Put(pc)
}

// withdraw removes call id from the pending calls. If someone else
// already took it (the reader with a reply, a failure, the sweep), a
// result is on its way: drain it, so pc is clean for reuse.
func (cc *clientConn) withdraw(id uint64, pc *pendingCall) {
	cc.mu.Lock()
	_, mine := cc.pending[id]
	delete(cc.pending, id)
	cc.mu.Unlock()
	if !mine {
		r := <-pc.ch
		putBuf(r.buf)
	}
}

// fail breaks the connection: every pending call and every later one on
// it fails with err; the next call dials anew.
func (cc *clientConn) fail(err error) {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.err = err
	cc.broken.Store(true)
	pending := cc.pending
	cc.pending = nil
	cc.mu.Unlock()
	cc.nc.Close()
	for _, pc := range pending {
		pc.ch <- result{err: err}
	}
}

func (cc *clientConn) read() {
	br := bufio.NewReaderSize(cc.nc, 32<<10)
	for first := true; ; first = false {
		buf, err := readFrame(br, cc.maxReply)
		var big *oversizeError
		if errors.As(err, &big) {
			id, err := skipOversize(br, big)
			if err == nil {
				cc.deliver(id, result{code: codes.ResourceExhausted, msg: fmt.Sprintf("ipc: reply of %d bytes from %s exceeds the limit of %d", big.n, cc.addr, big.max)})
				continue
			}
		}
		if err != nil {
			hint := ""
			if first && !errors.Is(err, net.ErrClosed) {
				// Closed before any reply: the server may be at its
				// connection cap (it resets at accept), or a namenode
				// from before this transport, which reads our preface
				// as a broken HTTP/2 one and resets the connection.
				hint = " (the server closed the connection at once: it may be at its rpc_max_connections; a namenode older than the IPC transport does this too, for it set SMARTH_RPC_TRANSPORT=grpc)"
			}
			cc.fail(status.Errorf(codes.Unavailable, "connection error: ipc: connection to %s lost: %v%s", cc.addr, err, hint))
			return
		}
		if len(*buf) == 1 && (*buf)[0] == kindGoAway {
			putBuf(buf)
			cc.goAway()
			continue
		}
		h, err := decodeReply(*buf)
		if err != nil {
			putBuf(buf)
			cc.fail(status.Errorf(codes.Unavailable, "connection error: ipc: malformed reply from %s: %v", cc.addr, err))
			return
		}
		r := result{code: h.code, payload: h.payload, buf: buf, state: h.state, hasState: h.hasState}
		if h.code != codes.OK {
			r.msg = string(h.msg)
		}
		cc.deliver(h.id, r)
	}
}

// deliver hands r to call id's waiter, or drops it if the caller gave up.
func (cc *clientConn) deliver(id uint64, r result) {
	cc.mu.Lock()
	pc := cc.pending[id]
	delete(cc.pending, id)
	cc.mu.Unlock()
	if pc == nil {
		putBuf(r.buf)
		return
	}
	pc.ch <- r
}
