package replog

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"smarth/internal/connlimit"
	"smarth/internal/pki"
)

// tlsStream is raft's stream layer over mutual TLS: every connection,
// in and out, is TLS 1.3 where both ends present a certificate signed by
// the cluster CA (internal/pki issues every daemon one with both server
// and client usage). A peer without one, or with one from another CA, is
// refused in the handshake, before raft reads a byte: raft's RPCs carry
// no credential of their own, so whoever can speak them could vote or
// overwrite the namespace log.
//
// The CA vouches for every daemon of the cluster, not only namenodes, so
// a certificate must also name a member of this group (peerNames): a
// datanode's or node manager's certificate is refused like a foreign
// one. Without that check a host that lost a datanode's key could send
// AppendEntries at a higher term (raft takes the sender's word for who
// it is) and have the followers apply namespace records of its making,
// as HDFS's JournalNodes refuse QJournalProtocol to any principal but
// the namenodes'.
//
// Handshakes run one goroutine each, bounded per peer host and in all
// (gate), and Accept hands raft only finished ones: a peer that opens a
// connection and sends nothing holds its own goroutine until the
// handshake deadline, not the port. (Accept used to run each handshake
// itself, so every such connection shut the port for 10 seconds: no
// vote, no new replication connection, no failover.)
type tlsStream struct {
	ln     net.Listener
	server *tls.Config
	client *tls.Config
	wrap   func(net.Conn) net.Conn // Config.WrapConn
	gate   *connlimit.Gate
	log    *slog.Logger

	conns     chan net.Conn // finished handshakes, for Accept
	closed    chan struct{}
	closeOnce sync.Once
	acceptErr error // set before closed is closed, by the accept loop
}

// Bounds of the raft port. A member keeps a few connections to each
// other (raft's pool of MaxPool, a pipeline, heartbeats); the bounds
// leave room for a group of 9 on one host (tests) and refuse a flood.
const (
	raftMaxConns        = 512
	raftMaxConnsPerHost = 128
	raftHandshake       = 10 * time.Second
)

func (s *tlsStream) wrapped(c net.Conn) net.Conn {
	if s.wrap == nil {
		return c
	}
	return s.wrap(c)
}

// peerNames decides which cluster certificates belong to the group: the
// certificate names of this node (members sharing one certificate), the
// ids of the members it was configured with and of those in the group's
// current configuration (cluster up names each member's certificate
// after its id), and Config.PeerNames (an operator's certificates named
// otherwise). A certificate matches by its common
// name or one of its DNS names.
type peerNames struct {
	own    string // this node's certificate's common name
	static map[string]bool
	live   atomic.Pointer[func() []string] // the current configuration's ids, once raft runs
	// log takes a refusal: only a certificate of the cluster's own CA
	// gets this far, so it is a daemon, or a member whose certificate
	// is named otherwise (ha_peer_names), which its operator must hear
	// of. At most one line per refusalLogEvery.
	log      *slog.Logger
	logMu    sync.Mutex
	loggedAt time.Time
	unlogged int
}

const refusalLogEvery = 10 * time.Second

func (p *peerNames) allows(cert *x509.Certificate) bool {
	names := append([]string{cert.Subject.CommonName}, cert.DNSNames...)
	if p.own != "" && cert.Subject.CommonName == p.own {
		return true
	}
	var live []string
	if f := p.live.Load(); f != nil {
		live = (*f)()
	}
	for _, n := range names {
		if n != "" && (p.static[n] || slices.Contains(live, n)) {
			return true
		}
	}
	return false
}

// verify is the tls.Config.VerifyConnection of both ends: the chain has
// been checked against the CA by then.
func (p *peerNames) verify(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("replog: the peer presented no certificate")
	}
	leaf := cs.PeerCertificates[0]
	if !p.allows(leaf) {
		err := fmt.Errorf("replog: certificate %q (DNS names %v) names no member of this group; "+
			"the raft port is for the group's namenodes (ha_peer_names lists other names to accept)",
			leaf.Subject.CommonName, leaf.DNSNames)
		p.refused(err)
		return err
	}
	return nil
}

func (p *peerNames) refused(err error) {
	if p.log == nil {
		return
	}
	p.logMu.Lock()
	defer p.logMu.Unlock()
	p.unlogged++
	if now := time.Now(); now.Sub(p.loggedAt) >= refusalLogEvery {
		p.log.Warn("raft connection refused", "error", err, "refused_since_last_line", p.unlogged)
		p.loggedAt, p.unlogged = now, 0
	}
}

// mutualTLS builds the server and client configs from the daemon's TLS
// switch, which must be on, with names deciding which cluster
// certificates are the group's.
func mutualTLS(c pki.Config, names *peerNames) (server, client *tls.Config, err error) {
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
	if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
		names.own = leaf.Subject.CommonName
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
		Certificates:     []tls.Certificate{cert},
		ClientCAs:        pool,
		ClientAuth:       tls.RequireAndVerifyClientCert,
		MinVersion:       tls.VersionTLS13,
		VerifyConnection: names.verify,
	}
	client = &tls.Config{
		Certificates:     []tls.Certificate{cert},
		RootCAs:          pool,
		MinVersion:       tls.VersionTLS13,
		VerifyConnection: names.verify,
	}
	return server, client, nil
}

func listenTLS(addr string, server, client *tls.Config, log *slog.Logger) (*tlsStream, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("replog: listen %s: %w", addr, err)
	}
	s := &tlsStream{ln: ln, server: server, client: client, log: log,
		gate:  connlimit.NewGate("raft port", raftMaxConns, raftMaxConnsPerHost, log),
		conns: make(chan net.Conn), closed: make(chan struct{})}
	go s.acceptLoop()
	return s, nil
}

// acceptLoop admits connections and starts their handshakes.
func (s *tlsStream) acceptLoop() {
	var pause time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if connlimit.Temporary(err) {
				pause = connlimit.AcceptBackoff(pause)
				select {
				case <-time.After(pause):
					continue
				case <-s.closed:
					return
				}
			}
			s.closeOnce.Do(func() {
				s.acceptErr = err
				close(s.closed)
			})
			return
		}
		pause = 0
		if ac, ok := s.gate.Admit(c); ok {
			go s.handshake(ac)
		}
	}
}

// handshake finishes one connection's TLS handshake within
// raftHandshake and hands it to Accept; a refused or silent peer costs a
// debug line.
func (s *tlsStream) handshake(c net.Conn) {
	tc := tls.Server(c, s.server)
	tc.SetDeadline(time.Now().Add(raftHandshake))
	if err := tc.Handshake(); err != nil {
		s.log.Debug("raft connection refused", "peer", c.RemoteAddr().String(), "error", err)
		c.Close()
		return
	}
	tc.SetDeadline(time.Time{})
	select {
	case s.conns <- tc:
	case <-s.closed:
		tc.Close()
	}
}

// Accept gives the next connection whose handshake is done.
func (s *tlsStream) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return s.wrapped(c), nil
	case <-s.closed:
		if s.acceptErr != nil {
			return nil, s.acceptErr
		}
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections already handed to raft stay.
func (s *tlsStream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return s.ln.Close()
}

// Addr is the port's address.
func (s *tlsStream) Addr() net.Addr { return s.ln.Addr() }

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
