package connlimit

import (
	"net"
	"testing"
	"time"
)

// pair is a real TCP connection from src to a listener on 127.0.0.1,
// returned as the server's end.
func pair(t *testing.T, ln net.Listener, src string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The gate counts per host and in all, refuses beyond either bound, and
// gives a slot back exactly once however often a connection is closed.
func TestGateBounds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g := NewGate("test", 3, 2, nil)
	a1, ok1 := g.Admit(pair(t, ln, "127.0.0.1"))
	_, ok2 := g.Admit(pair(t, ln, "127.0.0.1"))
	if !ok1 || !ok2 {
		t.Fatal("two connections from one host refused under a per-host bound of 2")
	}
	if _, ok := g.Admit(pair(t, ln, "127.0.0.1")); ok {
		t.Fatal("a third connection from 127.0.0.1 admitted past its bound of 2")
	}
	release, ok := g.Take(pair(t, ln, "127.0.0.2"))
	if !ok {
		t.Fatal("127.0.0.2 refused while it holds nothing")
	}
	if _, ok := g.Admit(pair(t, ln, "127.0.0.3")); ok {
		t.Fatal("a fourth connection admitted past the port's bound of 3")
	}
	if g.Conns() != 3 || g.ConnsOf("127.0.0.1") != 2 || g.Refused() != 2 {
		t.Fatalf("conns %d, of 127.0.0.1 %d, refused %d; want 3, 2, 2", g.Conns(), g.ConnsOf("127.0.0.1"), g.Refused())
	}
	a1.Close()
	a1.Close()
	release()
	if g.Conns() != 1 || g.ConnsOf("127.0.0.1") != 1 || g.ConnsOf("127.0.0.2") != 0 {
		t.Fatalf("after closing two: conns %d, of 127.0.0.1 %d, of 127.0.0.2 %d; want 1, 1, 0", g.Conns(), g.ConnsOf("127.0.0.1"), g.ConnsOf("127.0.0.2"))
	}
	if _, ok := g.Admit(pair(t, ln, "127.0.0.1")); !ok {
		t.Fatal("127.0.0.1 refused after one of its connections closed")
	}
}
