package connlimit

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Gate counts the connections open on one port and admits a new one only
// below the port's bound and its peer's.
type Gate struct {
	what string // the port, for the refusal log ("http port")
	log  *slog.Logger

	maxConns   atomic.Int64 // 0: no bound
	maxPerHost atomic.Int64 // 0: no bound
	open       atomic.Int64 // connections admitted and not yet closed
	refused    atomic.Uint64

	hostsMu sync.Mutex
	hosts   map[string]int // open connections per peer IP; guarded by hostsMu

	// The refusal log: at most one line per refusalLogEvery, saying how
	// many were refused since the last; guarded by logMu.
	logMu         sync.Mutex
	refusalLogged time.Time
	refusedLogged uint64
}

// refusalLogEvery spaces the log lines about refused connections: a
// client reconnecting in a loop must not fill the log.
const refusalLogEvery = 10 * time.Second

// NewGate is a gate for the port named what (in its log lines), bounding
// its connections to maxConns and those of one peer IP to maxPerHost
// (<= 0: no bound). logger may be nil.
func NewGate(what string, maxConns, maxPerHost int, logger *slog.Logger) *Gate {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Gate{what: what, log: logger, hosts: map[string]int{}}
	g.SetMaxConns(maxConns)
	g.SetMaxConnsPerHost(maxPerHost)
	return g
}

// SetMaxConns bounds the connections open at once (n <= 0: no bound). It
// may be called at any time; connections already open stay.
func (g *Gate) SetMaxConns(n int) { g.maxConns.Store(int64(max(n, 0))) }

// SetMaxConnsPerHost bounds the connections open from one peer IP address
// at once (n <= 0: no bound).
func (g *Gate) SetMaxConnsPerHost(n int) { g.maxPerHost.Store(int64(max(n, 0))) }

// Conns is the number of connections open.
func (g *Gate) Conns() int { return int(g.open.Load()) }

// ConnsOf is the number of connections open from one peer IP.
func (g *Gate) ConnsOf(ip string) int {
	g.hostsMu.Lock()
	defer g.hostsMu.Unlock()
	return g.hosts[ip]
}

// Refused is the number of connections reset at accept.
func (g *Gate) Refused() uint64 { return g.refused.Load() }

// Admit takes c into the count, returning it wrapped so that its Close
// gives the slot back (whoever closes it, however often); or, at either
// bound, resets c and returns false.
func (g *Gate) Admit(c net.Conn) (net.Conn, bool) {
	release, ok := g.Take(c)
	if !ok {
		return nil, false
	}
	return &countedConn{Conn: c, release: release}, true
}

// Take is Admit without wrapping c, for a server that needs the
// connection's own type (the datanode sends blocks with sendfile on the
// *net.TCPConn): it must call release once, when it closes c.
func (g *Gate) Take(c net.Conn) (release func(), ok bool) {
	host := PeerIP(c)
	g.hostsMu.Lock()
	// The check and the take happen under one lock, so concurrent
	// accepts cannot both take the last slot.
	if n := g.maxConns.Load(); n > 0 && g.open.Load() >= n {
		g.hostsMu.Unlock()
		g.refuse(c, "the port has its maximum of connections open", n)
		return nil, false
	}
	if n := g.maxPerHost.Load(); n > 0 && int64(g.hosts[host]) >= n {
		g.hostsMu.Unlock()
		g.refuse(c, "the peer has its maximum of connections open", n)
		return nil, false
	}
	g.hosts[host]++
	g.open.Add(1)
	g.hostsMu.Unlock()
	return func() { g.release(host) }, true
}

func (g *Gate) release(host string) {
	g.hostsMu.Lock()
	defer g.hostsMu.Unlock()
	if g.hosts[host]--; g.hosts[host] <= 0 {
		delete(g.hosts, host)
	}
	g.open.Add(-1)
}

// refuse closes a connection accepted beyond a bound. It is reset rather
// than closed gracefully: the client learns at once (its next read or
// write fails), and the port keeps no TIME_WAIT state for a client that
// reconnects in a loop.
func (g *Gate) refuse(c net.Conn, why string, limit int64) {
	// Counted before the close: a client that has seen its reset must
	// find it in Refused (the count was once taken after, and a test
	// reading it the moment its client failed saw one too few).
	total := g.refused.Add(1)
	if tc := tcpConn(c); tc != nil {
		_ = tc.SetLinger(0)
	}
	c.Close()
	g.logMu.Lock()
	defer g.logMu.Unlock()
	if now := time.Now(); now.Sub(g.refusalLogged) >= refusalLogEvery {
		g.log.Warn(g.what+" connection refused: "+why,
			"peer", c.RemoteAddr().String(), "max_connections", limit,
			"refused_since_last_logged", total-g.refusedLogged)
		g.refusalLogged, g.refusedLogged = now, total
	}
}

// tcpConn finds the TCP socket under c (a TLS listener's connection
// before its handshake wraps one).
func tcpConn(c net.Conn) *net.TCPConn {
	for {
		switch v := c.(type) {
		case *net.TCPConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
}

// PeerIP is the address a connection comes from, without its port.
func PeerIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// countedConn gives back its slot when closed, by whichever holder closes
// it.
type countedConn struct {
	net.Conn
	release func()
	closed  atomic.Bool
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.release()
	}
	return err
}

// NetConn is the connection counted, as tls.Conn's NetConn: code that
// tunes the socket (buffer sizes) finds it through this.
func (c *countedConn) NetConn() net.Conn { return c.Conn }

// Listener is a net.Listener whose Accept hands out only connections its
// Gate admits; the others are reset inside Accept.
type Listener struct {
	net.Listener
	*Gate
}

// Wrap bounds ln's connections with g.
func Wrap(ln net.Listener, g *Gate) *Listener { return &Listener{Listener: ln, Gate: g} }

// Accept returns the next admitted connection.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ac, ok := l.Admit(c); ok {
			return ac, nil
		}
	}
}

// DefaultMaxConns is a bound for a port that shares the process's
// descriptors with others: 4096, or the process's limit on open files
// divided by share when that is lower (at least 16), so that a flood of
// one port leaves descriptors for the process's other ports and files.
func DefaultMaxConns(share int) int {
	const bound = 4096
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur/uint64(max(share, 1)) < bound {
		return int(max(lim.Cur/uint64(max(share, 1)), 16))
	}
	return bound
}

// Temporary reports an accept error worth retrying, such as EMFILE or
// ENFILE when clients hold every descriptor the process may open
// (grpc.Server and http.Server retry the same errors): a port that
// stopped at the first would let one flood close it for good.
func Temporary(err error) bool {
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary() && !errors.Is(err, net.ErrClosed)
}

// AcceptBackoff is the pause after a failed accept: 5 ms, doubling to at
// most 1 s, as http.Server's.
func AcceptBackoff(last time.Duration) time.Duration {
	if last == 0 {
		return 5 * time.Millisecond
	}
	return min(2*last, time.Second)
}
