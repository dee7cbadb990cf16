package replog

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestGatherWaitsForTheWritersOfTheLastCommit: after a commit of four
// records, a lone record waits with its slot for three more and they
// share one entry (GatherWait); plain group commit proposes it alone at
// once; and a gather whose writers do not come back ends at its bound
// and proposes what it has.
func TestGatherWaitsForTheWritersOfTheLastCommit(t *testing.T) {
	for _, mode := range []string{"gather", "plain"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			nodes := group(t, dir, 3, func(i int, c *Config) {
				if mode == "gather" {
					c.GatherWait = time.Minute // the bound is set per step below
				}
			})
			ld := leaderOf(t, nodes)
			l := ld.log
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var next int
			appendN := func(n int) []Handle {
				var hs []Handle
				for range n {
					next++
					ld.fsm.mu.Lock()
					ld.fsm.recs = append(ld.fsm.recs, fmt.Sprint(next))
					h, err := l.Append([]byte(fmt.Sprint(next)))
					ld.fsm.mu.Unlock()
					if err != nil {
						t.Fatal(err)
					}
					hs = append(hs, h)
				}
				return hs
			}
			syncAll := func(hs []Handle) *sync.WaitGroup {
				var wg sync.WaitGroup
				for _, h := range hs {
					wg.Go(func() {
						if err := l.Sync(ctx, h); err != nil {
							t.Error(err)
						}
					})
				}
				return &wg
			}
			entries := func() (uint64, uint64) { s := l.Stats(); return s.Batches, s.Records }
			setBounds := func(wait, commit time.Duration) {
				l.mu.Lock()
				l.cfg.GatherWait, l.commitEWMA = wait, commit
				l.mu.Unlock()
			}

			// Four writers share one entry: appended before any Sync.
			bs, rs := entries()
			syncAll(appendN(4)).Wait()
			b0, r0 := entries()
			if b0 != bs+1 || r0 != rs+4 {
				t.Fatalf("four records appended before any Sync went out in %d entries with %d records, want 1 with 4", b0-bs, r0-rs)
			}
			if mode == "gather" {
				setBounds(time.Minute, 2*time.Minute)
			}

			// One of them comes back first.
			first := syncAll(appendN(1))
			if mode == "plain" {
				first.Wait()
				if b, r := entries(); b != b0+1 || r != r0+1 {
					t.Fatalf("plain: the lone record went out in %d entries with %d records, want 1 with 1", b-b0, r-r0)
				}
				return
			}
			waitFor(t, 20*time.Second, "the flush loop gathering", func() bool {
				l.mu.Lock()
				defer l.mu.Unlock()
				return l.gathering
			})
			if b, _ := entries(); b != b0 {
				t.Fatalf("a batch was proposed while gathering (%d entries)", b-b0)
			}
			rest := syncAll(appendN(3))
			first.Wait()
			rest.Wait()
			if b, r := entries(); b != b0+1 || r != r0+4 {
				t.Fatalf("gather: the four records went out in %d entries with %d records, want 1 with 4", b-b0, r-r0)
			}

			// A writer alone where four were: the gather ends at its bound.
			b1, r1 := entries()
			setBounds(200*time.Millisecond, 2*time.Minute)
			syncAll(appendN(1)).Wait()
			if b, r := entries(); b != b1+1 || r != r1+1 {
				t.Fatalf("gather past its bound: %d entries with %d records, want 1 with 1", b-b1, r-r1)
			}
			waitFor(t, 20*time.Second, "every member to apply the 9 records", func() bool {
				for _, n := range nodes {
					if len(n.fsm.list()) != 9 {
						return false
					}
				}
				return true
			})
		})
	}
}
