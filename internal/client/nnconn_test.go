package client

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testenv"
)

// Over IPC, a call whose context allows longer than the default RPC
// timeout rides out a namenode restart up to the context's deadline, as
// over gRPC (it used to give up at the default timeout).
func TestIPCRestartRetryWaitsToContextDeadline(t *testing.T) {
	// The namenode is down: connections are refused. Its port is below
	// the ephemeral range, so no connection takes it before the restart.
	addr := testenv.RestartablePorts(t, 1)[0]
	srv := ipc.NewServer(ipc.ServerOptions{})
	dfspb.RegisterClientProtocolServer(srv, dfspb.UnimplementedClientProtocolServer{})
	defer srv.Stop()
	go func() {
		time.Sleep(1500 * time.Millisecond) // longer than the RPC timeout below
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv.Serve(l)
	}()
	conn := ipc.NewConn(addr, ipc.ClientOptions{})
	defer conn.Close()
	ic := newIdentConn(conn, metadata.Pairs("smarth-user", "alice"))
	ic.timeout, ic.addr, ic.retry, ic.reached = 500*time.Millisecond, addr, time.Minute, new(atomic.Bool)
	ic.reached.Store(true) // this process had reached the namenode before
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := dfspb.NewClientProtocolClient(ic).GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: "/"})
	// The fake namenode answers Unimplemented: the call reached it.
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("a call with a 20 s context across a 1.5 s restart (RPC timeout 0.5 s): %v", err)
	}
}
