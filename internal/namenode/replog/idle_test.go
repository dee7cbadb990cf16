package replog

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestIdleLeaderIsQuiet: a leader with nothing to replicate sends each
// follower its commit index at most once per commitTimeout (beside raft's
// heartbeats), not every 5 ms: on an idle group of 3 namenodes those
// messages were most of the 10-17% of a core it spent doing nothing. The
// follower still learns the last commit: the record written before the
// quiet second is applied by every follower.
func TestIdleLeaderIsQuiet(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, nil)
	ld := leaderOf(t, nodes)
	if err := write(context.Background(), ld.log, ld.fsm, "r1"); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		waitFor(t, 20*time.Second, n.id+" to apply the record written before the quiet period", func() bool {
			return len(n.fsm.list()) == 1
		})
	}
	// A window in which an election happened (two busy cores can delay
	// heartbeats past the tests' 300 ms timeout) counts the new stint's
	// catch-up appends too: it is measured again.
	for attempt := 1; ; attempt++ {
		term := ld.log.Term()
		before := map[raft.ServerID]uint64{}
		for _, n := range nodes {
			if n != ld {
				st, _ := ld.log.followers.snapshot(raft.ServerID(n.id))
				before[raft.ServerID(n.id)] = st.appends
			}
		}
		start := time.Now()
		time.Sleep(time.Second) // the window measured, nothing written in it
		elapsed := time.Since(start)
		if !ld.log.IsLeader() || ld.log.Term() != term {
			if attempt == 5 {
				t.Fatalf("an election in each of 5 quiet seconds: nothing measured")
			}
			t.Logf("the leadership changed during quiet second %d; again", attempt)
			ld = leaderOf(t, nodes)
			continue
		}
		// The leader's replicator sends one commit-index AppendEntries
		// each time its random timer (commitTimeout to twice it) fires,
		// and no more: the count can fall short on a busy machine, never
		// exceed this.
		limit := uint64(elapsed/commitTimeout) + 2
		for id, n0 := range before {
			st, _ := ld.log.followers.snapshot(id)
			n := st.appends - n0
			t.Logf("%s: %d AppendEntries other than heartbeats in %v of an idle group", id, n, elapsed)
			if n > limit {
				t.Errorf("%s got %d AppendEntries other than heartbeats in %v with nothing to replicate; want at most %d (one per %v)", id, n, elapsed, limit, commitTimeout)
			}
		}
		return
	}
}
