package httpserver

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"smarth/internal/connlimit"
)

// Limits are a server's bounds, the same keys in every daemon's config
// (inlined). The zero value of a field means its default (Defaults).
type Limits struct {
	ReadHeaderTimeout time.Duration `yaml:"http_read_header_timeout"`      // a request's header: 10 s
	IdleTimeout       time.Duration `yaml:"http_idle_timeout"`             // a kept-alive connection between requests: 60 s
	IOTimeout         time.Duration `yaml:"http_io_timeout"`               // a body or response that makes no progress: 60 s
	MaxConns          int           `yaml:"http_max_connections"`          // open on the port: 1024, or an eighth of the open-file limit when lower
	MaxConnsPerHost   int           `yaml:"http_max_connections_per_host"` // open from one peer IP: a quarter of MaxConns
}

// Defaults fills in the zero fields of l.
func (l Limits) Defaults() Limits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = 10 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 60 * time.Second
	}
	if l.IOTimeout <= 0 {
		l.IOTimeout = 60 * time.Second
	}
	if l.MaxConns <= 0 {
		// An eighth of the descriptors: the RPC port may take half
		// (ipc.DefaultMaxConns), and the daemon's own files the rest. A
		// browser opens about six connections, a WebHDFS client one per
		// transfer; 1024 is far beyond a console's needs.
		l.MaxConns = min(connlimit.DefaultMaxConns(8), 1024)
	}
	if l.MaxConnsPerHost <= 0 {
		l.MaxConnsPerHost = max(l.MaxConns/4, 4)
	}
	return l
}

// Server is an HTTP server bounded by its Limits.
type Server struct {
	*http.Server
	Gate *connlimit.Gate // the port's connection counts
	lim  Limits
}

// New is a server for h, named what in its log lines ("namenode http").
// logger may be nil.
func New(what string, h http.Handler, lim Limits, logger *slog.Logger) *Server {
	lim = lim.Defaults()
	s := &Server{lim: lim, Gate: connlimit.NewGate(what, lim.MaxConns, lim.MaxConnsPerHost, logger)}
	s.Server = &http.Server{
		Handler:           withTLSState(progressDeadlines(h, lim.IOTimeout)),
		ConnContext:       rememberTLS,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		// The whole-exchange deadlines are set to the no-progress
		// timeout: they start each request and connection, and the
		// handler wrapper moves them on as bytes move.
		ReadTimeout:  lim.IOTimeout,
		WriteTimeout: lim.IOTimeout,
	}
	if logger != nil {
		s.Server.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	}
	return s
}

// Serve serves ln's connections that the server's gate admits. ln may be
// a TLS listener: its Accept returns before the handshake, which then
// runs under ReadHeaderTimeout.
func (s *Server) Serve(ln net.Listener) error {
	return s.Server.Serve(connlimit.Wrap(ln, s.Gate))
}

// The TLS of a request (http.Request.TLS). net/http sets it only on a
// connection that is itself a *tls.Conn, and the server's gate wraps each
// one (connlimit), so a handler saw every request as plain HTTP: the
// namenode's WebHDFS then redirected clients to http:// datanode URLs on
// TLS ports, and every WebHDFS upload over TLS ended in an empty reply
// (Hadoop's swebhdfs:// client: "Unexpected end of file from server").
// rememberTLS finds the *tls.Conn under the wrappers when the connection
// is accepted; withTLSState gives each request its state.

type tlsConnKey struct{}

func rememberTLS(ctx context.Context, c net.Conn) context.Context {
	for c != nil {
		if tc, ok := c.(*tls.Conn); ok {
			return context.WithValue(ctx, tlsConnKey{}, tc)
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = u.NetConn()
	}
	return ctx
}

func withTLSState(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			if tc, ok := r.Context().Value(tlsConnKey{}).(*tls.Conn); ok {
				st := tc.ConnectionState() // the handshake is done: the request was read through it
				r.TLS = &st
			}
		}
		h.ServeHTTP(w, r)
	})
}

// progressDeadlines moves the connection's read and write deadlines to
// timeout ahead whenever the handler reads request bytes or writes
// response bytes, at most once per timeout/4, so a transfer that moves
// never meets them and one that stalls meets them timeout after it
// stalled.
func progressDeadlines(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		pw := &progressWriter{ResponseWriter: w, d: deadline{set: rc.SetWriteDeadline, timeout: timeout}}
		if r.Body != nil && r.Body != http.NoBody {
			// A body that moves moves the write deadline too: the
			// response of an upload comes after it, however long it took.
			both := func(t time.Time) error {
				_ = rc.SetWriteDeadline(t)
				return rc.SetReadDeadline(t)
			}
			r.Body = &progressBody{ReadCloser: r.Body, d: deadline{set: both, timeout: timeout}}
		}
		h.ServeHTTP(pw, r)
		// What the handler left buffered (a status and a short body,
		// written after a long upload or computation) is flushed after
		// it returns: it gets a whole timeout too.
		_ = rc.SetWriteDeadline(time.Now().Add(timeout))
	})
}

// deadline is one direction's deadline, moved lazily: each move is a
// timer update, and a write takes microseconds.
type deadline struct {
	set     func(time.Time) error
	timeout time.Duration
	last    time.Time
}

func (d *deadline) progress() {
	if now := time.Now(); now.Sub(d.last) > d.timeout/4 {
		_ = d.set(now.Add(d.timeout))
		d.last = now
	}
}

type progressBody struct {
	io.ReadCloser
	d deadline
}

func (b *progressBody) Read(p []byte) (int, error) {
	b.d.progress()
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.d.progress()
	}
	return n, err
}

type progressWriter struct {
	http.ResponseWriter
	d deadline
}

// The most a write sends between deadline moves. A deadline moved at
// most every timeout/4 leaves at least 3/4 of it for the next chunk, so a
// peer is cut when it takes more than 45 s (of the default 60) for 64
// KiB of a response, or for 1 MiB of a file: far below any network's
// speed, while sendfile still sends a file in large pieces.
const (
	writeChunk = 64 << 10
	fileChunk  = 1 << 20
)

func (w *progressWriter) Write(b []byte) (int, error) {
	var done int
	for done < len(b) {
		w.d.progress()
		n, err := w.ResponseWriter.Write(b[done:min(len(b), done+writeChunk)])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// ReadFrom keeps the server's sendfile path for files (the shuffle's
// segments, logs) while moving the deadline between chunks.
func (w *progressWriter) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(writerOnly{w}, r)
	}
	var total int64
	for {
		w.d.progress()
		n, err := rf.ReadFrom(io.LimitReader(r, fileChunk))
		total += n
		if err != nil || n < fileChunk {
			return total, err
		}
	}
}

// writerOnly hides ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// WriteHeader moves the write deadline: the header goes out with the
// first write or flush, or when the handler returns.
func (w *progressWriter) WriteHeader(code int) {
	w.d.progress()
	w.ResponseWriter.WriteHeader(code)
}

// Flush passes flushes through (streaming responses).
func (w *progressWriter) Flush() {
	w.d.progress()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
