package ipc

// Tests of the port-wide bounds (issue 15's review leftovers): the
// connections open on the mux's port, gRPC's and IPC's together; the
// calls being handled across all connections; and the client's write
// deadline against a server that stops reading.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// waitConns waits until the port counts n open connections.
func waitConns(t *testing.T, m *Mux, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); m.Conns() != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the port counts %d open connections 10 s on, want %d", m.Conns(), n)
		}
	}
}

// A connection beyond the port's maximum is closed as soon as it is
// accepted, whichever protocol it would speak, and the bound counts gRPC
// and IPC connections together; closing one lets the next one in.
func TestConnectionsCappedAcrossGRPCAndIPC(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	ts.mux.SetMaxConns(4)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	newGRPC := func() *grpc.ClientConn {
		gc, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gc.Close() })
		return gc
	}
	// Two of each: the port is full.
	ic1, ic2 := NewConn(ts.addr, ClientOptions{}), NewConn(ts.addr, ClientOptions{})
	defer ic1.Close()
	defer ic2.Close()
	gc1, gc2 := newGRPC(), newGRPC()
	for i, cc := range []grpc.ClientConnInterface{ic1, ic2, gc1, gc2} {
		if _, err := stat(ctx, cc, "/a"); err != nil {
			t.Fatalf("client %d of 4 under a maximum of 4: %v", i+1, err)
		}
	}
	waitConns(t, ts.mux, 4)

	// A fifth raw connection is closed before it says anything: within
	// a second, not at the 10 s handshake timeout of a silent one.
	start := time.Now()
	nc, err := net.Dial("tcp", ts.addr)
	if err == nil { // else the reset came back before connect returned
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = nc.Read(make([]byte, 1))
		nc.Close()
	}
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) || time.Since(start) > 2*time.Second {
		t.Errorf("a 5th connection to a port with a maximum of 4: read = %v after %v, want it closed at once", err, time.Since(start).Round(time.Millisecond))
	}
	// A fifth client of either protocol is refused.
	ic3 := NewConn(ts.addr, ClientOptions{})
	defer ic3.Close()
	if _, err := stat(ctx, ic3, "/b"); status.Code(err) != codes.Unavailable {
		t.Errorf("a 5th IPC client: %v, want Unavailable", err)
	}
	gctx, gcancel := context.WithTimeout(ctx, 3*time.Second)
	gc5 := newGRPC()
	if _, err := stat(gctx, gc5, "/b"); err == nil {
		t.Error("a 5th gRPC client was served on a port with a maximum of 4")
	}
	gcancel()
	gc5.Close() // or it keeps dialling, and could take the slot freed below
	if n := ts.mux.Conns(); n != 4 {
		t.Errorf("the port counts %d connections after refusing, want 4", n)
	}
	if ts.mux.Refused() < 3 {
		t.Errorf("Refused() = %d after refusing at least 3 connections", ts.mux.Refused())
	}

	// A closed IPC connection gives its slot back, then a closed gRPC one.
	ic1.Close()
	waitConns(t, ts.mux, 3)
	if _, err := stat(ctx, ic3, "/c"); err != nil {
		t.Errorf("an IPC client once an IPC connection closed: %v", err)
	}
	gc1.Close()
	waitConns(t, ts.mux, 3)
	if _, err := stat(ctx, newGRPC(), "/c"); err != nil {
		t.Errorf("a gRPC client once a gRPC connection closed: %v", err)
	}
	// The gRPC and IPC connections still open were served throughout.
	for i, cc := range []grpc.ClientConnInterface{ic2, gc2} {
		if _, err := stat(ctx, cc, "/d"); err != nil {
			t.Errorf("client %d held through the refusals: %v", i, err)
		}
	}
}

