package replog

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// raft gives a transfer's target one election timeout to win and answers
// "leadership transfer timeout" when it has not; on a loaded host a
// TimeoutNow can take longer than that to arrive. TransferLeadership asks
// again (the message lost in flight) or sees that the target won after all
// (the message only late), and returns nil with the target leading in both.
func TestTransferOutlivesRaftsTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deliver bool // the held TimeoutNow arrives late instead of never
	}{{"lost", false}, {"late", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int32
			hold := 0 * time.Millisecond
			nodes := group(t, t.TempDir(), 3, func(i int, c *Config) {
				hold = 2*c.ElectionTimeout + 100*time.Millisecond
				c.beforeTimeoutNow = func(string) error {
					if sent.Add(1) > 1 {
						return nil
					}
					time.Sleep(hold) // past raft's timer: it answers "leadership transfer timeout"
					if tc.deliver {
						return nil
					}
					return errors.New("dropped by the test")
				}
			})
			ld := leaderOf(t, nodes)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := write(ctx, ld.log, ld.fsm, "a"); err != nil {
				t.Fatal(err)
			}
			to := another(nodes, ld)
			start := time.Now()
			if err := ld.log.TransferLeadership(ctx, to.id); err != nil {
				t.Fatalf("transfer to %s with its first TimeoutNow held %v: %v", to.id, hold, err)
			}
			if took := time.Since(start); took < hold {
				t.Fatalf("the transfer returned after %v, before the held TimeoutNow (%v): the hook did not hold it", took, hold)
			}
			if !tc.deliver && sent.Load() < 2 {
				t.Fatalf("%d TimeoutNow sent; the first was dropped, so the transfer must have asked again", sent.Load())
			}
			waitFor(t, 10*time.Second, to.id+" to be the ready leader", to.log.IsLeader)
		})
	}
}
