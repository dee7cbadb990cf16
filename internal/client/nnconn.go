package client

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Every FileSystem of a process talking to the same namenode address
// shares one gRPC connection, as every DFSClient of a JVM shares one
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
	addr string
	tls  *tls.Config
}

type sharedConn struct {
	cc   *grpc.ClientConn
	refs int
}

// acquireNameNodeConn returns the process's connection to addr with
// tlsCfg, made with creds on first use; release it with
// releaseNameNodeConn.
func acquireNameNodeConn(addr string, tlsCfg *tls.Config, creds grpc.DialOption) (*grpc.ClientConn, error) {
	k := nnConnKey{addr, tlsCfg}
	nnConns.Lock()
	defer nnConns.Unlock()
	if s := nnConns.m[k]; s != nil {
		s.refs++
		return s.cc, nil
	}
	cc, err := grpc.NewClient(addr, creds)
	if err != nil {
		return nil, err
	}
	nnConns.m[k] = &sharedConn{cc: cc, refs: 1}
	return cc, nil
}

// releaseNameNodeConn drops one reference; the last one closes it.
func releaseNameNodeConn(addr string, tlsCfg *tls.Config, cc *grpc.ClientConn) error {
	k := nnConnKey{addr, tlsCfg}
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
	timeout time.Duration
	addr    string
}

func (c *identConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	ctx = metadata.NewOutgoingContext(ctx, c.md)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	err := c.cc.Invoke(ctx, method, req, reply, opts...)
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable &&
		(strings.Contains(st.Message(), "connection") || strings.Contains(st.Message(), "dial")) {
		// Say which namenode, and how to pick another, instead of gRPC's
		// transport wording alone.
		return status.Errorf(codes.Unavailable, "cannot reach the namenode at %s (is it running? set --namenode or SMARTH_NAMENODE): %s", c.addr, st.Message())
	}
	return err
}

func (c *identConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(metadata.NewOutgoingContext(ctx, c.md), desc, method, opts...)
}
