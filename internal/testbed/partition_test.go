package testbed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"smarth/internal/testbed/netns"
)

const partitionTopology = `name: %s
defaults: {nic: 100mbit}
racks:
  - {name: ra}
  - {name: rb}
hosts:
  - {name: a1, rack: ra, roles: [client]}
  - {name: a2, rack: ra, roles: [client]}
  - {name: b1, rack: rb, roles: [client]}
`

// TestPartitionAndHeal cuts a host, then a rack, off a real testbed
// network and checks what each cut must do: no new connection across it,
// traffic elsewhere untouched, an established connection silently stalled
// (no reset: the bytes sent during the cut arrive after the heal, as after
// a real partition), and everything back after the heal.
func TestPartitionAndHeal(t *testing.T) {
	requireNamespaces(t)
	name := fmt.Sprintf("itest-part-%d", os.Getpid())
	m, topoFile := itestManager(t, name, partitionTopology, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := m.Up(ctx, topoFile, UpOptions{NoDaemons: true})
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	addr := map[string]string{}
	for _, h := range s.Topology.Hosts {
		ln, err := netns.Listen(s.nsPath(h.Name), "tcp", h.Addr.String()+":7000")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go echo(ln)
		addr[h.Name] = ln.Addr().String()
	}
	reach := func(from, to string) error {
		dctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		defer cancel()
		c, err := netns.Dialer(s.nsPath(from))(dctx, addr[to])
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(1500 * time.Millisecond))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		_, err = io.ReadFull(c, make([]byte, 4))
		return err
	}
	expect := func(when string, pairs map[[2]string]bool) {
		t.Helper()
		for p, want := range pairs {
			err := reach(p[0], p[1])
			if want && err != nil {
				t.Errorf("%s: %s -> %s: %v, want it reachable", when, p[0], p[1], err)
			}
			if !want && err == nil {
				t.Errorf("%s: %s -> %s connected, want it cut off", when, p[0], p[1])
			}
		}
	}
	all := map[[2]string]bool{{"a1", "a2"}: true, {"a2", "a1"}: true, {"a1", "b1"}: true, {"b1", "a2"}: true}
	expect("before any cut", all)

	// A connection open before the cut: its bytes sent during the cut
	// must arrive once the cut heals.
	held, err := netns.Dialer(s.nsPath("a2"))(ctx, addr["a1"])
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	if err := m.Partition(ctx, name, Cut{Kind: "host", Name: "a1"}); err != nil {
		t.Fatalf("partition a1: %v", err)
	}
	expect("a1 cut off", map[[2]string]bool{{"a2", "a1"}: false, {"b1", "a1"}: false, {"a1", "a2"}: false, {"a2", "b1"}: true, {"b1", "a2"}: true})
	if _, err := held.Write([]byte("late")); err != nil {
		t.Fatalf("write on the held connection during the cut: %v (a cut must drop, not reset)", err)
	}
	held.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
	if n, err := held.Read(make([]byte, 4)); err == nil {
		t.Fatalf("the held connection got %d bytes back across the cut", n)
	}
	var st bytes.Buffer
	if s2, err := m.Load(name); err != nil {
		t.Fatal(err)
	} else {
		WriteStatus(&st, s2)
	}
	if !strings.Contains(st.String(), "PARTITIONED: host a1") {
		t.Errorf("status does not show the cut:\n%s", st.String())
	}
	if err := m.Heal(ctx, name, Cut{Kind: "host", Name: "a1"}); err != nil {
		t.Fatalf("heal a1: %v", err)
	}
	held.SetReadDeadline(time.Now().Add(30 * time.Second))
	got := make([]byte, 4)
	if _, err := io.ReadFull(held, got); err != nil || string(got) != "late" {
		t.Fatalf("the bytes written during the cut did not arrive after the heal: %q, %v", got, err)
	}
	expect("a1 healed", all)

	if err := m.Partition(ctx, name, Cut{Kind: "rack", Name: "rb"}); err != nil {
		t.Fatalf("partition rack rb: %v", err)
	}
	expect("rack rb cut off", map[[2]string]bool{{"a1", "b1"}: false, {"b1", "a2"}: false, {"a1", "a2"}: true, {"a2", "a1"}: true})
	if cuts, err := m.Cuts(name); err != nil || len(cuts) != 1 || cuts[0] != (Cut{"rack", "rb"}) {
		t.Errorf("Cuts = %v, %v; want [rack rb]", cuts, err)
	}
	if err := m.Heal(ctx, name, Cut{Kind: "rack", Name: "rb"}); err != nil {
		t.Fatalf("heal rack rb: %v", err)
	}
	expect("rack rb healed", all)
	if cuts, _ := m.Cuts(name); len(cuts) != 0 {
		t.Errorf("cuts left after the heals: %v", cuts)
	}
	if err := m.Partition(ctx, name, Cut{Kind: "host", Name: "nope"}); err == nil || !strings.Contains(err.Error(), `no host "nope"`) {
		t.Errorf("partition of an unknown host: %v", err)
	}
	downAndVerify(t, m, name)
}

// echo answers every connection with what it reads.
func echo(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { defer c.Close(); io.Copy(c, c) }()
	}
}

func TestParseCut(t *testing.T) {
	for in, want := range map[string]Cut{"dn1": {"host", "dn1"}, "host:dn1": {"host", "dn1"}, "rack:rack-b": {"rack", "rack-b"}} {
		if got, err := ParseCut(in); err != nil || got != want {
			t.Errorf("ParseCut(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "rack:", "switch:s1"} {
		if _, err := ParseCut(in); err == nil {
			t.Errorf("ParseCut(%q) accepted", in)
		}
	}
}
