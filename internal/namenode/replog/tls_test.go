package replog

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"smarth/internal/pki"
)

// The raft port speaks only mutual TLS with the cluster CA and a
// certificate that names a member: a peer whose certificate comes from
// another CA, that presents none, or whose cluster certificate is
// another daemon's (a datanode's) is refused in the handshake; a peer
// with a member's certificate gets through (the control that shows the
// refusals are not just a broken dial).
func TestTransportRefusesForeignPeers(t *testing.T) {
	dir := t.TempDir()
	nodes := group(t, dir, 1, nil)
	leaderOf(t, nodes)
	addr := nodes[0].cfg.Bind

	// Another cluster's CA with a valid-looking certificate for the
	// same host.
	foreign := certs(t, filepath.Join(dir, "other"), "intruder")
	own := certs(t, dir, "nn0") // the member's own certificate
	datanode := certs(t, dir, "dn1")
	rootsOf := func(c pki.Config) *tls.Config {
		cfg, err := pki.ClientConfig(c.CAFile)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	withCert := func(cfg *tls.Config, c pki.Config) *tls.Config {
		kp, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{kp}
		return cfg
	}
	// Each client trusts the server (the cluster CA), so only the
	// server's check of the client decides.
	try := func(name string, cfg *tls.Config) error {
		cfg.ServerName = "127.0.0.1"
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		// TLS 1.3 reports the server's refusal of the client
		// certificate on the first read.
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = c.Read(make([]byte, 1))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil // still connected: accepted, raft waits for an RPC
		}
		return err
	}
	if err := try("foreign", withCert(rootsOf(own), foreign)); err == nil {
		t.Fatal("a certificate from another CA was accepted on the raft port")
	} else {
		t.Logf("foreign CA refused: %v", err)
	}
	if err := try("none", rootsOf(own)); err == nil {
		t.Fatal("a peer without a certificate was accepted on the raft port")
	} else {
		t.Logf("no certificate refused: %v", err)
	}
	if err := try("datanode", withCert(rootsOf(own), datanode)); err == nil {
		t.Fatal("a datanode's cluster certificate was accepted on the raft port")
	} else {
		t.Logf("datanode certificate refused: %v", err)
	}
	if err := try("cluster", withCert(rootsOf(own), own)); err != nil {
		t.Fatalf("a peer with a cluster certificate was refused: %v", err)
	}
	// And a node holding a foreign certificate cannot join the group:
	// Open needs TLS on, and its dials are refused the same way.
	if _, err := Open(Config{ID: "x", Bind: "127.0.0.1:0", Dir: filepath.Join(dir, "x"), FSM: &memFSM{}}); err == nil {
		t.Fatal("Open without TLS succeeded")
	}
	_ = os.Remove
}

// TestNonMemberCannotSpeakRaft makes the attack the name check is for:
// a peer holding a cluster certificate of another daemon (a datanode's,
// taken from a compromised host) sends a follower an AppendEntries at a
// higher term, as a leader would. Raft takes the sender's word for who
// it is, so the follower must never read it: its term stays. The
// control sends the same request with a certificate named for a member
// and sees the follower take the term: the attack is real, and the test
// would see it succeed.
func TestNonMemberCannotSpeakRaft(t *testing.T) {
	dir := t.TempDir()
	nodes := group(t, dir, 3, nil)
	ld := leaderOf(t, nodes)
	f := another(nodes, ld)
	attack := func(certName string) (uint64, error) {
		c := certs(t, dir, certName)
		kp, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := pki.ClientConfig(c.CAFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg = cfg.Clone()
		cfg.Certificates = []tls.Certificate{kp}
		trans := raft.NewNetworkTransport(&dialOnly{cfg: cfg, closed: make(chan struct{})}, 1, 3*time.Second, io.Discard)
		defer trans.Close()
		term := f.log.Term() + 5
		args := &raft.AppendEntriesRequest{
			RPCHeader:    raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(certName), Addr: []byte("127.0.0.1:1")},
			Term:         term,
			PrevLogEntry: 0,
			PrevLogTerm:  0,
		}
		var resp raft.AppendEntriesResponse
		err = trans.AppendEntries(raft.ServerID(f.id), raft.ServerAddress(f.cfg.Bind), args, &resp)
		return term, err
	}
	term, err := attack("dn1")
	if err == nil {
		t.Fatalf("a datanode's certificate delivered an AppendEntries to follower %s", f.id)
	}
	if got := f.log.Term(); got >= term {
		t.Fatalf("follower %s took term %d from a datanode's certificate", f.id, got)
	}
	t.Logf("datanode certificate: %v", err)

	// Control: a certificate the CA made under a member's name.
	term, err = attack("nn2")
	if err != nil {
		t.Fatalf("control: the request with a member's certificate failed: %v", err)
	}
	waitFor(t, 5*time.Second, "the follower to take the control's term", func() bool { return f.log.Term() >= term })
}

// dialOnly is a raft stream layer that only dials, with cfg; its Accept
// waits for Close (the transport's listener goroutine then ends).
type dialOnly struct {
	cfg    *tls.Config
	closed chan struct{}
	once   sync.Once
}

func (d *dialOnly) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	cfg := d.cfg.Clone()
	cfg.ServerName = "127.0.0.1"
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(address), cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}
func (d *dialOnly) Accept() (net.Conn, error) { <-d.closed; return nil, net.ErrClosed }
func (d *dialOnly) Close() error              { d.once.Do(func() { close(d.closed) }); return nil }
func (d *dialOnly) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// TestSilentPeersDoNotHoldThePort: connections that open and send
// nothing (no TLS handshake) must not keep a member from taking others.
// Accept used to run each handshake itself, with a 10-second deadline,
// so three silent connections shut the port for 30 seconds: no vote, no
// new replication connection. Here a member's own certificate must get
// through while they hang, and the group must still elect a new leader
// when the old one stops.
func TestSilentPeersDoNotHoldThePort(t *testing.T) {
	dir := t.TempDir()
	nodes := group(t, dir, 3, nil)
	ld := leaderOf(t, nodes)
	for _, n := range nodes {
		for range 3 {
			c, err := net.Dial("tcp", n.cfg.Bind)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
		}
	}
	time.Sleep(200 * time.Millisecond) // let the ports take the silent ones first
	own := certs(t, dir, "nn0")
	kp, err := tls.LoadX509KeyPair(own.CertFile, own.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pki.ClientConfig(own.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.Clone()
	cfg.Certificates, cfg.ServerName = []tls.Certificate{kp}, "127.0.0.1"
	start := time.Now()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 20 * time.Second}, "tcp", ld.cfg.Bind, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	// The silent connections would hold a serial accept for 30 s; a
	// handshake of its own takes milliseconds, even on a loaded machine.
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("a member's handshake waited %v behind three silent connections", d)
	}
	ld.close()
	rest := []*node{}
	for _, n := range nodes {
		if n != ld {
			rest = append(rest, n)
		}
	}
	waitFor(t, 8*time.Second, "a new leader among the others while silent connections hang", func() bool {
		for _, n := range rest {
			if n.log.IsLeader() {
				return true
			}
		}
		return false
	})
}
