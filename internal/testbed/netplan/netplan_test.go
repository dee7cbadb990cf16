package netplan

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/testbed/topo"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("plan differs from %s (go test -update rewrites it):\n%s", path, diff(string(want), got))
	}
}

func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
		}
	}
	return b.String()
}

func render(cmds []Cmd) string {
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

func load(t *testing.T) *topo.Topology {
	t.Helper()
	top, err := topo.Load("testdata/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return top
}

func TestUpPlan(t *testing.T) {
	top := load(t)
	golden(t, "up-netem.txt", render(Up(top, Options{Netem: true})))
	golden(t, "up-nonetem.txt", render(Up(top, Options{})))
}

func TestReshapePlan(t *testing.T) {
	top := load(t)
	h, _ := top.Host("dn1")
	sh := h.Shape
	sh.NIC, sh.CrossRack, sh.Latency, sh.Jitter, sh.LossPct = 50e6, 10e6, 0, 0, 0
	got := render(Reshape(top, h, h.Shape, sh, Options{Netem: true}))
	r, _ := top.Rack("rack-a")
	r.Uplink = 30e6
	got += render(ReshapeUplink(top, r))
	r, _ = top.Rack("rack-b")
	r.Uplink = 20e6
	got += render(ReshapeUplink(top, r))
	golden(t, "reshape.txt", got)
}

// The assured rates of a host's classes never add up to more than its NIC,
// or htb would let the classes together exceed it.
func TestChildRatesFitTheNIC(t *testing.T) {
	cases := [][3]topo.Rate{
		{216e6, 216e6, 100e6}, {50e6, 50e6, 50e6}, {Unlimited, Unlimited, Unlimited}, {1e6, 1e6, 8000}, {376e6, 100e6, 376e6},
	}
	for _, c := range cases {
		r := ChildRates(c[0], c[1], c[2])
		if sum := r[0] + r[1] + r[2]; sum > c[0] {
			t.Errorf("ChildRates(%v) = %v, sum %v > NIC", c, r, sum)
		}
		if r[0] > c[1] || r[1] > c[2] {
			t.Errorf("ChildRates(%v) = %v: assured above ceiling", c, r)
		}
	}
}

func TestNamesAndDown(t *testing.T) {
	top := load(t)
	ns := Namespaces(top)
	want := []string{"smarth.small.nn", "smarth.small.dn1", "smarth.small._core"}
	if strings.Join(ns, " ") != strings.Join(want, " ") {
		t.Errorf("Namespaces = %v, want %v", ns, want)
	}
	for _, n := range ns {
		if !strings.HasPrefix(n, NetnsPrefix("small")) || strings.HasPrefix(n, NetnsPrefix("smal")) {
			t.Errorf("%s: prefix test is not exact", n)
		}
	}
	if got := render(Down(ns)); got != "ip netns del smarth.small.nn\nip netns del smarth.small.dn1\nip netns del smarth.small._core\n" {
		t.Errorf("Down = %q", got)
	}
}

// Every tc rate in a plan must be what the topology says, in exact bits.
func TestRatesAreExact(t *testing.T) {
	top := load(t)
	plan := render(Up(top, Options{}))
	for _, want := range []string{
		"class add dev eth0 parent 1: classid 1:1 htb rate 200000000bit ceil 200000000bit burst 25000b cburst 25000b",
		"class add dev eth0 parent 1:1 classid 1:20 htb rate 39600600bit ceil 50000000bit",
		"class add dev h0 parent 1:1 classid 1:10 htb rate 158399400bit ceil 200000000bit",
		"class add dev r2 parent 1: classid 1:1 htb rate 40000000bit",
		"u32 match ip src 10.77.2.0/24 flowid 1:10",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	if strings.Contains(plan, "netem") {
		t.Error("plan without netem contains netem")
	}
	if d := (topo.Shape{Latency: 2 * time.Millisecond}); !d.Delayed() {
		t.Error("Delayed")
	}
}

// A partition replaces the leaves of every class on both ends of a host's
// link (or both ends of a rack's uplink) with a drop-all fifo, and a heal
// puts back what `up` made: fifo leaves, or netem on a delayed host's
// uploads. The rates (htb classes) are never touched by either.
func TestPartitionPlan(t *testing.T) {
	top := load(t)
	nn, _ := top.Host("nn")
	dn1, _ := top.Host("dn1")
	rb, _ := top.Rack("rack-b")
	got := render(Partition(top, nn)) + render(Heal(top, nn, Options{Netem: true})) +
		render(Partition(top, dn1)) + render(Heal(top, dn1, Options{Netem: true})) + render(Heal(top, dn1, Options{})) +
		render(PartitionRack(top, rb)) + render(HealRack(top, rb))
	golden(t, "partition.txt", got)
	if strings.Contains(got, " class ") {
		t.Errorf("a partition or heal changes an htb class (a rate):\n%s", got)
	}
}
