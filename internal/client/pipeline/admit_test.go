package pipeline

import (
	"testing"
	"time"
)

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
		busy := map[string]bool{}
		for _, id := range tc.busy {
			busy[id] = true
		}
		if got := c.Admit(tc.inFlight, busy, book); got != tc.want {
			t.Errorf("%s: Admit = %v, want %v", tc.name, got, tc.want)
		}
	}
	if c.Admit([]string{"new"}, map[string]bool{"new": true}, NewSpeedBook()) {
		t.Error("no records at all: a second block must wait for the first hop, as SMARTH")
	}
}
