package namenode

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// floodAddrEnv makes the test binary a flooder (TestHTTPFloodHelper): it
// holds floodCountEnv idle connections to the address until its stdin
// closes. A separate process, so that the flood's descriptors are not
// the namenode's.
const (
	floodAddrEnv  = "SMARTH_TEST_FLOOD_ADDR"
	floodCountEnv = "SMARTH_TEST_FLOOD_N"
)

func TestHTTPFloodHelper(t *testing.T) {
	addr := os.Getenv(floodAddrEnv)
	if addr == "" {
		t.Skip("the flooder of TestAttackHTTPFloodLeavesRPCPortUsable, run only as its child")
	}
	n, _ := strconv.Atoi(os.Getenv(floodCountEnv))
	var held []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue // reset or refused: the port is bounded
		}
		held = append(held, c)
	}
	fmt.Printf("ready %d\n", len(held))
	io.Copy(io.Discard, os.Stdin)
}

// TestAttackHTTPFloodLeavesRPCPortUsable is issue 23's hole 6 as found:
// with the namenode's descriptor limit at 512, another process opening
// 600 idle connections to its HTTP port took every descriptor (the HTTP
// server accepted them all), and the RPC port could accept no one. The
// HTTP port's caps (an eighth of the descriptors, a quarter of that per
// host) leave the RPC port usable, and the console serves another host.
// (The test's RPC client shares the namenode's process, so before the fix
// it is the first to meet EMFILE; a client elsewhere waited in the RPC
// port's accept backoff instead.)
func TestAttackHTTPFloodLeavesRPCPortUsable(t *testing.T) {
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	low := saved
	low.Cur = 512
	if saved.Cur < low.Cur {
		t.Skipf("the open-file limit is %d already", saved.Cur)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved) })
	// Started after the limit is lowered: its default caps follow it.
	nn := startNN(t, testConfig(t))

	child := exec.Command(os.Args[0], "-test.run=^TestHTTPFloodHelper$")
	child.Env = append(os.Environ(), floodAddrEnv+"="+nn.HTTPAddr(), floodCountEnv+"=600")
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("flooder: %v", err)
	}
	t.Logf("flooder: %s", line)

	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/"}); err != nil {
		t.Fatalf("RPC while 600 connections flood the HTTP port: %v", err)
	}
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	resp, err := other.Get("http://" + nn.HTTPAddr() + "/healthz")
	if err != nil {
		t.Fatalf("the console from 127.0.0.2 while 127.0.0.1 floods it: %v", err)
	}
	resp.Body.Close()
	other.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the console from 127.0.0.2: %s", resp.Status)
	}
}

// TestAttackClientNamesOnOverview is issue 23's hole 9 (client names):
// the namenode's public overview named the latest client of every host
// in its speed records, and a writer's client name was what another user
// needed to write into its open file (hole 2). The overview shows the
// host and the speeds, never the name.
func TestAttackClientNamesOnOverview(t *testing.T) {
	nn := startNN(t, testConfig(t))
	c := dial(t, nn.Addr(), "alice")
	const name = "DFSClient_alice_secret_4242"
	if _, err := c.cp.ClientHeartbeat(c.ctx(), &dfspb.ClientHeartbeatRequest{ClientName: name, ClientHost: "alicehost",
		Samples: []*dfspb.SpeedSample{{DatanodeId: "id-dn1", Bytes: 10 << 20, Nanos: 1e9}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + nn.HTTPAddr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "id-dn1") {
		t.Fatalf("the overview shows no speed record for id-dn1 (the test's control):\n%s", b)
	}
	if strings.Contains(string(b), name) {
		t.Fatalf("the overview names client %s", name)
	}
}
