package namenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/ipc"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

const (
	mdUser = auth.MDUser
	// defaultUser is the identity of a caller that names none (simple mode).
	defaultUser = "smarth"
)

// grpcMaxStreams bounds the concurrent calls of one gRPC connection
// (datanodes make a few at a time; a gRPC client's threads share one).
const grpcMaxStreams = 1024

func (nn *NameNode) newGRPCServer(extra ...grpc.ServerOption) *grpc.Server {
	s := grpc.NewServer(append([]grpc.ServerOption{
		// stateTrailer outermost: the state id is read after the call,
		// its commit wait included.
		grpc.ChainUnaryInterceptor(nn.stateTrailer, nn.interceptor),
		grpc.MaxRecvMsgSize(256 << 20), // full block reports of big datanodes
		grpc.MaxSendMsgSize(256 << 20),
		// Reuse handler goroutines across calls instead of starting one
		// per call: a started goroutine's stack grows (copied) on every
		// call's way through the handler, a reused one's stays grown. A
		// call finding every worker busy (waiting for a group commit)
		// still gets a goroutine of its own.
		grpc.NumStreamWorkers(64),
		// grpc-go allows unlimited streams per connection; bound them as
		// the IPC transport bounds a connection's calls in flight, so one
		// gRPC connection cannot start calls without limit. A client
		// beyond it waits for a stream, it is not refused.
		grpc.MaxConcurrentStreams(grpcMaxStreams),
	}, extra...)...)
	dfspb.RegisterClientProtocolServer(s, &clientRPC{nn: nn})
	dfspb.RegisterDatanodeProtocolServer(s, &datanodeRPC{nn: nn})
	return s
}

// newIPCServer serves the same services as newGRPCServer, through the same
// interceptor, over the lean transport (internal/ipc).
func (nn *NameNode) newIPCServer() *ipc.Server {
	s := ipc.NewServer(ipc.ServerOptions{
		Interceptor: nn.interceptor,
		ReplyState:  nn.stateID,
		MaxMessage:  256 << 20, // as MaxRecvMsgSize above
		Workers:     64,
		MaxCalls:    nn.cfg.IPCMaxCalls, // 0: ipc.DefaultMaxCalls
		Logger:      nn.logger,
	})
	dfspb.RegisterClientProtocolServer(s, &clientRPC{nn: nn})
	dfspb.RegisterDatanodeProtocolServer(s, &datanodeRPC{nn: nn})
	return s
}

// interceptor counts and times every call, turns panics into Internal
// errors, and makes sure every error carries a status code.
func (nn *NameNode) interceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	m := nn.methodMetrics(info.FullMethod)
	method := m.name
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			nn.logger.Error("panic in rpc handler", "method", method, "panic", r, "stack", string(debug.Stack()))
			err = status.Errorf(codes.Internal, "%s: internal namenode error: %v", method, r)
		}
		code := status.Code(err)
		if err != nil && code == codes.Unknown {
			err = status.Error(codes.Internal, err.Error())
			code = codes.Internal
		}
		if code == codes.OK {
			m.ok.Inc()
		} else {
			nn.metrics.rpcs.WithLabelValues(method, code.String()).Inc()
		}
		m.latency.Observe(time.Since(start).Seconds())
	}()
	ctx, err = nn.authorize(ctx, info.FullMethod, req)
	if err != nil {
		nn.logger.Warn("call refused", "method", method, "peer", peerHost(ctx), "error", err)
		return nil, err
	}
	if err := nn.standbyRefusal(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	if nn.ha != nil && nn.ha.linearizable() && linearRead[info.FullMethod] && nn.ha.active.Load() {
		// (A standby got here with an observer read, which its own
		// admission made read-your-writes; it has no leadership to
		// verify.)
		return nn.gatedRead(ctx, func() (any, error) { return handler(ctx, req) })
	}
	return handler(ctx, req)
}

// rpcMethodMetrics are one method's series, resolved once: looking a
// series up by its label values hashes them on every call (2% of the
// namenode's CPU under `smarth bench nn`).
type rpcMethodMetrics struct {
	name    string
	ok      prometheus.Counter
	latency prometheus.Observer
}

func (nn *NameNode) methodMetrics(fullMethod string) *rpcMethodMetrics {
	if m, ok := nn.metrics.rpcMethods.Load(fullMethod); ok {
		return m.(*rpcMethodMetrics)
	}
	name := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	m, _ := nn.metrics.rpcMethods.LoadOrStore(fullMethod, &rpcMethodMetrics{name: name,
		ok:      nn.metrics.rpcs.WithLabelValues(name, codes.OK.String()),
		latency: nn.metrics.rpcLatency.WithLabelValues(name)})
	return m.(*rpcMethodMetrics)
}

// callerOf is the caller the interceptor (or WebHDFS, webAuth.Caller)
// established. Every RPC passes the interceptor, which refuses unproven
// callers before any handler runs. A context without one never trusts
// what its metadata asserts: it is nobody, with no groups, whom every
// permission check refuses.
func callerOf(ctx context.Context) namespace.Caller {
	if c, ok := ctx.Value(callerKey{}).(namespace.Caller); ok {
		return c
	}
	return namespace.Caller{}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// peerHost is the IP the call came from, used as the client host when the
// client does not name one.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(p.Addr.String())
	if err != nil {
		return ""
	}
	return host
}

// statusOf converts an error to a gRPC status error with a code and a
// message a person can read.
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var ne *namespace.Error
	if errors.As(err, &ne) {
		return status.Error(kindCode[ne.Kind], ne.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

var kindCode = map[namespace.Kind]codes.Code{
	namespace.Invalid:      codes.InvalidArgument,
	namespace.NotFound:     codes.NotFound,
	namespace.Exists:       codes.AlreadyExists,
	namespace.NotDirectory: codes.FailedPrecondition,
	namespace.NotEmpty:     codes.FailedPrecondition,
	namespace.Denied:       codes.PermissionDenied,
	namespace.Precondition: codes.FailedPrecondition,
	// HDFS's NSQuotaExceededException / DSQuotaExceededException; the
	// client tells them by their wording.
	namespace.QuotaExceeded: codes.FailedPrecondition,
}

func errInvalid(format string, a ...any) error {
	return status.Error(codes.InvalidArgument, fmt.Sprintf(format, a...))
}
func errNotFound(format string, a ...any) error {
	return status.Error(codes.NotFound, fmt.Sprintf(format, a...))
}
func errPrecondition(format string, a ...any) error {
	return status.Error(codes.FailedPrecondition, fmt.Sprintf(format, a...))
}
func errUnavailable(format string, a ...any) error {
	return status.Error(codes.Unavailable, fmt.Sprintf(format, a...))
}
func errExhausted(format string, a ...any) error {
	return status.Error(codes.ResourceExhausted, fmt.Sprintf(format, a...))
}
func errDenied(format string, a ...any) error {
	return status.Error(codes.PermissionDenied, fmt.Sprintf(format, a...))
}

// cleanPath validates a path argument for op.
func cleanPath(op, path string) (string, error) {
	p, err := namespace.Clean(path)
	if err != nil {
		return "", errInvalid("%s %s: %v", op, path, err)
	}
	return p, nil
}
func errExists(format string, a ...any) error {
	return status.Error(codes.AlreadyExists, fmt.Sprintf(format, a...))
}
