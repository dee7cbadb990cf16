package client

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/ipc"
	"smarth/internal/pki"
	"smarth/internal/rpc/callid"
)

// Every FileSystem of a process talking to the same namenode address
// shares one connection (Config.RPCTransport: IPC or gRPC), as every DFSClient of a JVM shares one
// Hadoop IPC connection per namenode (ipc.Client's connection cache).
// Calls of all of them are then multiplexed over one socket: the
// namenode answers a group commit's worth of calls with one write instead
// of one write per connection, and a process with many clients (a
// benchmark's threads, a task runner) holds one socket rather than
// hundreds. Identity stays per FileSystem: it travels in each call's
// metadata (identConn), never in the connection.
// Connections are shared per address and TLS config (the same pointer:
// one cluster CA loaded once), never across different verification.
var nnConns = struct {
	sync.Mutex
	m map[nnConnKey]*sharedConn
}{m: map[nnConnKey]*sharedConn{}}

type nnConnKey struct {
	addr      string
	tls       *tls.Config
	transport string
}

// nnConn is a namenode connection of either transport: *ipc.Conn or
// *grpc.ClientConn.
type nnConn interface {
	grpc.ClientConnInterface
	Close() error
}

type sharedConn struct {
	cc   nnConn
	refs int
	// reached: a call over cc got an answer from the namenode, so a
	// refused connection later means it is restarting (identConn retries).
	reached *atomic.Bool
}

// Transports of the namenode RPC (Config.RPCTransport).
const (
	// TransportIPC is internal/ipc: framed calls over one connection, as
	// Hadoop IPC; the default.
	TransportIPC = "ipc"
	// TransportGRPC is gRPC over HTTP/2, as datanodes use.
	TransportGRPC = "grpc"
)

// dialNameNode makes a connection of the given transport; dial, when set,
// opens its TCP connections.
func dialNameNode(addr string, tlsCfg *tls.Config, transport string, dial func(ctx context.Context, addr string) (net.Conn, error)) (nnConn, error) {
	if transport == TransportIPC {
		return ipc.NewConn(addr, ipc.ClientOptions{TLS: tlsCfg, Dial: dial}), nil
	}
	opts := []grpc.DialOption{pki.DialOption(tlsCfg)}
	if dial != nil {
		opts = append(opts, grpc.WithContextDialer(dial))
	}
	return grpc.NewClient(addr, opts...)
}

// acquireNameNodeConn returns the process's connection to addr with
// tlsCfg over transport, made on first use; release it with
// releaseNameNodeConn.
func acquireNameNodeConn(addr string, tlsCfg *tls.Config, transport string) (nnConn, *atomic.Bool, error) {
	k := nnConnKey{addr, tlsCfg, transport}
	nnConns.Lock()
	defer nnConns.Unlock()
	if s := nnConns.m[k]; s != nil {
		s.refs++
		return s.cc, s.reached, nil
	}
	cc, err := dialNameNode(addr, tlsCfg, transport, nil)
	if err != nil {
		return nil, nil, err
	}
	s := &sharedConn{cc: cc, refs: 1, reached: new(atomic.Bool)}
	nnConns.m[k] = s
	return cc, s.reached, nil
}

// releaseNameNodeConn drops one reference; the last one closes it.
func releaseNameNodeConn(addr string, tlsCfg *tls.Config, transport string, cc nnConn) error {
	k := nnConnKey{addr, tlsCfg, transport}
	nnConns.Lock()
	defer nnConns.Unlock()
	s := nnConns.m[k]
	if s == nil || s.cc != cc {
		return nil
	}
	if s.refs--; s.refs > 0 {
		return nil
	}
	delete(nnConns.m, k)
	return cc.Close()
}

// identConn is one FileSystem's view of a (possibly shared) connection:
// every call carries the FileSystem's identity metadata and, when the
// caller set none, its default deadline.
type identConn struct {
	cc      grpc.ClientConnInterface
	md      metadata.MD
	ipc     *ipc.Conn  // cc, when it is the IPC transport
	hdr     ipc.Header // md, encoded once for ipc
	timeout time.Duration
	addr    string
	retry   time.Duration // Config.ConnectRetry
	reached *atomic.Bool  // the namenode has answered this connection before
	// failover: this namenode is one of several (failoverConn), which
	// moves a refused call to the next one rather than waiting here.
	failover bool
	// ids gives at-most-once calls their ids (callid) when failoverConn
	// has not: the FileSystem's client id, shared by its members.
	ids *callid.Source
}

