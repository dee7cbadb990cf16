package pipeline

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
)

func at(rack string, names ...string) []*dfspb.DatanodeInfo {
	out := make([]*dfspb.DatanodeInfo, len(names))
	for i, id := range names {
		out[i] = &dfspb.DatanodeInfo{Id: id, Rack: rack}
	}
	return out
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, id := range names {
		m[id] = true
	}
	return m
}

// Admit lets a second block start beside a slow first hop only onto a free
// datanode measured fast, and never waits while no first hop in progress
// is slow.
func TestConcurrentAdmit(t *testing.T) {
	c := must(New("multipipeline-concurrent", Options{})).(Admitter)
	book := NewSpeedBook()
	now := time.Now()
	book.Seed("local1", 200e6, now)
	book.Seed("local2", 190e6, now)
	book.Seed("remote1", 60e6, now) // behind the client's cross-rack link
	book.Seed("remote2", 70e6, now)
	for _, tc := range []struct {
		name     string
		inFlight []string
		busy     []string
		want     bool
	}{
		{"nothing in flight", nil, []string{"remote1"}, true},
		{"a fast first hop in flight", []string{"local1"}, []string{"local1", "local2", "remote1"}, true},
		{"a slow first hop, a fast node free", []string{"remote1"}, []string{"remote1", "local1"}, true},
		{"a slow first hop, every fast node busy", []string{"remote1"}, []string{"remote1", "local1", "local2"}, false},
		{"an unmeasured first hop counts as slow", []string{"new"}, []string{"new", "local1", "local2"}, false},
	} {
		a := Admission{InFlight: at("", tc.inFlight...), Busy: set(tc.busy...), Speeds: book}
		if got := c.Admit(a); got != tc.want {
			t.Errorf("%s: Admit = %v, want %v", tc.name, got, tc.want)
		}
	}
	if c.Admit(Admission{InFlight: at("", "new"), Busy: set("new"), Speeds: NewSpeedBook()}) {
		t.Error("no records at all, no rack: a second block must wait for the first hop, as SMARTH")
	}
}

