package namenode

import (
	"log/slog"
	"strings"
	"testing"

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