// Refusals are counted, each one, and logged once per interval: a client
// reconnecting in a loop does not fill the log. A connection that failed
// its handshake or spoke neither protocol gives its slot back.
func TestRefusalsCountedAndLoggedOncePerInterval(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	m := NewMux(lis, nil, slog.New(slog.NewTextHandler(&log, nil)))
	m.SetMaxConns(1)
	go m.Serve()
	defer m.Close()
	held, err := net.Dial("tcp", lis.Addr().String()) // silent: held until the handshake timeout
	if err != nil {
		t.Fatal(err)
	}
	waitConns(t, m, 1)
	const refused = 25
	for range refused {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			continue // the reset came back before connect returned
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1)) // returns when the mux closed it
		c.Close()
		if isTimeout(err) {
			t.Fatalf("connection %d beyond a maximum of 1 still open after 5 s", m.Refused()+1)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); m.Refused() < refused && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := m.Refused(); got != refused {
		t.Errorf("Refused() = %d after %d connections beyond the maximum", got, refused)
	}
	if n := strings.Count(log.String(), "maximum of connections"); n != 1 {
		t.Errorf("%d refusals within a second logged %d lines, want 1:\n%s", refused, n, log.String())
	}
	// Garbage instead of a preface: the mux closes it and the slot is
	// free again for a client.
	held.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	held.Close()
	waitConns(t, m, 0)
}

// The calls being handled at once are bounded across connections, not
// only per connection: 3 connections x 5 blocked calls start only
// MaxCalls handlers; the others wait unread and are served, not refused,
// once handlers return.
func TestCallsBoundedAcrossConnections(t *testing.T) {
	const maxCalls = 4
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{MaxCalls: maxCalls})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, 15)
	for range 3 {
		c := NewConn(ts.addr, ClientOptions{})
		defer c.Close()
		for range 5 {
			go func() {
				_, err := stat(ctx, c, "/block")
				errs <- err
			}()
		}
	}
	started := 0
	for started < maxCalls {
		select {
		case <-ts.nn.started:
			started++
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d handlers started within 10 s", started, maxCalls)
		}
	}
	// Give the other 11 calls time to arrive: none may start.
	time.Sleep(500 * time.Millisecond)
	if extra := len(ts.nn.started); extra > 0 {
		t.Errorf("%d handlers running across 3 connections, more than MaxCalls=%d", maxCalls+extra, maxCalls)
	}
	close(ts.nn.release)
	for range 15 {
		if err := <-errs; err != nil {
			t.Errorf("a call that waited for a handler: %v, want it served", err)
		}
	}
}

// waitWriterStuck waits until a connection's reply writer has been
// writing for 200 ms on end: its client reads nothing.
func waitWriterStuck(t *testing.T, s *Server) {
	t.Helper()
	writing := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			c.w.mu.Lock()
			w := c.w.writing
			c.w.mu.Unlock()
			if w {
				return true
			}
		}
		return false
	}
	var since time.Time
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		switch {
		case !writing():
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) > 200*time.Millisecond:
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no reply writer stuck after 10 s")
		}
	}
}

// A client that does not read its replies holds no handler slot: its
// replies wait in its connection's queue (bounded by MaxInFlight), while
// other clients' calls are handled. With MaxCalls 1 a slot held until the
// reply is written would stop the server for the write timeout.
func TestClientThatDoesNotReadHoldsNoCallSlot(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{MaxCalls: 1, MaxInFlight: 16})
	nonReader(t, ts.addr, 100)
	waitWriterStuck(t, ts.ipc)
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 20 {
		if _, err := stat(ctx, c, "/x"); err != nil {
			t.Fatalf("call %d beside a client that does not read (MaxCalls 1): %v", i, err)
		}
	}
}

// fastWriteDeadlineConn runs a connection's write deadlines writeScale
// times fast: the client's 60 s WriteTimeout becomes 300 ms without a
// hook in the client. Only the server below, which never reads, may see
// it: the deadline set on the first write is not renewed for 30 s, so a
// healthy connection would fail 300 ms after its first write.
type fastWriteDeadlineConn struct{ net.Conn }

const writeScale = 200

func (c fastWriteDeadlineConn) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() {
		t = time.Now().Add(time.Until(t) / writeScale)
	}
	return c.Conn.SetWriteDeadline(t)
}

