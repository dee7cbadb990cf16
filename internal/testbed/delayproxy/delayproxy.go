package delayproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"time"
)

// Delay is added to bytes going one way.
type Delay struct {
	Latency time.Duration `json:"latency"`
	Jitter  time.Duration `json:"jitter,omitempty"`
}

// Route forwards connections on Listen to Target.
type Route struct {
	Listen string `json:"listen"`
	Target string `json:"target"`
}

// Config is one host's proxy.
type Config struct {
	Routes []Route `json:"routes"`
	// Out delays bytes from the target back to the remote peer: this
	// host's own latency.
	Out Delay `json:"out"`
	// Peers delays bytes from a remote peer (by IP) to the target: the
	// peer's latency. Peers not listed get Default.
	Peers   map[string]Delay `json:"peers,omitempty"`
	Default Delay            `json:"default"`
}

// Validate checks the routes and delays.
func (c Config) Validate() error {
	if len(c.Routes) == 0 {
		return errors.New("delay proxy: no routes")
	}
	for _, r := range c.Routes {
		if _, _, err := net.SplitHostPort(r.Listen); err != nil {
			return fmt.Errorf("delay proxy: listen %q: %w", r.Listen, err)
		}
		if _, _, err := net.SplitHostPort(r.Target); err != nil {
			return fmt.Errorf("delay proxy: target %q: %w", r.Target, err)
		}
	}
	for _, d := range append([]Delay{c.Out, c.Default}, mapValues(c.Peers)...) {
		if d.Latency < 0 || d.Jitter < 0 || d.Latency > 10*time.Second || d.Jitter > 10*time.Second {
			return fmt.Errorf("delay proxy: delay %+v out of range (0 to 10s)", d)
		}
	}
	return nil
}

func mapValues(m map[string]Delay) []Delay {
	var ds []Delay
	for _, d := range m {
		ds = append(ds, d)
	}
	return ds
}

// LoadConfig reads a JSON config file.
func LoadConfig(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("delay proxy config %s: %w", path, err)
	}
	return c, c.Validate()
}

const (
	chunkSize  = 32 << 10
	lineChunks = 256 // per direction: 8 MiB in flight at most
)

// Proxy runs the routes of one Config.
type Proxy struct {
	cfg    Config
	logger *slog.Logger
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)

	mu        sync.Mutex // guards listeners, conns and closed
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
}

// New checks cfg and makes a proxy; Start opens its listeners.
func New(cfg Config, logger *slog.Logger) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var d net.Dialer
	return &Proxy{cfg: cfg, logger: logger, dial: d.DialContext, conns: map[net.Conn]struct{}{}}, nil
}

// Start listens on every route.
func (p *Proxy) Start() error {
	for _, r := range p.cfg.Routes {
		ln, err := net.Listen("tcp", r.Listen)
		if err != nil {
			p.Close()
			return fmt.Errorf("delay proxy: %w", err)
		}
		p.mu.Lock()
		p.listeners = append(p.listeners, ln)
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(ln, r.Target)
	}
	return nil
}

// Addrs are the bound listen addresses, in route order.
func (p *Proxy) Addrs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var a []string
	for _, ln := range p.listeners {
		a = append(a, ln.Addr().String())
	}
	return a
}

// Close stops listening and cuts every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for _, ln := range p.listeners {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) serve(ln net.Listener, target string) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.relay(c, target)
		}()
	}
}

// peerDelay is the delay for bytes from the remote end of c.
func (p *Proxy) peerDelay(c net.Conn) Delay {
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	if d, ok := p.cfg.Peers[host]; ok {
		return d
	}
	return p.cfg.Default
}

func (p *Proxy) relay(client net.Conn, target string) {
	in := p.peerDelay(client)
	// The connection to the daemon is opened at once, like a SYN passing
	// through; the handshake's own delay is not modelled.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	server, err := p.dial(ctx, "tcp", target)
	cancel()
	if err != nil {
		p.logger.Warn("delay proxy: dial target", "target", target, "err", err)
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); line(server, client, in) }()
	go func() { defer wg.Done(); line(client, server, p.cfg.Out) }()
	wg.Wait()
}

type chunk struct {
	data []byte // nil marks the end of the stream
	due  time.Time
}

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// line copies src to dst, delivering each chunk d after it was read. At
// the end of src it half-closes dst, so both directions end on their own.
func line(dst, src net.Conn, d Delay) {
	q := make(chan chunk, lineChunks)
	go func() {
		defer close(q)
		var last time.Time
		for {
			bp := chunks.Get().(*[]byte)
			n, err := src.Read(*bp)
			if n > 0 {
				due := time.Now().Add(jittered(d))
				if due.Before(last) {
					due = last // never overtake the chunk ahead
				}
				last = due
				q <- chunk{data: (*bp)[:n], due: due}
			} else {
				chunks.Put(bp)
			}
			if err != nil {
				q <- chunk{due: last}
				return
			}
		}
	}()
	failed := false
	for c := range q {
		if wait := time.Until(c.due); wait > 0 {
			time.Sleep(wait) // the delay itself: sleeping until the chunk is due
		}
		if c.data == nil {
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			continue
		}
		if !failed {
			if _, err := dst.Write(c.data); err != nil {
				failed = true
				src.Close() // unblock the reader; the peer is gone
			}
		}
		b := c.data[:cap(c.data)]
		chunks.Put(&b)
	}
}

func jittered(d Delay) time.Duration {
	if d.Jitter <= 0 {
		return d.Latency
	}
	j := time.Duration(rand.Int64N(int64(2*d.Jitter)+1)) - d.Jitter
	return max(0, d.Latency+j)
}
