package httpserver

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// start serves h on 127.0.0.1 with lim and returns its address.
func start(t *testing.T, h http.Handler, lim Limits) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New("test http", h, lim, nil)
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

func hello(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello\n") }

// waitFor polls cond until it holds, or fails saying what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// closedByServer reports, without blocking long, whether the server has
// closed c (a read sees EOF or a reset rather than a timeout).
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var b [512]byte
	for {
		_, err := c.Read(b[:])
		if err == nil {
			continue // a response before the close
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// dialFrom connects to addr from the local address src (a loopback
// address other than 127.0.0.1 stands for another host).
func dialFrom(t *testing.T, src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// TestAttackIdleAndTricklingHTTPConnections is issue 23's hole 6: idle
// connections (none, or after a kept-alive request), a header trickled
// byte by byte and a body trickled byte by byte must each be closed once
// the timeout passes, not held open forever. http.Server as the daemons
// built it (ReadHeaderTimeout only) kept the kept-alive and body-trickling
// ones open for good.
func TestAttackIdleAndTricklingHTTPConnections(t *testing.T) {
	const tick = 50 * time.Millisecond
	s, addr := start(t, http.HandlerFunc(hello), Limits{
		ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, IOTimeout: 300 * time.Millisecond})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	silent := dial()
	keptAlive := dial()
	fmt.Fprintf(keptAlive, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(keptAlive), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request on the kept-alive connection: %v %v", resp, err)
	}
	headerTrickle, bodyTrickle := dial(), dial()
	fmt.Fprintf(bodyTrickle, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	// The tricklers send a byte every 50 ms, each well within any
	// per-read timeout: only a bound on the whole header, or on a body
	// that does not progress as a read would, can end them.
	go func() {
		header := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 10000)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(tick):
			}
			_, e1 := headerTrickle.Write([]byte{header[i%len(header)]})
			_, e2 := bodyTrickle.Write([]byte{'b'})
			if e1 != nil && e2 != nil {
				return
			}
		}
	}()
	for name, c := range map[string]net.Conn{"silent": silent, "kept-alive": keptAlive, "header-trickling": headerTrickle, "body-trickling": bodyTrickle} {
		waitFor(t, "the server to close the "+name+" connection", func() bool { return closedByServer(c) })
	}
	waitFor(t, "the port to count no open connection", func() bool { return s.Gate.Conns() == 0 })
}

// TestAttackHTTPConnectionsCappedPerHost: one host holding its share of
// the port has further connections reset at once, while another host
// (127.0.0.2) is still served; the port's own bound holds across hosts.
func TestAttackHTTPConnectionsCappedPerHost(t *testing.T) {
	s, addr := start(t, http.HandlerFunc(hello), Limits{MaxConns: 6, MaxConnsPerHost: 3})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 3 {
		c, err := dialFrom(t, "127.0.0.1", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	waitFor(t, "three connections from 127.0.0.1 open", func() bool { return s.Gate.ConnsOf("127.0.0.1") == 3 })
	for i := range 20 {
		c, err := dialFrom(t, "127.0.0.1", addr)
		if err != nil {
			continue // refused already
		}
		waitFor(t, fmt.Sprintf("connection %d beyond 127.0.0.1's cap to be reset", i), func() bool { return closedByServer(c) })
		c.Close()
	}
	if got := s.Gate.Refused(); got < 20 {
		t.Errorf("refused %d connections beyond the per-host cap, want 20", got)
	}
	// Another host is served while 127.0.0.1 is at its cap.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	resp, err := other.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a request from 127.0.0.2 while 127.0.0.1 holds its cap: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello\n" {
		t.Fatalf("127.0.0.2 got %q", b)
	}
	other.CloseIdleConnections()
	// The port's bound: 3 + 3 from two hosts fill it; a third host is refused.
	for range 3 {
		c, err := dialFrom(t, "127.0.0.2", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	waitFor(t, "six connections open", func() bool { return s.Gate.Conns() == 6 })
	c, err := dialFrom(t, "127.0.0.3", addr)
	if err == nil {
		waitFor(t, "a connection beyond the port's cap to be reset", func() bool { return closedByServer(c) })
		c.Close()
	}
}

// A download and an upload that each take several times IOTimeout work
// as long as bytes move; a client that stops reading a response is cut.
func TestLongTransfersOutlastIOTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	const pieces = 20 // 20 x 60 ms: four times the timeout
	handlerErr := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		for i := range pieces {
			fmt.Fprintf(w, "piece %d\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
	})
	mux.HandleFunc("POST /up", func(w http.ResponseWriter, r *http.Request) {
		// As WebHDFS's CREATE: a status and no body, after the upload.
		n, err := io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Read", fmt.Sprintf("%d %v", n, err))
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("GET /endless", func(w http.ResponseWriter, r *http.Request) {
		b := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if _, err := w.Write(b); err != nil {
				handlerErr <- err
				return
			}
		}
	})
	_, addr := start(t, mux, Limits{IOTimeout: timeout, IdleTimeout: timeout})
	resp, err := http.Get("http://" + addr + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(b), "piece") != pieces {
		t.Fatalf("slow download cut: %d pieces, %v", strings.Count(string(b), "piece"), err)
	}
	pr, pw := io.Pipe()
	go func() {
		for range pieces {
			pw.Write(bytes.Repeat([]byte("y"), 1000))
			time.Sleep(60 * time.Millisecond)
		}
		pw.Close()
	}()
	resp, err = http.Post("http://"+addr+"/up", "application/octet-stream", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("%d <nil>", pieces*1000); resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Read") != want {
		t.Fatalf("slow upload: %s, server read %q, want %q", resp.Status, resp.Header.Get("X-Read"), want)
	}
	// A reader that stops: the server's write stalls once the socket
	// buffers fill, and the connection is cut a timeout later.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /endless HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case err := <-handlerErr:
		t.Logf("stalled reader cut: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("a response nobody reads was still being written 30 s on")
	}
}

// A request over TLS says so (r.TLS), though the gate wraps the
// connection: the namenode's WebHDFS chooses its redirect's scheme by it,
// and with it nil sent every swebhdfs:// upload to http:// on a TLS port.
// The control: a plain request has no TLS state.
func TestRequestsOverTLSHaveTheirState(t *testing.T) {
	says := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			io.WriteString(w, "plain")
			return
		}
		fmt.Fprintf(w, "tls %x", r.TLS.Version)
	})
	get := func(c *http.Client, url string) string {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	_, addr := start(t, says, Limits{})
	if got := get(http.DefaultClient, "http://"+addr+"/"); got != "plain" {
		t.Fatalf("control: a plain request's handler saw %q", got)
	}

	// httptest's certificate (127.0.0.1) and a client that trusts it.
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	defer ts.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New("test https", says, Limits{}, nil)
	go s.Serve(tls.NewListener(ln, &tls.Config{Certificates: ts.TLS.Certificates}))
	t.Cleanup(func() { s.Close() })
	if got, want := get(ts.Client(), "https://"+ln.Addr().String()+"/"), fmt.Sprintf("tls %x", tls.VersionTLS13); got != want {
		t.Fatalf("a request over TLS through the gate: the handler saw %q; want %q", got, want)
	}
}
