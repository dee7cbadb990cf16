package pki

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Config is the TLS switch of a daemon config, inlined into each daemon's
// Config so that the YAML keys are the same everywhere.
type Config struct {
	// TLS turns TLS on for every socket the daemon serves and dials.
	TLS bool `yaml:"tls"`
	// CertFile and KeyFile are the daemon's certificate chain and key
	// (PEM), presented on every server socket.
	CertFile string `yaml:"tls_cert_file"`
	KeyFile  string `yaml:"tls_key_file"`
	// CAFile is the cluster's CA (PEM); peers the daemon dials (the
	// namenode, other datanodes, the resource manager, node managers'
	// shuffle) must present a certificate it signed.
	CAFile string `yaml:"tls_ca_file"`
}

// Validate says which file is missing when TLS is on.
func (c Config) Validate() error {
	if !c.TLS {
		return nil
	}
	var errs []error
	for _, f := range []struct{ key, path string }{{"tls_cert_file", c.CertFile}, {"tls_key_file", c.KeyFile}, {"tls_ca_file", c.CAFile}} {
		if f.path == "" {
			errs = append(errs, fmt.Errorf("tls: true needs %s", f.key))
		}
	}
	return errors.Join(errs...)
}

// Server is the tls.Config of the daemon's server sockets; nil when TLS
// is off.
func (c Config) Server() (*tls.Config, error) {
	if !c.TLS {
		return nil, nil
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: certificate %s / key %s: %w", c.CertFile, c.KeyFile, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS13,
		// h2 for gRPC (which enforces ALPN), http/1.1 for the web
		// servers and the shuffle (Listen keeps only that one).
		NextProtos: []string{"h2", "http/1.1"},
	}, nil
}

// Client is the tls.Config the daemon dials its peers with; nil when TLS
// is off.
func (c Config) Client() (*tls.Config, error) {
	if !c.TLS {
		return nil, nil
	}
	if c.CAFile == "" {
		return nil, errors.New("tls: true needs tls_ca_file")
	}
	return ClientConfig(c.CAFile)
}

// ClientConfig trusts the CA in caFile, and only it.
//
// Calls that find the same CA (same file, same bytes) get the same
// *tls.Config, which callers must therefore Clone before changing (every
// dialer here does). The pointer is what keys a process's shared
// namenode connection (internal/client's nnConns): when each client of
// `smarth bench nn --threads 64` loaded its own copy, a TLS cluster got
// 64 connections where a plaintext one gets one, and the namenode
// answered each group commit with 64 TLS writes instead of one.
func ClientConfig(caFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("tls: CA: %w", err)
	}
	clientConfigs.Lock()
	defer clientConfigs.Unlock()
	if c, ok := clientConfigs.m[caFile]; ok && bytes.Equal(c.pem, pem) {
		return c.cfg, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls: CA file %s holds no PEM certificate", caFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
	// One entry per CA file: a CA rewritten in place replaces its entry,
	// so the map grows only with the number of CA paths a process uses.
	clientConfigs.m[caFile] = clientConfigEntry{pem: pem, cfg: cfg}
	return cfg, nil
}

// clientConfigs is ClientConfig's cache, by CA file path.
var clientConfigs = struct {
	sync.Mutex
	m map[string]clientConfigEntry
}{m: map[string]clientConfigEntry{}}

type clientConfigEntry struct {
	pem []byte
	cfg *tls.Config
}

// Listen binds addr for an HTTP/1.1 server (a web port, the shuffle) and,
// with t non-nil, wraps the listener in TLS: the server put on it speaks
// TLS without knowing it. Its handshakes offer only "http/1.1": net/http
// serves HTTP/2 only on a *tls.Conn it is handed itself, and the servers'
// connection gates (httpserver, connlimit) wrap each one, so a client that
// negotiated h2 (every browser, curl) would send HTTP/2 to an HTTP/1.1
// server and get an empty reply.
func Listen(addr string, t *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil || t == nil {
		return ln, err
	}
	t = t.Clone()
	t.NextProtos = []string{"http/1.1"}
	return tls.NewListener(ln, t), nil
}

// ServerOption is the gRPC server's transport credentials (none when t is
// nil).
func ServerOption(t *tls.Config) []grpc.ServerOption {
	if t == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(t))}
}

// DialOption is a gRPC client's transport credentials: TLS verified
// against the CA when t is non-nil, else plaintext.
func DialOption(t *tls.Config) grpc.DialOption {
	if t == nil {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(t))
}

// Dialer wraps dial in a TLS client handshake verified against t (for the
// name in addr); with t nil it returns dial unchanged. The handshake is
// bounded by ctx.
func Dialer(t *tls.Config, dial func(ctx context.Context, addr string) (net.Conn, error)) func(ctx context.Context, addr string) (net.Conn, error) {
	if t == nil {
		return dial
	}
	return func(ctx context.Context, addr string) (net.Conn, error) {
		raw, err := dial(ctx, addr)
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			raw.Close()
			return nil, err
		}
		cfg := t.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
		}
		return conn, nil
	}
}

// Scheme is the URL scheme of a daemon's HTTP servers: https with TLS on.
func Scheme(t *tls.Config) string {
	if t != nil {
		return "https"
	}
	return "http"
}
