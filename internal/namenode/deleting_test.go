package namenode

import (
	"maps"
	"slices"
	"testing"
	"time"

	"smarth/internal/namenode/blockmap"
)

// Each way a pending deletion ends frees its node for a new copy; the
// others leave it excluded.
func TestDeletionsEnd(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ttl := 30 * time.Second
	excluded := func(d deletions, id uint64, now time.Time) []string {
		ex := map[string]bool{}
		d.exclude(ex, id, now, ttl)
		return slices.Sorted(maps.Keys(ex))
	}
	fresh := func() deletions {
		d := deletions{}
		d.add("a", 1, t0)
		d.add("b", 1, t0)
		d.add("a", 2, t0)
		return d
	}
	for _, tc := range []struct {
		name         string
		end          func(d deletions)
		at           time.Time
		want1, want2 []string
	}{
		{"nothing yet", func(deletions) {}, t0.Add(time.Second), []string{"a", "b"}, []string{"a"}},
		{"reported deleted", func(d deletions) { d.done("a", 1) }, t0, []string{"b"}, []string{"a"}},
		{"full report without it", func(d deletions) { d.reported("a", []blockmap.Reported{{ID: 2}, {ID: 7}}) }, t0, []string{"b"}, []string{"a"}},
		{"node re-registered", func(d deletions) { d.forgetNode("a") }, t0, []string{"b"}, nil},
		{"past ttl", func(deletions) {}, t0.Add(ttl), nil, nil},
		{"swept", func(d deletions) { d.sweep(t0.Add(ttl), ttl) }, t0, nil, nil},
	} {
		d := fresh()
		tc.end(d)
		if got := excluded(d, 1, tc.at); !slices.Equal(got, tc.want1) {
			t.Errorf("%s: block 1 excluded on %v, want %v", tc.name, got, tc.want1)
		}
		if got := excluded(d, 2, tc.at); !slices.Equal(got, tc.want2) {
			t.Errorf("%s: block 2 excluded on %v, want %v", tc.name, got, tc.want2)
		}
	}
	d := fresh()
	d.sweep(t0.Add(ttl), ttl)
	if len(d) != 0 {
		t.Errorf("sweep left %v", d)
	}
}
