package replog

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"smarth/internal/pki"
)

// The raft port speaks only mutual TLS with the cluster CA: a peer whose
// certificate comes from another CA, or that presents none, is refused
// in the handshake; a peer with a cluster certificate gets through (the
// control that shows the refusals are not just a broken dial).
func TestTransportRefusesForeignPeers(t *testing.T) {
	dir := t.TempDir()
	nodes := group(t, dir, 1, nil)
	leaderOf(t, nodes)
	addr := nodes[0].cfg.Bind

	// Another cluster's CA with a valid-looking certificate for the
	// same host.
	foreign := certs(t, filepath.Join(dir, "other"), "intruder")
	own := certs(t, dir, "nn9")
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
