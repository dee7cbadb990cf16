package pki

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// issue makes a CA in dir/ca and a server certificate for 127.0.0.1.
func issue(t *testing.T, dir string) Config {
	t.Helper()
	ca, err := LoadOrCreateCA(filepath.Join(dir, "ca"), "test")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue(filepath.Join(dir, "certs"), "srv", []string{"127.0.0.1", "localhost", "dn1"})
	if err != nil {
		t.Fatal(err)
	}
	caFile, _ := CAFiles(filepath.Join(dir, "ca"))
	return Config{TLS: true, CertFile: cert, KeyFile: key, CAFile: caFile}
}

// echoServer serves one line back on a Listen listener.
func echoServer(t *testing.T, srv *tls.Config) string {
	ln, err := Listen("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func dialPlain(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

func TestTLSRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	cfg := issue(t, dir)
	srv, err := cfg.Server()
	if err != nil {
		t.Fatal(err)
	}
	addr := echoServer(t, srv)
	cli, err := cfg.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	c, err := Dialer(cli, dialPlain)(ctx, addr)
	if err != nil {
		t.Fatalf("a client trusting the CA: %v", err)
	}
	c.Write([]byte("hello\n"))
	got, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || got != "hello\n" {
		t.Fatalf("echo over TLS: %q, %v", got, err)
	}

	// Another cluster's CA: the server's certificate is not trusted.
	other := issue(t, t.TempDir())
	otherCli, _ := other.Client()
	if _, err := Dialer(otherCli, dialPlain)(ctx, addr); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client trusting another CA was not refused: %v", err)
	}

	// A plaintext client gets no echo: the server wants a handshake.
	pc, err := dialPlain(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	pc.SetDeadline(time.Now().Add(5 * time.Second))
	pc.Write([]byte("hello\n"))
	b, _ := bufio.NewReader(pc).ReadString('\n')
	pc.Close()
	if b == "hello\n" {
		t.Fatal("a plaintext client was served")
	}
}

func TestIssueReusesAndRenews(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateCA(dir, "test")
	if err != nil || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("the CA was not kept: %v", err)
	}
	cert, _, err := ca.Issue(dir, "dn1", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(cert)
	if _, _, err := ca.Issue(dir, "dn1", []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(cert); string(second) != string(first) {
		t.Fatal("a current certificate was reissued")
	}
	if _, _, err := ca.Issue(dir, "dn1", []string{"127.0.0.1", "10.0.0.7"}); err != nil {
		t.Fatal(err)
	}
	if third, _ := os.ReadFile(cert); string(third) == string(first) {
		t.Fatal("a certificate missing a host was kept")
	}
	_, key := CAFiles(dir)
	if st, _ := os.Stat(key); st.Mode().Perm() != 0o600 {
		t.Fatalf("CA key mode %v", st.Mode().Perm())
	}
	os.Chmod(key, 0o644)
	if _, err := LoadCA(dir); err == nil {
		t.Fatal("a CA key others can read was accepted")
	}
}

func TestValidateNamesMissingFiles(t *testing.T) {
	err := Config{TLS: true}.Validate()
	for _, k := range []string{"tls_cert_file", "tls_key_file", "tls_ca_file"} {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Fatalf("error %v does not name %s", err, k)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := (Config{TLS: true, CAFile: "/nonexistent/ca.pem"}).Client(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing CA: %v", err)
	}
}

// Clients that load the same CA get one *tls.Config: a process's
// namenode connection is shared per config pointer (internal/client's
// nnConns), so a copy per client gave a TLS cluster one connection per
// client where a plaintext one has one in all. A CA file rewritten with
// another CA gives a new config trusting only the new one.
func TestClientConfigSharedPerCA(t *testing.T) {
	dir := t.TempDir()
	cfg := issue(t, dir)
	a, err := ClientConfig(cfg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ClientConfig(cfg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two loads of the unchanged CA %s gave two configs: each client would dial its own connection", cfg.CAFile)
	}

	// Another CA written over the file: the old config must not be
	// handed out for it.
	other := issue(t, t.TempDir())
	pem, err := os.ReadFile(other.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.CAFile, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ClientConfig(cfg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Fatal("the CA file now holds another CA, yet the config of the old one came back")
	}
	srv, err := other.Server()
	if err != nil {
		t.Fatal(err)
	}
	addr := echoServer(t, srv)
	conn, err := tls.Dial("tcp", addr, c)
	if err != nil {
		t.Fatalf("the config of the rewritten CA file does not trust its CA: %v", err)
	}
	conn.Close()
	if conn, err := tls.Dial("tcp", addr, a); err == nil {
		conn.Close()
		t.Fatal("the old CA's config trusts a server of the other CA")
	}
}