// Before any record (a new cluster's first upload) a datanode is judged by
// where the namenode says the client is: a rack-mate is presumed fast, a
// datanode across racks slow; a record replaces the presumption.
func TestConcurrentAdmitRackPrior(t *testing.T) {
	c := must(New("multipipeline-concurrent", Options{})).(Admitter)
	dns := append(at("/a", "m1", "m2"), at("/b", "r1", "r2", "r3")...)
	rack := map[string]string{}
	for _, d := range dns {
		rack[d.GetId()] = d.GetRack()
	}
	on := func(ids ...string) []*dfspb.DatanodeInfo {
		var out []*dfspb.DatanodeInfo
		for _, id := range ids {
			out = append(out, &dfspb.DatanodeInfo{Id: id, Rack: rack[id]})
		}
		return out
	}
	measured := NewSpeedBook()
	measured.Seed("m2", 5e6, time.Now()) // a rack-mate measured slow (beside r1's 100e6)
	measured.Seed("r1", 100e6, time.Now())
	// Four racks' first upload: m1's block ran beside m2's and r1's, and
	// took the client's NIC first.
	shared := NewSpeedBook()
	shared.Seed("m1", 175e6/8, time.Now())
	shared.Seed("m2", 92e6/8, time.Now())
	shared.Seed("r1", 60e6/8, time.Now())
	// A 288 Mbit/s NIC shared fairly by two rack-mates and a first hop
	// across racks at 106 (TestFirstUploadReachesIdeal's topology 9).
	fair := NewSpeedBook()
	fair.Seed("m2", 91e6/8, time.Now())
	fair.Seed("r1", 106e6/8, time.Now())
	for _, tc := range []struct {
		name     string
		inFlight []string
		busy     []string
		speeds   *SpeedBook
		rack     string
		want     bool
	}{
		{"a rack-mate's first hop in flight", []string{"m1"}, []string{"m1", "m2", "r2", "r3"}, nil, "/a", true},
		{"two rack-mates in flight", []string{"m1", "m2"}, []string{"m1", "m2", "r1", "r2", "r3"}, nil, "/a", true},
		{"across racks in flight, a rack-mate free", []string{"r1"}, []string{"r1", "r2", "m1"}, nil, "/a", true},
		{"across racks in flight, every rack-mate busy", []string{"r1"}, []string{"r1", "r2", "m1", "m2"}, nil, "/a", false},
		{"no rack for the client: all slow", []string{"m1"}, []string{"m1"}, nil, "", false},
		{"a rack-mate's record says slow", []string{"m2"}, []string{"m2", "m1", "r1"}, measured, "/a", false},
		{"a record across racks says fast", []string{"r1"}, []string{"r1", "m1", "m2"}, measured, "/a", true},
		{"measured slow rack-mate free does not admit", []string{"r2"}, []string{"r2", "r1", "m1"}, measured, "/a", false},
		{"a rack-mate measured sharing the client's NIC stays fast", []string{"r1"}, []string{"r1", "m1"}, shared, "/a", true},
		{"so does its first hop in flight", []string{"m2"}, []string{"m2", "m1", "r1", "r2", "r3"}, shared, "/a", true},
		{"a rack-mate's fair share below the cross-rack rate stays fast", []string{"r2"}, []string{"r2", "r1", "m1"}, fair, "/a", true},
	} {
		a := Admission{InFlight: on(tc.inFlight...), Busy: set(tc.busy...), WriterRack: tc.rack, Datanodes: dns}
		if tc.speeds != nil {
			a.Speeds = tc.speeds
		}
		if got := c.Admit(a); got != tc.want {
			t.Errorf("%s: Admit = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Over generated clusters (2-4 racks of 1-5 datanodes, the client in one
// of them, no records or records that keep rack-mates at least as fast as
// the datanodes across racks) and every way a write can stand (which datanodes
// are busy, which first hops are still in progress), the admission keeps
// what the rack prior promises: a block starts at once while every first
// hop in progress is a rack-mate's, and a block starts beside a first hop
// behind the client's cross-rack link only when a rack-mate is free to
// take it, so at most one first hop shares that link while rack-mates can
// take blocks.
func TestConcurrentAdmitPriorProperty(t *testing.T) {
	c := must(New("multipipeline-concurrent", Options{})).(Admitter)
	rng := rand.New(rand.NewPCG(27, 14))
	admittedBesideRemote := 0
	for i := range 2000 {
		var dns []*dfspb.DatanodeInfo
		racks := 2 + rng.IntN(3)
		for r := range racks {
			for j := range 1 + rng.IntN(5) {
				dns = append(dns, &dfspb.DatanodeInfo{Id: fmt.Sprintf("d%d-%d", r, j), Rack: fmt.Sprintf("/r%d", r)})
			}
		}
		writer := fmt.Sprintf("/r%d", rng.IntN(racks))
		busy := map[string]bool{}
		var inFlight []*dfspb.DatanodeInfo
		remoteInFlight, mateFree := false, false
		for _, d := range dns {
			switch rng.IntN(3) {
			case 0: // free
				if d.GetRack() == writer {
					mateFree = true
				}
			case 1: // in an open pipeline, first hop done or a later replica
				busy[d.GetId()] = true
			case 2: // first datanode of a pipeline whose first hop is in progress
				busy[d.GetId()] = true
				inFlight = append(inFlight, d)
				remoteInFlight = remoteInFlight || d.GetRack() != writer
			}
		}
		// Half the cases carry records, measured as first hops side by
		// side measure them: those across racks 20-100 Mbit/s, rack-mates
		// anywhere from 1/slowerThan to four times that of the fastest
		// across racks (so no record across racks reads fast). No record
		// makes a rack-mate slower than the other side, so the prior's
		// promise must hold as it is, however far apart the rack-mates'
		// records are.
		book := NewSpeedBook()
		if rng.IntN(2) == 0 {
			across := 0.0
			for _, d := range dns {
				if d.GetRack() != writer && rng.IntN(2) == 0 {
					v := (20 + 80*rng.Float64()) * 1e6 / 8
					book.Seed(d.GetId(), v, time.Now())
					across = max(across, v)
				}
			}
			for _, d := range dns {
				if d.GetRack() == writer && rng.IntN(2) == 0 {
					book.Seed(d.GetId(), max(across, 20e6/8)/slowerThan*(1+3*rng.Float64()), time.Now())
				}
			}
		}
		got := c.Admit(Admission{InFlight: inFlight, Busy: busy, Speeds: book, WriterRack: writer, Datanodes: dns})
		switch {
		case !remoteInFlight && !got:
			t.Fatalf("case %d: only rack-mates' first hops in flight (%v), yet the next block waits", i, idList(inFlight))
		case remoteInFlight && got != mateFree:
			t.Fatalf("case %d: a first hop behind the client's cross-rack link in flight, a rack-mate free: %v; Admit = %v", i, mateFree, got)
		}
		if remoteInFlight && got {
			admittedBesideRemote++
		}
	}
	if admittedBesideRemote == 0 {
		t.Fatal("no generated case admitted a block beside a first hop across racks: the generator covers too little")
	}
}

func idList(ds []*dfspb.DatanodeInfo) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.GetId()
	}
	return out
}

// HoldBack holds a rack-mate's first hop to its pipeline's pace only
// while a first hop across racks shares the client's NIC with it.
func TestConcurrentHoldBack(t *testing.T) {
	c := must(New("multipipeline-concurrent", Options{})).(Pacer)
	dns := append(at("/a", "m1", "m2"), at("/b", "r1", "r2")...)
	node := map[string]*dfspb.DatanodeInfo{}
	for _, d := range dns {
		node[d.GetId()] = d
	}
	on := func(ids ...string) []*dfspb.DatanodeInfo {
		var out []*dfspb.DatanodeInfo
		for _, id := range ids {
			out = append(out, node[id])
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		first    string
		inFlight []string
		rack     string
		want     bool
	}{
		{"a rack-mate beside a first hop across racks", "m1", []string{"m1", "m2", "r1"}, "/a", true},
		{"a rack-mate beside rack-mates only", "m1", []string{"m1", "m2"}, "/a", false},
		{"a rack-mate alone", "m1", []string{"m1"}, "/a", false},
		{"the first hop across racks itself", "r1", []string{"m1", "r1"}, "/a", false},
		{"the client in no rack, no records: nothing is fast", "m1", []string{"m1", "r1"}, "", false},
	} {
		a := Admission{InFlight: on(tc.inFlight...), Busy: set(tc.inFlight...), Speeds: NewSpeedBook(), WriterRack: tc.rack, Datanodes: dns}
		if got := c.HoldBack(node[tc.first], a); got != tc.want {
			t.Errorf("%s: HoldBack = %v, want %v", tc.name, got, tc.want)
		}
	}
}
