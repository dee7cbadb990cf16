package namenode

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// A clean stop logs no error: every `cluster down` logged
// "rpc server stopped: use of closed network connection" at ERROR, which
// taught operators to ignore the namenode's errors.
func TestCleanStopLogsNoError(t *testing.T) {
	var log syncbuf.Buffer
	nn, err := New(testConfig(t), slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, nn.Addr(), "alice") // a live gRPC connection at the stop
	if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/"}); err != nil {
		t.Fatal(err)
	}
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("a clean stop logged: %s", line)
		}
	}
}

// A server closed before its Serve began is a clean stop too, for both
// transports; any other error is not.
func TestCleanStopErrors(t *testing.T) {
	for _, c := range []struct {
		err   error
		clean bool
	}{
		{nil, true},
		{net.ErrClosed, true},
		{grpc.ErrServerStopped, true},
		{ipc.ErrServerStopped, true},
		{fmt.Errorf("serve: %w", ipc.ErrServerStopped), true},
		{errors.New("accept: too many open files"), false},
	} {
		if got := cleanStop(c.err); got != c.clean {
			t.Errorf("cleanStop(%v) = %v, want %v", c.err, got, c.clean)
		}
	}
}
