package client

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"
	"sync/atomic"
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
	// reached: a call over cc got an answer from the namenode, so a
	// refused connection later means it is restarting (identConn retries).
	reached *atomic.Bool
}

// acquireNameNodeConn returns the process's connection to addr with
// tlsCfg, made with creds on first use; release it with
// releaseNameNodeConn.
func acquireNameNodeConn(addr string, tlsCfg *tls.Config, creds grpc.DialOption) (*grpc.ClientConn, *atomic.Bool, error) {
	k := nnConnKey{addr, tlsCfg}
	nnConns.Lock()
	defer nnConns.Unlock()
	if s := nnConns.m[k]; s != nil {
		s.refs++
		return s.cc, s.reached, nil
	}
	cc, err := grpc.NewClient(addr, creds)
	if err != nil {
		return nil, nil, err
	}
	s := &sharedConn{cc: cc, refs: 1, reached: new(atomic.Bool)}
	nnConns.m[k] = s
	return cc, s.reached, nil
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
	retry   time.Duration // Config.ConnectRetry
	reached *atomic.Bool  // the namenode has answered this connection before
}

func (c *identConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	ctx = metadata.NewOutgoingContext(ctx, c.md)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var err error
	for start, pause := time.Now(), 250*time.Millisecond; ; pause = min(2*pause, time.Second) {
		err = c.cc.Invoke(ctx, method, req, reply, opts...)
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
	return c.reached.Load() && strings.Contains(msg, "Error while dialing") && strings.Contains(msg, "connection refused")
}

func (c *identConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(metadata.NewOutgoingContext(ctx, c.md), desc, method, opts...)
}