// A client whose server stops reading (a namenode stalled with its socket
// buffers full) fails its calls Unavailable within the write timeout, even
// calls with no deadline at all; the calls queued behind the stuck frame
// fail with it, and a later call fails within the write timeout too
// rather than hanging.
func TestClientWriteTimeoutWhenServerStopsReading(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	var mu sync.Mutex
	var accepted []net.Conn // never read
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range accepted {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.(*net.TCPConn).SetReadBuffer(4 << 10)
			mu.Lock()
			accepted = append(accepted, c)
			mu.Unlock()
		}
	}()
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		nc.(*net.TCPConn).SetWriteBuffer(4 << 10)
		return fastWriteDeadlineConn{nc}, nil
	}
	c := NewConn(lis.Addr().String(), ClientOptions{Dial: dial})
	defer c.Close()
	timeout := WriteTimeout / writeScale
	big := &dfspb.GetFileInfoRequest{Path: strings.Repeat("x", 4<<20)} // far beyond both buffers
	call := func(req *dfspb.GetFileInfoRequest) chan error {
		done := make(chan error, 1)
		go func() {
			// No context deadline and no timeout: only the write
			// deadline can end it.
			done <- c.Invoke(context.Background(), getFileInfo, req, &dfspb.GetFileInfoResponse{})
		}()
		return done
	}
	check := func(name string, done chan error, start time.Time) {
		t.Helper()
		select {
		case err := <-done:
			if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "read nothing") {
				t.Errorf("%s: %v, want Unavailable saying the server read nothing", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no deadline, a server that reads nothing and a write timeout of %v: still waiting after 10 s", name, timeout)
		}
		if took := time.Since(start); took < timeout/2 {
			t.Errorf("%s failed after %v, before the write timeout of %v could end it", name, took, timeout)
		}
	}
	start := time.Now()
	first := call(big)
	time.Sleep(50 * time.Millisecond) // the first frame is stuck in the socket
	queued := []chan error{call(big), call(&dfspb.GetFileInfoRequest{Path: "/small"})}
	check("a call stuck writing", first, start)
	for i, done := range queued {
		select {
		case err := <-done:
			if status.Code(err) != codes.Unavailable {
				t.Errorf("call %d queued behind the stuck one: %v, want Unavailable", i, err)
			}
		case <-time.After(time.Second):
			t.Errorf("call %d queued behind the stuck one still waiting 1 s after the connection failed", i)
		}
	}
	// A later call dials a new connection to the same stalled server and
	// fails within the write timeout too.
	start = time.Now()
	check("a later call", call(big), start)
	mu.Lock()
	n := len(accepted)
	mu.Unlock()
	if n != 2 {
		t.Errorf("the server accepted %d connections, want 2 (the later call dials anew)", n)
	}
}

// One host cannot take the whole port: beyond its own maximum a host's
// connection is refused while another host's is served, and a host's
// closed connection gives its slot back.
func TestConnectionsCappedPerHost(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	ts.mux.SetMaxConns(100)
	ts.mux.SetMaxConnsPerHost(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	from := func(ip string) *Conn {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c := NewConn(ts.addr, ClientOptions{Dial: func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}})
		t.Cleanup(func() { c.Close() })
		return c
	}
	a1, a2, a3 := from("127.0.0.1"), from("127.0.0.1"), from("127.0.0.1")
	for i, c := range []*Conn{a1, a2} {
		if _, err := stat(ctx, c, "/a"); err != nil {
			t.Fatalf("connection %d of 2 from one host under a per-host maximum of 2: %v", i+1, err)
		}
	}
	if _, err := stat(ctx, a3, "/a"); status.Code(err) != codes.Unavailable {
		t.Errorf("a 3rd connection from the host: %v, want Unavailable (refused)", err)
	}
	// 127.0.0.2 is another host to the server (all of 127/8 is loopback).
	if _, err := stat(ctx, from("127.0.0.2"), "/b"); err != nil {
		t.Errorf("a connection from another host while the first is at its maximum: %v", err)
	}
	waitConns(t, ts.mux, 3)
	a1.Close()
	waitConns(t, ts.mux, 2)
	if _, err := stat(ctx, a3, "/c"); err != nil {
		t.Errorf("the host's 3rd client once one of its connections closed: %v", err)
	}
	if ts.mux.Refused() < 1 {
		t.Errorf("Refused() = %d after refusing a connection beyond the per-host maximum", ts.mux.Refused())
	}
}
