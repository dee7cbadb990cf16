package replog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// heldFuture is raft's answer to an entry, given when the channel closes.
type heldFuture chan struct{}

var _ raft.ApplyFuture = heldFuture(nil)

func (f heldFuture) Error() error  { <-f; return nil }
func (f heldFuture) Response() any { return nil }
func (f heldFuture) Index() uint64 { return 0 }

// TestBatchOverlapsOnlyWhileSmall: while a batch of OverlapBelow records
// or more waits for commit, the next batch is not proposed; it goes out
// once that one lands. Beside a smaller batch, and with overlap always
// on (the control), it goes out at once. The batch in flight is a stand-in
// the test puts in the leader's books (a slot taken, a pending batch of
// the wanted size), so that it waits for as long as the test holds it.
func TestBatchOverlapsOnlyWhileSmall(t *testing.T) {
	for _, c := range []struct {
		name      string
		below     int
		inFlight  int
		overlaps  bool
		rationale string
	}{
		{"large", 4, 4, false, "a batch of 4 records waits for commit and OverlapBelow is 4"},
		{"small", 4, 3, true, "the batch waiting holds 3 records, below OverlapBelow 4"},
		{"always", -1, 100, true, "OverlapBelow is negative: batches always overlap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes := group(t, t.TempDir(), 3, func(i int, cfg *Config) { cfg.OverlapBelow = c.below })
			ld := leaderOf(t, nodes)
			l := ld.log
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := write(ctx, l, ld.fsm, "warm"); err != nil {
				t.Fatal(err)
			}

			// The stand-in takes a slot and counts as in flight, as the
			// flush loop books a batch it proposes; land gives it its
			// outcome through await, as raft's answer would.
			l.slots <- struct{}{}
			held := &pending{recs: make([][]byte, c.inFlight), sent: true, done: make(chan struct{}), at: time.Now()}
			l.mu.Lock()
			l.inflight[held] = struct{}{}
			l.mu.Unlock()
			answer := heldFuture(make(chan struct{}))
			go l.await(held, answer)
			land := func() { close(answer) }

			done := make(chan error, 1)
			go func() { done <- write(ctx, l, ld.fsm, "next") }()
			select {
			case err := <-done:
				if !c.overlaps {
					t.Fatalf("the next record was committed (err %v) while %s; want it held until that batch lands", err, c.rationale)
				}
				if err != nil {
					t.Fatal(err)
				}
				land()
			case <-time.After(500 * time.Millisecond):
				if c.overlaps {
					// A busy machine may be slow: give it the test's whole minute.
					select {
					case err := <-done:
						if err != nil {
							t.Fatal(err)
						}
					case <-ctx.Done():
						t.Fatalf("the next record was not committed while %s; want it proposed beside it", c.rationale)
					}
					land()
					break
				}
				if s := l.Stats(); s.Records != 1 {
					t.Fatalf("%d records proposed; want only the warm-up one while %s", s.Records, c.rationale)
				}
				land()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			if got := fmt.Sprint(ld.fsm.list()); got != "[warm next]" {
				t.Fatalf("leader's state %s, want [warm next]", got)
			}
		})
	}
}