func newIdentConn(cc grpc.ClientConnInterface, md metadata.MD) *identConn {
	c := &identConn{cc: cc, md: md}
	if ic, ok := cc.(*ipc.Conn); ok {
		c.ipc, c.hdr = ic, ipc.NewHeader(md)
	}
	return c
}

func (c *identConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	// gRPC takes the identity and the default deadline from the context.
	// The IPC transport takes the identity encoded once (c.hdr) and
	// applies the deadline itself, without a timer per call
	// (InvokeHeader): the context's when it has one (as over gRPC,
	// restart retries then wait up to it), else the default timeout.
	var deadline time.Time
	hdr := c.hdr
	var callID string // the call's ids, for the namenode's retry cache
	if atMostOnceMethods[method] && c.ids != nil {
		id, ok := callid.From(ctx)
		if !ok {
			id = c.ids.Next()
			ctx = callid.With(ctx, id)
		}
		callID = id.Encode()
	}
	st, hasState := stateFrom(ctx) // observer reads: the client's state id
	if c.ipc == nil {
		ctx = metadata.NewOutgoingContext(ctx, c.md)
		if callID != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, callid.Key, callID)
		}
		if hasState {
			ctx = metadata.AppendToOutgoingContext(ctx, ipc.StateKey, strconv.FormatUint(st, 10))
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.timeout)
			defer cancel()
		}
	} else {
		if callID != "" {
			hdr = hdr.With(callid.Key, callID)
		}
		if hasState {
			hdr = hdr.With(ipc.StateKey, strconv.FormatUint(st, 10))
		}
		if dl, ok := ctx.Deadline(); ok {
			deadline = dl
		} else {
			deadline = time.Now().Add(c.timeout)
		}
	}
	var err error
	for start, pause := time.Now(), 250*time.Millisecond; ; pause = min(2*pause, time.Second) {
		if c.ipc != nil {
			left := time.Until(deadline)
			if left <= 0 {
				err = status.Error(codes.DeadlineExceeded, "context deadline exceeded")
				break
			}
			err = c.ipc.InvokeHeader(ctx, hdr, left, method, req, reply, opts...)
		} else {
			err = c.cc.Invoke(ctx, method, req, reply, opts...)
		}
		if st, ok := status.FromError(err); err == nil || (ok && st.Code() != codes.Unavailable) {
			c.reached.Store(true) // the namenode answered
		}
		if !c.restarting(err) || c.retry < 0 || time.Since(start)+pause > c.retry {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause): // the namenode is coming back: Hadoop IPC's connect retry
		}
		if ctx.Err() != nil {
			break
		}
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable &&
		(strings.Contains(st.Message(), "connection") || strings.Contains(st.Message(), "dial")) {
		// Say which namenode, and how to pick another, instead of gRPC's
		// transport wording alone.
		return status.Errorf(codes.Unavailable, "cannot reach the namenode at %s (is it running? set --namenode or SMARTH_NAMENODE): %s", c.addr, st.Message())
	}
	return err
}

// restarting reports whether err says the namenode is restarting and the
// call was not applied: a connection refused (the request never left)
// to a namenode this process had reached, or start-up safe mode (blocks
// still being reported; a safe mode entered by hand is not waited out).
func (c *identConn) restarting(err error) bool {
	st, ok := status.FromError(err)
	if err == nil || !ok || st.Code() != codes.Unavailable {
		return false
	}
	msg := st.Message()
	if strings.Contains(msg, "is in safe mode") && strings.Contains(msg, "blocks reported") {
		return true
	}
	return !c.failover && c.reached.Load() && strings.Contains(msg, "Error while dialing") && strings.Contains(msg, "connection refused")
}

func (c *identConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(metadata.NewOutgoingContext(ctx, c.md), desc, method, opts...)
}
