package delayproxy

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers each connection by echoing until EOF, then closes.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T, cfg Config) string {
	t.Helper()
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p.Addrs()[0]
}

func TestRoundTripIsAtLeastBothLatencies(t *testing.T) {
	target := echoServer(t)
	addr := startProxy(t, Config{
		Routes: []Route{{Listen: "127.0.0.1:0", Target: target}},
		Out:    Delay{Latency: 40 * time.Millisecond},
		Peers:  map[string]Delay{"127.0.0.1": {Latency: 30 * time.Millisecond}},
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 4)
	for range 3 {
		start := time.Now()
		c.Write([]byte("ping"))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("echo = %q, %v", buf, err)
		}
		// A lower bound only: the proxy can never be faster than the
		// delays it adds, however loaded the machine is.
		if rtt := time.Since(start); rtt < 70*time.Millisecond {
			t.Errorf("round trip %v, want at least 70ms (30ms in + 40ms out)", rtt)
		}
	}
}

func TestBytesArriveInOrderWithJitter(t *testing.T) {
	target := echoServer(t)
	addr := startProxy(t, Config{
		Routes:  []Route{{Listen: "127.0.0.1:0", Target: target}},
		Out:     Delay{Latency: 2 * time.Millisecond, Jitter: 2 * time.Millisecond},
		Default: Delay{Latency: 1 * time.Millisecond, Jitter: 1 * time.Millisecond},
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i * 31 / 7)
	}
	go func() {
		c.Write(data)
		c.(*net.TCPConn).CloseWrite() // the echo server sees EOF and closes
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes (sha %x), want %d (sha %x): reordered or lost", len(got), sha256.Sum256(got), len(data), sha256.Sum256(data))
	}
}

func TestCloseCutsConnections(t *testing.T) {
	target := echoServer(t)
	p, err := New(Config{Routes: []Route{{Listen: "127.0.0.1:0", Target: target}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("x"))
	io.ReadFull(c, make([]byte, 1))
	p.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("connection still open after Close")
	}
}

func TestValidate(t *testing.T) {
	bad := []Config{
		{},
		{Routes: []Route{{Listen: "nope", Target: "127.0.0.1:1"}}},
		{Routes: []Route{{Listen: "127.0.0.1:0", Target: "127.0.0.1:1"}}, Out: Delay{Latency: -1}},
		{Routes: []Route{{Listen: "127.0.0.1:0", Target: "127.0.0.1:1"}}, Peers: map[string]Delay{"a": {Jitter: time.Hour}}},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
}
