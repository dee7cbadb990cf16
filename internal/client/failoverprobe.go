package client

import (
	"context"
	"sync"
	"time"

	"smarth/internal/rpc/dfspb"
)

// activeWatch is a failoverConn's one watch for a new active while its
// calls wait between failover rounds (every namenode refused, was
// unreachable or said standby naming no active: an election is under
// way). A blind sleep, 100 ms doubling to 2 s, made a call wait out the
// whole sleep when the election ended just after it began: p50 0.39 s
// from "another member ACTIVE" to the first acknowledged write after a
// kill -9 of the active (docs/reliability.md). Instead the waiters ask
// the group for its HA status every probeEvery and retry at once when a
// member says ACTIVE at a term above any they knew when they began to
// wait, the sleep staying the bound of the wait.
//
// One watch per connection, shared by every call waiting on it (a
// FileSystem's writers, its lease renewer, ... all fail over together),
// so many goroutines of one client cost one status call per member per
// probeEvery; each member has at most one status call outstanding (a
// hung one is asked again only after its deadline), and the watch stops
// when its last waiter stops waiting.
type activeWatch struct {
	c       *failoverConn
	cancel  context.CancelFunc
	waiters int // guarded by c.watchMu

	mu      sync.Mutex
	best    int           // the member last seen ACTIVE at the highest term; -1: none yet
	term    uint64        // its term
	changed chan struct{} // closed (and replaced) when best changes
}

// awaitActive waits up to sleep (or until ctx ends) for a member to say
// it is the active at a term above known, and returns it (-1: none did).
func (c *failoverConn) awaitActive(ctx context.Context, sleep time.Duration, known uint64) int {
	c.watchMu.Lock()
	w := c.watch
	if w == nil {
		wctx, cancel := context.WithCancel(context.Background())
		w = &activeWatch{c: c, cancel: cancel, best: -1, changed: make(chan struct{})}
		c.watch = w
		go w.run(wctx)
	}
	w.waiters++
	c.watchMu.Unlock()
	defer func() {
		c.watchMu.Lock()
		if w.waiters--; w.waiters == 0 {
			w.cancel()
			if c.watch == w {
				c.watch = nil
			}
		}
		c.watchMu.Unlock()
	}()

	timer := time.NewTimer(sleep)
	defer timer.Stop()
	for {
		w.mu.Lock()
		best, term, changed := w.best, w.term, w.changed
		w.mu.Unlock()
		if best >= 0 && term > known {
			return best
		}
		select {
		case <-ctx.Done():
			return -1
		case <-timer.C:
			return -1
		case <-changed:
		}
	}
}

// knownTerm is the highest term any member has said it had.
func (c *failoverConn) knownTerm() uint64 {
	var t uint64
	for _, m := range c.members {
		t = max(t, m.term.Load())
	}
	return t
}

// run asks every member for its HA status every probeEvery until ctx
// ends, each member's answer published as it comes.
func (w *activeWatch) run(ctx context.Context) {
	c := w.c
	deadline := max(min(c.probeAfter, 500*time.Millisecond), probeEvery)
	busy := make([]bool, len(c.members)) // a status call to the member is outstanding
	done := make(chan int, len(c.members))
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		for j, m := range c.members {
			if busy[j] {
				continue
			}
			busy[j] = true
			go func() {
				defer func() { done <- j }()
				pctx, cancel := context.WithTimeout(ctx, deadline)
				defer cancel()
				st := &dfspb.GetHAStatusResponse{}
				if err := m.ic.Invoke(pctx, dfspb.ClientProtocol_GetHAStatus_FullMethodName, &dfspb.GetHAStatusRequest{}, st); err != nil {
					return
				}
				m.noteTerm(st.GetTerm())
				if st.GetState() == dfspb.HAState_ACTIVE {
					w.sawActive(j, st.GetTerm())
				}
			}()
		}
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				return
			case j := <-done:
				busy[j] = false
			case <-tick.C:
				wait = false
			}
		}
	}
}

// sawActive publishes member j's ACTIVE answer at term if that term is
// the highest seen.
func (w *activeWatch) sawActive(j int, term uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.best >= 0 && term <= w.term {
		return
	}
	w.best, w.term = j, term
	close(w.changed)
	w.changed = make(chan struct{})
}

// noteTerm raises the member's known term to t.
func (m *failoverMember) noteTerm(t uint64) {
	for old := m.term.Load(); t > old && !m.term.CompareAndSwap(old, t); old = m.term.Load() {
	}
}
