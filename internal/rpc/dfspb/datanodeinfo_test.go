package dfspb

import "testing"

func TestNonDfsUsed(t *testing.T) {
	for _, c := range []struct{ capacity, used, remaining, want int64 }{
		{100, 30, 50, 20}, // 20 taken by other files
		{100, 30, 70, 0},  // all accounted for
		{100, 35, 70, 0},  // sampled apart: never negative
	} {
		d := &DatanodeInfo{Capacity: c.capacity, DfsUsed: c.used, Remaining: c.remaining}
		if got := d.NonDfsUsed(); got != c.want {
			t.Errorf("capacity %d, used %d, remaining %d: NonDfsUsed = %d, want %d", c.capacity, c.used, c.remaining, got, c.want)
		}
	}
}
