package cache

import (
	"fmt"
	"testing"
	"time"
)

// A loop of accesses to one block (issue 23, hole 8: callers choose how
// many, and under which app names) keeps at most maxBlockEvents of them,
// the latest: the namenode's memory stays bounded within the window.
func TestBlockEventsBounded(t *testing.T) {
	p, err := New("bg", Options{Window: time.Hour, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	n := maxBlockEvents + 500
	for i := range n {
		p.Access(Request{Block: 7, Size: 1 << 20, App: fmt.Sprintf("app-%d", i)}, now.Add(time.Duration(i)*time.Millisecond))
	}
	ev := p.State().Events(7)
	if len(ev) > maxBlockEvents {
		t.Fatalf("%d events kept for one block after %d accesses; want at most %d", len(ev), n, maxBlockEvents)
	}
	if last := ev[len(ev)-1].App; last != fmt.Sprintf("app-%d", n-1) {
		t.Fatalf("latest event kept is %s; want the latest access app-%d", last, n-1)
	}
}
