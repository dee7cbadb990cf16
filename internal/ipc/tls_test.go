package ipc

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// tlsConfigs issues a server certificate from a fresh CA and returns the
// server's and a client's TLS configs, as a daemon with tls: true has them.
func tlsConfigs(t *testing.T) (srv, cli *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(filepath.Join(dir, "ca"), "test")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue(filepath.Join(dir, "certs"), "nn", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	caFile, _ := pki.CAFiles(filepath.Join(dir, "ca"))
	cfg := pki.Config{TLS: true, CertFile: cert, KeyFile: key, CAFile: caFile}
	if srv, err = cfg.Server(); err != nil {
		t.Fatal(err)
	}
	if cli, err = cfg.Client(); err != nil {
		t.Fatal(err)
	}
	return srv, cli
}

func TestTLSBothTransportsOnOnePort(t *testing.T) {
	srvTLS, cliTLS := tlsConfigs(t)
	ts := startServer(t, "127.0.0.1:0", srvTLS, ServerOptions{})

	c := NewConn(ts.addr, ClientOptions{TLS: cliTLS})
	defer c.Close()
	st, err := stat(userCtx("alice"), c, "/tls")
	if err != nil || st.GetOwner() != "alice" {
		t.Fatalf("IPC over TLS: %v %v", st, err)
	}

	gc, err := grpc.NewClient(ts.addr, pki.DialOption(cliTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	if st, err := stat(userCtx("alice"), gc, "/tls"); err != nil || st.GetOwner() != "alice" {
		t.Fatalf("gRPC over TLS through the mux: %v %v", st, err)
	}

	// Neither transport falls back to plaintext: a plaintext client of
	// either kind is refused by a TLS port.
	plain := NewConn(ts.addr, ClientOptions{})
	defer plain.Close()
	if _, err := stat(context.Background(), plain, "/x"); status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext IPC client on a TLS port: %v", err)
	}
	pg, err := grpc.NewClient(ts.addr, pki.DialOption(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2e9)
	defer cancel()
	if _, err := stat(ctx, pg, "/x"); err == nil {
		t.Error("plaintext gRPC client on a TLS port was answered")
	}
	// A TLS client of a plaintext port fails the handshake, never
	// continues in plaintext.
	ts2 := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	tc := NewConn(ts2.addr, ClientOptions{TLS: cliTLS})
	defer tc.Close()
	if _, err := stat(context.Background(), tc, "/x"); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("TLS IPC client on a plaintext port: %v", err)
	}
	// A client that does not trust the server's CA is refused.
	_, other := tlsConfigs(t)
	untrusting := NewConn(ts.addr, ClientOptions{TLS: other})
	defer untrusting.Close()
	if _, err := stat(context.Background(), untrusting, "/x"); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client not trusting the server's CA: %v", err)
	}
}

// The gRPC server behind the mux sees the TLS state as with its own TLS
// credentials, and so does an IPC handler.
func TestTLSInfoReachesHandlers(t *testing.T) {
	srvTLS, cliTLS := tlsConfigs(t)
	ts := startServer(t, "127.0.0.1:0", srvTLS, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{TLS: cliTLS})
	defer c.Close()
	gc, err := grpc.NewClient(ts.addr, pki.DialOption(cliTLS))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	for name, cc := range map[string]grpc.ClientConnInterface{"ipc": c, "grpc": gc} {
		if _, err := stat(context.Background(), cc, "/x"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ti, ok := (<-ts.auth).(credentials.TLSInfo)
		if !ok || !ti.State.HandshakeComplete || ti.SecurityLevel != credentials.PrivacyAndIntegrity {
			t.Errorf("%s: handler saw auth info %#v, want completed TLS", name, ti)
		}
	}
}

// A server that accepts and never answers holds a call no longer than its
// timeout, in the TLS handshake or waiting for the reply.
func TestSilentServerBoundedByTimeout(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never read
		}
	}()
	_, cliTLS := tlsConfigs(t)
	for name, opts := range map[string]ClientOptions{"plain": {}, "tls": {TLS: cliTLS}} {
		c := NewConn(lis.Addr().String(), opts)
		start := time.Now()
		var out dfspb.GetFileInfoResponse
		err := c.InvokeHeader(context.Background(), Header{}, 200*time.Millisecond,
			dfspb.ClientProtocol_GetFileInfo_FullMethodName, &dfspb.GetFileInfoRequest{Path: "/x"}, &out)
		if code := status.Code(err); code != codes.DeadlineExceeded && code != codes.Unavailable {
			t.Errorf("%s: got %v, want DeadlineExceeded or Unavailable", name, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: a 200ms call to a silent server returned after %v", name, d)
		}
		c.Close()
	}
}
