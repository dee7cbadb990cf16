package namenode

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"smarth/internal/rpc/dfspb"
)

// rpc_max_connections reaches the RPC port: beyond it a client is refused
// at accept, and /metrics counts the port's connections and refusals.
func TestRPCMaxConnectionsConfigured(t *testing.T) {
	cfg := testConfig(t)
	cfg.RPCMaxConnections = 2
	cfg.RPCMaxConnectionsPerHost = 100 // the port's bound is the one tested
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
	cfg.RPCMaxConnections, cfg.IPCMaxCalls, cfg.RPCMaxConnectionsPerHost = -1, -1, -1
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "rpc_max_connections -1, ipc_max_calls -1") ||
		!strings.Contains(err.Error(), "rpc_max_connections_per_host -1") {
		t.Errorf("negative bounds: Validate() = %v", err)
	}
}

// rpc_max_connections_per_host reaches the port: a host beyond it is
// refused while the port has room.
func TestRPCMaxConnectionsPerHostConfigured(t *testing.T) {
	cfg := testConfig(t)
	cfg.RPCMaxConnectionsPerHost = 1
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/"}); err != nil {
		t.Fatalf("the host's first client under rpc_max_connections_per_host 1: %v", err)
	}
	c2 := dial(t, nn.Addr(), "hdfs")
	if _, err := c2.cp.GetFileInfo(c2.ctx(), &dfspb.GetFileInfoRequest{Path: "/"}); err == nil {
		t.Fatal("the host's second client was served under rpc_max_connections_per_host 1")
	}
}

// The namenode's gRPC server announces the per-connection stream bound in
// its HTTP/2 SETTINGS: grpc-go's default is no bound at all.
func TestGRPCStreamsBoundedPerConnection(t *testing.T) {
	nn := startNN(t, testConfig(t))
	nc, err := net.DialTimeout("tcp", nn.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(nc, nc)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no SETTINGS from the namenode's gRPC server: %v", err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		v, ok := sf.Value(http2.SettingMaxConcurrentStreams)
		if !ok || v != grpcMaxStreams {
			t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS = %d (announced %v), want %d", v, ok, grpcMaxStreams)
		}
		return
	}
}
