package tune

import (
	"net"
	"testing"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); acc <- c }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func stateOf(t *testing.T, states []State, name string) State {
	t.Helper()
	for _, s := range states {
		if s.Setting == name {
			return s
		}
	}
	t.Fatalf("no state for %s in %+v", name, states)
	return State{}
}

func TestSettingsReadBackFromSocket(t *testing.T) {
	_, srv := tcpPair(t)
	p := Profile{Name: "t", Settings: map[string]string{
		"so_rcvbuf": "65536", "so_sndbuf": "0", "tcp_congestion": "reno", "tcp_notsent_lowat": "16384", "packet_size": "131072",
	}}
	states, err := Apply(srv, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 4 {
		t.Fatalf("%d states for 4 socket settings (packet_size is the client's): %+v", len(states), states)
	}
	if s := stateOf(t, states, "so_rcvbuf"); !s.InForce || s.Got != "131072" {
		t.Errorf("so_rcvbuf 65536: %+v, want in force reading back 131072 (the kernel doubles it)", s)
	}
	if s := stateOf(t, states, "so_sndbuf"); !s.InForce || s.Note != "kernel autotuning" {
		t.Errorf("so_sndbuf 0: %+v, want autotuning in force", s)
	}
	if s := stateOf(t, states, "tcp_congestion"); !s.InForce || s.Got != "reno" {
		t.Errorf("tcp_congestion reno: %+v", s)
	}
	if s := stateOf(t, states, "tcp_notsent_lowat"); !s.InForce || s.Got != "16384" {
		t.Errorf("tcp_notsent_lowat: %+v", s)
	}
	// Inspect reads the same values back without setting anything.
	again, err := Inspect(srv, p)
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, again, "tcp_congestion"); s.Got != "reno" {
		t.Errorf("inspect tcp_congestion: %+v", s)
	}
}

func TestBufferClampedIsNotInForce(t *testing.T) {
	_, srv := tcpPair(t)
	// 1 GiB is within the setting's range but far above any default
	// net.core.rmem_max, so the kernel clamps it.
	states, err := Apply(srv, Profile{Name: "t", Settings: map[string]string{"so_rcvbuf": "1073741824"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, states, "so_rcvbuf"); s.InForce {
		t.Skipf("net.core.rmem_max allows 1 GiB here: %+v", s)
	} else if s.Note == "" {
		t.Errorf("clamped buffer without a reason: %+v", s)
	}
}

func TestBusyPollOnLoopbackNotInForce(t *testing.T) {
	_, srv := tcpPair(t)
	states, err := Apply(srv, LatencyBaseline())
	if err != nil {
		t.Fatal(err)
	}
	s := stateOf(t, states, "so_busy_poll")
	// Loopback has no NAPI context; without CAP_NET_ADMIN the set itself
	// is refused. Either way it must not count as in force.
	if s.InForce {
		t.Fatalf("busy polling on loopback reported in force: %+v", s)
	}
	if s.Note == "" {
		t.Fatalf("not in force without a reason: %+v", s)
	}
	t.Logf("so_busy_poll on loopback: %+v", s)
}

func TestMissingCongestionModuleNotInForce(t *testing.T) {
	_, srv := tcpPair(t)
	// Apply does not validate (the profile was validated when loaded), so
	// a module that vanished since is caught by the kernel's refusal.
	states, err := Apply(srv, Profile{Name: "t", Settings: map[string]string{"tcp_congestion": "no-such-cc"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(t, states, "tcp_congestion"); s.InForce || s.Note == "" {
		t.Fatalf("missing module: %+v, want not in force with a reason", s)
	}
}
