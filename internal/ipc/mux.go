package ipc

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"smarth/internal/connlimit"
)

// Mux shares one listening port between gRPC and this transport. With TLS
// it terminates TLS itself (offering both "h2" and ALPN), so both servers
// get decrypted connections; then, TLS or not, it reads the first bytes the
// client sends: HTTP/2's client preface ("PRI * HTTP/2.0") goes to the
// gRPC listener, Preface to the IPC one, anything else is closed. Reading
// after the handshake rather than trusting ALPN alone means a client that
// offers no ALPN still lands on the protocol it speaks.
//
// The mux also bounds the connections open on the port (SetMaxConns), and
// those of each peer address (SetMaxConnsPerHost), gRPC's and IPC's
// together: it is the one place that sees every
// connection from accept to close, TLS handshakes included, and gRPC has
// no connection limit of its own (MaxConcurrentStreams bounds streams per
// connection, not connections).
type Mux struct {
	lis    net.Listener
	tls    *tls.Config
	log    *slog.Logger
	grpcL  *chanListener
	ipcL   *chanListener
	closed chan struct{}
	once   sync.Once

	// gate bounds the connections open on the port, and those of one
	// peer address, so that one host, a flood or a leak, cannot take the
	// whole port from the others: datanodes share it, and a datanode
	// refused for long enough is declared dead. The daemons' HTTP ports
	// and the datanode's data port count theirs with the same gate.
	gate *connlimit.Gate
}

// DefaultMaxConns is the bound NewMux sets on the connections of a port:
// 4096, or half the process's limit on open files when that is lower, so
// that the files the server opens itself (journal segments, checkpoints,
// its HTTP port's connections) still find descriptors when clients hold
// the rest. Hadoop IPC's ipc.server.max.connections is unbounded (0) by
// default; here a port is bounded unless its owner says otherwise. An
// idle connection holds a 32 KiB read buffer, a 32 KiB write buffer and a
// reader goroutine's stack (more with TLS), so 4096 of them over 256 MiB.
func DefaultMaxConns() int { return connlimit.DefaultMaxConns(2) }

// DefaultMaxConnsPerHost is the bound NewMux sets on the connections of
// one peer address: a quarter of DefaultMaxConns, so at least four hosts
// can each hold as many as any one may. A host's processes share one
// connection each (the smarth client shares it per process), so this is
// hundreds of processes on one host.
func DefaultMaxConnsPerHost() int { return max(DefaultMaxConns()/4, 4) }

// handshakeTimeout bounds the TLS handshake and the first bytes of a
// connection: a client that connects and says nothing is dropped.
const handshakeTimeout = 10 * time.Second

// NewMux routes lis's connections; with t non-nil, every connection must
// complete a TLS handshake with t (whose NextProtos gain "h2" and ALPN).
func NewMux(lis net.Listener, t *tls.Config, logger *slog.Logger) *Mux {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if t != nil {
		t = t.Clone()
		t.NextProtos = []string{"h2", ALPN}
	}
	closed := make(chan struct{})
	m := &Mux{lis: lis, tls: t, log: logger, closed: closed,
		grpcL: &chanListener{addr: lis.Addr(), c: make(chan net.Conn), done: make(chan struct{}), muxDone: closed},
		ipcL:  &chanListener{addr: lis.Addr(), c: make(chan net.Conn), done: make(chan struct{}), muxDone: closed}}
	m.gate = connlimit.NewGate("rpc", DefaultMaxConns(), DefaultMaxConnsPerHost(), logger)
	return m
}

// SetMaxConns bounds the connections open on the port at once, counted
// from accept to close whichever server holds them (n <= 0: no bound).
// A connection beyond it is closed as soon as it is accepted, before any
// handshake (as Hadoop IPC's listener does past
// ipc.server.max.connections), counted in Refused, and logged at most
// once every 10 s. It may be called at any time; connections already
// open stay.
func (m *Mux) SetMaxConns(n int) { m.gate.SetMaxConns(n) }

// SetMaxConnsPerHost bounds the connections open from one peer IP address
// at once (n <= 0: no bound); beyond it a connection is refused as beyond
// SetMaxConns.
func (m *Mux) SetMaxConnsPerHost(n int) { m.gate.SetMaxConnsPerHost(n) }

// Conns is the number of connections open on the port.
func (m *Mux) Conns() int { return m.gate.Conns() }

// Refused is the number of connections closed at accept because the port
// had its maximum open.
func (m *Mux) Refused() uint64 { return m.gate.Refused() }

// GRPC is the listener to pass to grpc.Server.Serve.
func (m *Mux) GRPC() net.Listener { return m.grpcL }

// IPC is the listener to pass to Server.Serve.
func (m *Mux) IPC() net.Listener { return m.ipcL }

// GRPCServerOptions are the options the gRPC server needs on the mux:
// with TLS, credentials that take the mux's already-decrypted connections
// and report their TLS state as gRPC's own TLS credentials would.
func (m *Mux) GRPCServerOptions() []grpc.ServerOption {
	if m.tls == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(terminatedTLS{})}
}

