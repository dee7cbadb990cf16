package replog

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"smarth/internal/pki"
)

// tlsStream is raft's stream layer over mutual TLS: every connection,
// in and out, is TLS 1.3 where both ends present a certificate signed by
// the cluster CA (internal/pki issues every daemon one with both server
// and client usage). A peer without one, or with one from another CA, is
// refused in the handshake, before raft reads a byte: raft's RPCs carry
// no credential of their own, so whoever can speak them could vote or
// overwrite the namespace log.
type tlsStream struct {
	net.Listener
	client *tls.Config
	wrap   func(net.Conn) net.Conn // Config.WrapConn
}

func (s *tlsStream) wrapped(c net.Conn) net.Conn {
	if s.wrap == nil {
		return c
	}
	return s.wrap(c)
}

// mutualTLS builds the server and client configs from the daemon's TLS
// switch, which must be on.
func mutualTLS(c pki.Config) (server, client *tls.Config, err error) {
	if !c.TLS {
		return nil, nil, errors.New("replog: the raft transport needs tls: true (mutual TLS with the cluster CA)")
	}
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("replog: certificate %s / key %s: %w", c.CertFile, c.KeyFile, err)
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, nil, fmt.Errorf("replog: CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("replog: CA file %s holds no PEM certificate", c.CAFile)
	}
	server = &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}
	client = &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS13,
	}
	return server, client, nil
}

func listenTLS(addr string, server, client *tls.Config) (*tlsStream, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("replog: listen %s: %w", addr, err)
	}
	return &tlsStream{Listener: tls.NewListener(ln, server), client: client}, nil
}

// Accept finishes the handshake before handing the connection to raft,
// so a refused peer costs one logged line and never reaches raft's
// decoder.
func (s *tlsStream) Accept() (net.Conn, error) {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := c.(*tls.Conn)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			c.Close()
			continue
		}
		tc.SetDeadline(time.Time{})
		return s.wrapped(tc), nil
	}
}

// Dial verifies the peer's certificate for the host in address, as
// pki.Dialer does for every other daemon-to-daemon connection.
func (s *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	host, _, err := net.SplitHostPort(string(address))
	if err != nil {
		return nil, err
	}
	cfg := s.client.Clone()
	cfg.ServerName = host
	d := &net.Dialer{Timeout: timeout}
	c, err := tls.DialWithDialer(d, "tcp", string(address), cfg)
	if err != nil {
		return nil, fmt.Errorf("replog: dial %s: %w", address, err)
	}
	return s.wrapped(c), nil
}
