package namenode

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// rpc_max_connections reaches the RPC port: beyond it a client is refused
// at accept, and /metrics counts the port's connections and refusals.
func TestRPCMaxConnectionsConfigured(t *testing.T) {
	cfg := testConfig(t)
	cfg.RPCMaxConnections = 2
	nn := startNN(t, cfg)
	for i := range 2 {
		c := dial(t, nn.Addr(), "hdfs")
		if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/"}); err != nil {
			t.Fatalf("client %d of 2 under rpc_max_connections 2: %v", i+1, err)
		}
	}
	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/"}); err == nil {
		t.Fatal("a 3rd client was served under rpc_max_connections 2")
	}
	resp, err := http.Get("http://" + nn.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(b)
	if !strings.Contains(m, "smarth_namenode_rpc_connections 2\n") {
		t.Errorf("metrics lack smarth_namenode_rpc_connections 2")
	}
	got := regexp.MustCompile(`(?m)^smarth_namenode_rpc_connections_refused_total (\S+)$`).FindStringSubmatch(m)
	if len(got) < 2 {
		t.Fatal("metrics lack smarth_namenode_rpc_connections_refused_total")
	}
	if n, _ := strconv.ParseFloat(got[1], 64); n < 1 {
		t.Errorf("smarth_namenode_rpc_connections_refused_total: %q, want at least 1", got)
	}
}

func TestRPCBoundsValidated(t *testing.T) {
	cfg := testConfig(t)
	cfg.RPCMaxConnections, cfg.IPCMaxCalls = -1, -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "rpc_max_connections -1, ipc_max_calls -1") {
		t.Errorf("negative bounds: Validate() = %v", err)
	}
}