// Serve accepts until Close. A temporary accept error (EMFILE when
// clients hold every descriptor the process may open) is retried after a
// pause of 5 ms doubling to 1 s, as grpc.Server and http.Server do, so a
// burst of clients cannot close the port for good; any other error closes
// the mux and is returned.
func (m *Mux) Serve() error {
	var pause time.Duration
	for {
		c, err := m.lis.Accept()
		if err != nil {
			select {
			case <-m.closed:
				return nil
			default:
			}
			if isTemporary(err) {
				pause = acceptBackoff(pause)
				m.log.Warn("rpc port: accept failed; retrying", "error", err, "retry_in", pause)
				select {
				case <-time.After(pause):
				case <-m.closed:
					return nil
				}
				continue
			}
			m.Close()
			return err
		}
		pause = 0
		// Beyond the port's bound or the peer's, the gate resets the
		// connection here, before any handshake (as Hadoop IPC's
		// listener does past ipc.server.max.connections). The
		// connection it admits gives its slot back when closed, by
		// whichever holder closes it: the mux (a failed handshake, an
		// unknown protocol), the IPC server, gRPC, or tls.Conn's Close.
		if cc, ok := m.gate.Admit(c); ok {
			go m.route(cc)
		}
	}
}

// Close closes the port; the two listeners then stop accepting.
func (m *Mux) Close() error {
	var err error
	m.once.Do(func() {
		close(m.closed)
		err = m.lis.Close()
	})
	return err
}

func (m *Mux) route(raw net.Conn) {
	_ = raw.SetDeadline(time.Now().Add(handshakeTimeout))
	nc := raw
	var st *tls.ConnectionState
	if m.tls != nil {
		tc := tls.Server(raw, m.tls)
		if err := tc.Handshake(); err != nil {
			m.log.Warn("rpc connection refused: TLS handshake failed", "peer", raw.RemoteAddr().String(), "error", err)
			raw.Close()
			return
		}
		s := tc.ConnectionState()
		st, nc = &s, tc
	}
	var head [4]byte
	if _, err := io.ReadFull(nc, head[:]); err != nil {
		m.log.Debug("rpc connection closed before its first bytes", "peer", raw.RemoteAddr().String(), "error", err)
		nc.Close()
		return
	}
	_ = raw.SetDeadline(time.Time{})
	sc := &sniffedConn{Conn: nc, head: head[:], tls: st}
	var to *chanListener
	switch string(head[:]) {
	case "PRI ":
		to = m.grpcL
	case Preface[:4]:
		to = m.ipcL
	default:
		m.log.Warn("rpc connection refused: neither gRPC nor smarth IPC", "peer", raw.RemoteAddr().String(), "first_bytes", head[:])
		nc.Close()
		return
	}
	if st != nil && st.NegotiatedProtocol != "" && (st.NegotiatedProtocol == ALPN) != (to == m.ipcL) {
		m.log.Warn("rpc connection refused: protocol does not match its ALPN", "peer", raw.RemoteAddr().String(), "alpn", st.NegotiatedProtocol)
		nc.Close()
		return
	}
	if !to.deliver(sc) {
		nc.Close()
	}
}

// sniffedConn replays the bytes the mux read before handing it on.
type sniffedConn struct {
	net.Conn
	head []byte
	tls  *tls.ConnectionState // nil without TLS
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// chanListener is a listener fed by the mux.
type chanListener struct {
	addr    net.Addr
	c       chan net.Conn
	done    chan struct{}
	muxDone chan struct{}
	once    sync.Once
}

func (l *chanListener) deliver(c net.Conn) bool {
	select {
	case l.c <- c:
		return true
	case <-l.done:
	case <-l.muxDone:
	}
	return false
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
	case <-l.muxDone:
	}
	return nil, net.ErrClosed
}

// Close stops this listener only; the port stays open until Mux.Close.
func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// terminatedTLS is a gRPC server credential for connections whose TLS the
// mux has already terminated: it refuses any other connection, so a
// plaintext connection cannot slip past it.
type terminatedTLS struct{}

var errNotTLS = errors.New("ipc: connection was not TLS-terminated by the mux")

func (terminatedTLS) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	sc, ok := c.(*sniffedConn)
	if !ok || sc.tls == nil {
		return nil, nil, errNotTLS
	}
	if p := sc.tls.NegotiatedProtocol; p != "" && p != "h2" {
		return nil, nil, errors.New("ipc: gRPC connection negotiated ALPN " + p)
	}
	return c, credentials.TLSInfo{State: *sc.tls, CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (terminatedTLS) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("ipc: terminatedTLS is a server credential")
}

func (terminatedTLS) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls", SecurityVersion: "1.3"}
}

func (terminatedTLS) Clone() credentials.TransportCredentials { return terminatedTLS{} }

func (terminatedTLS) OverrideServerName(string) error { return nil }
