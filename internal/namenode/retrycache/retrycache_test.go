package retrycache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"smarth/internal/rpc/callid"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func id(n uint64) callid.ID { return callid.ID{Client: [16]byte{1}, Call: n} }

// run is one attempt of a call: the outcome from the cache, or fn's.
func run(t *testing.T, c *Cache, i callid.ID, user string, fn func() (string, bool)) (string, bool) {
	t.Helper()
	call, out, hit, err := c.Begin(context.Background(), i, user)
	if err != nil {
		t.Fatal(err)
	}
	if hit {
		return out.(string), true
	}
	v, ok := fn()
	call.End(ok, v)
	return v, false
}

func TestRepeatGetsFirstOutcome(t *testing.T) {
	c := New(Config{})
	runs := 0
	do := func() (string, bool) { runs++; return fmt.Sprintf("run %d", runs), true }
	if v, hit := run(t, c, id(1), "alice", do); hit || v != "run 1" {
		t.Fatalf("first attempt: %q hit %v", v, hit)
	}
	if v, hit := run(t, c, id(1), "alice", do); !hit || v != "run 1" || runs != 1 {
		t.Fatalf("repeat: %q hit %v after %d runs; want the first outcome, run once", v, hit, runs)
	}
	if _, hit := run(t, c, id(2), "alice", do); hit || runs != 2 {
		t.Fatalf("another call id was answered from the cache")
	}
}

func TestFailureIsNotRemembered(t *testing.T) {
	c := New(Config{})
	run(t, c, id(1), "alice", func() (string, bool) { return "no", false })
	if v, hit := run(t, c, id(1), "alice", func() (string, bool) { return "yes", true }); hit || v != "yes" {
		t.Fatalf("repeat of a failed call: %q hit %v; want it run again", v, hit)
	}
}

// TestKeyedByUser: another user with the same ids neither gets the
// outcome nor is refused: the call runs for it.
func TestKeyedByUser(t *testing.T) {
	c := New(Config{})
	run(t, c, id(1), "alice", func() (string, bool) { return "alice's file", true })
	if v, hit := run(t, c, id(1), "mallory", func() (string, bool) { return "mallory's", true }); hit || v != "mallory's" {
		t.Fatalf("mallory with alice's ids: %q hit %v; want her own call run", v, hit)
	}
	if v, hit := run(t, c, id(1), "alice", nil); !hit || v != "alice's file" {
		t.Fatalf("alice's entry after mallory's call: %q hit %v", v, hit)
	}
}

func TestExpiry(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	c := New(Config{Expiry: time.Minute, Now: clk.Now})
	run(t, c, id(1), "alice", func() (string, bool) { return "a", true })
	clk.add(59 * time.Second)
	if _, hit := run(t, c, id(1), "alice", nil); !hit {
		t.Fatalf("entry gone before its expiry")
	}
	clk.add(2 * time.Second)
	if v, hit := run(t, c, id(1), "alice", func() (string, bool) { return "again", true }); hit || v != "again" {
		t.Fatalf("entry answered after its expiry: %q", v)
	}
	clk.add(2 * time.Minute)
	if n := c.Len(); n != 0 {
		t.Fatalf("%d entries held after every one expired", n)
	}
}

// TestCapPerUser: a user filling the cache pushes out its own oldest
// entries, and another user's entry stays.
func TestCapPerUser(t *testing.T) {
	c := New(Config{MaxEntries: 100, MaxPerUser: 10})
	run(t, c, id(1), "alice", func() (string, bool) { return "alice's", true })
	for n := range uint64(1000) {
		run(t, c, id(1000+n), "mallory", func() (string, bool) { return "m", true })
	}
	if n := c.Len(); n != 11 {
		t.Fatalf("%d entries after mallory's 1000 calls; want her 10 and alice's 1", n)
	}
	if v, hit := run(t, c, id(1), "alice", nil); !hit || v != "alice's" {
		t.Fatalf("alice's entry was pushed out by another user's calls")
	}
	if _, hit := run(t, c, id(1999), "mallory", nil); !hit {
		t.Fatalf("mallory's newest entry is gone")
	}
	if _, hit := run(t, c, id(1000), "mallory", func() (string, bool) { return "m", false }); hit {
		t.Fatalf("mallory's oldest entry is still held past her share")
	}
}

// TestCapTotal: with many users the whole cache holds MaxEntries, the
// oldest leaving first.
func TestCapTotal(t *testing.T) {
	c := New(Config{MaxEntries: 50, MaxPerUser: 50})
	for u := range 100 {
		run(t, c, id(1), fmt.Sprintf("u%d", u), func() (string, bool) { return "x", true })
	}
	if n := c.Len(); n != 50 {
		t.Fatalf("%d entries, cap 50", n)
	}
	if _, hit := run(t, c, id(1), "u99", nil); !hit {
		t.Fatalf("newest entry gone")
	}
	if _, hit := run(t, c, id(1), "u0", func() (string, bool) { return "x", false }); hit {
		t.Fatalf("oldest entry kept past the cap")
	}
}

// TestRepeatWaitsForTheFirstAttempt: a repeat arriving while the first
// attempt runs waits for it and gets its outcome (HDFS's
// waitForCompletion); its context ending ends the wait.
func TestRepeatWaitsForTheFirstAttempt(t *testing.T) {
	c := New(Config{})
	first, _, _, _ := c.Begin(context.Background(), id(1), "alice")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := c.Begin(ctx, id(1), "alice"); err == nil {
		t.Fatalf("a repeat with an ended context did not give up waiting")
	}
	got := make(chan any)
	go func() {
		_, out, hit, err := c.Begin(context.Background(), id(1), "alice")
		if !hit || err != nil {
			out = fmt.Sprintf("hit %v err %v", hit, err)
		}
		got <- out
	}()
	first.End(true, "done")
	if v := <-got; v != "done" {
		t.Fatalf("the waiting repeat got %v", v)
	}
}

func TestAddFromReplay(t *testing.T) {
	c := New(Config{})
	c.Add(id(5), "alice", "replayed")
	if v, hit := run(t, c, id(5), "alice", nil); !hit || v != "replayed" {
		t.Fatalf("replayed entry: %q hit %v", v, hit)
	}
}

// TestAgainstModel: random successes, failures and replayed additions
// by a few users, with time passing, against a plain slice of what
// must be held (oldest first, each user's cap, the total cap, expiry):
// after every step the cache holds exactly the model's entries.
func TestAgainstModel(t *testing.T) {
	type held struct {
		id      uint64
		user    string
		expires time.Time
	}
	clk := &clock{now: time.Unix(1e9, 0)}
	const expiry, maxAll, maxUser = time.Minute, 40, 15
	c := New(Config{Expiry: expiry, MaxEntries: maxAll, MaxPerUser: maxUser, Now: clk.Now})
	var model []held
	count := func(user string) int {
		n := 0
		for _, h := range model {
			if h.user == user {
				n++
			}
		}
		return n
	}
	drop := func(i int) { model = append(model[:i], model[i+1:]...) }
	expire := func() {
		for len(model) > 0 && !clk.Now().Before(model[0].expires) {
			drop(0)
		}
	}
	keep := func(n uint64, user string) {
		for count(user) >= maxUser {
			for i, h := range model {
				if h.user == user {
					drop(i)
					break
				}
			}
		}
		for len(model) >= maxAll {
			drop(0)
		}
		model = append(model, held{n, user, clk.Now().Add(expiry)})
	}
	has := func(n uint64, user string) bool {
		for _, h := range model {
			if h.id == n && h.user == user {
				return true
			}
		}
		return false
	}
	users := []string{"alice", "bob", "carol", "mallory", "u5", "u6", "u7"}
	seed := uint64(7)
	rnd := func(n uint64) uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return (seed >> 33) % n }
	for step := range 20000 {
		n, user := 1+rnd(120), users[rnd(uint64(len(users)))]
		clk.add(time.Duration(rnd(3000)) * time.Millisecond)
		expire()
		switch rnd(3) {
		case 0: // a call: a hit if held, else run, succeeding or not
			ok := rnd(4) != 0
			_, hit := run(t, c, id(n), user, func() (string, bool) { return "v", ok })
			if hit != has(n, user) {
				t.Fatalf("step %d: call %d by %s: hit %v, model holds it: %v", step, n, user, hit, has(n, user))
			}
			if !hit && ok {
				keep(n, user)
			}
		case 1: // the member steps down, now and then
			if rnd(20) == 0 {
				c.Standby()
			}
			fallthrough
		default: // a replayed success
			if c.index == nil && has(n, user) {
				// Unindexed, a call held is not looked for; a log
				// never replays one twice (TestStandbyHeldTwice).
				break
			}
			if !has(n, user) {
				keep(n, user)
			}
			c.Add(id(n), user, "v")
		}
		if got := c.Len(); got != len(model) {
			t.Fatalf("step %d: cache holds %d entries, model %d", step, got, len(model))
		}
	}
	for _, h := range model {
		if _, hit := run(t, c, id(h.id), h.user, nil); !hit {
			t.Fatalf("the model's entry %d of %s is not held", h.id, h.user)
		}
	}
}

// TestStandbyAddsThenTakesOver: a standby's additions, made without an
// index, are all found once it is active, and held as long as the caps
// say: the index is built from the rings as they stand.
func TestStandbyAddsThenTakesOver(t *testing.T) {
	c := New(Config{MaxEntries: 300, MaxPerUser: 100})
	for n := range uint64(250) {
		c.Add(id(n), "alice", fmt.Sprint("a", n))
		c.Add(id(n), "bob", fmt.Sprint("b", n))
	}
	if c.index != nil {
		t.Fatalf("a standby's additions built an index")
	}
	if n := c.Len(); n != 200 {
		t.Fatalf("%d entries held; want each user's 100", n)
	}
	for n := range uint64(250) {
		for _, user := range []string{"alice", "bob"} {
			v, hit := run(t, c, id(n), user, func() (string, bool) { return "ran", false })
			if want := n >= 150; hit != want || (hit && v != fmt.Sprint(user[:1], n)) {
				t.Fatalf("call %d of %s: %q hit %v; want hit %v", n, user, v, hit, want)
			}
		}
	}
}

// TestStandbyHeldTwice: a call added twice while there is no index (a
// log holding one call's success twice, which the active's cache rules
// out) is answered with its first outcome.
func TestStandbyHeldTwice(t *testing.T) {
	c := New(Config{})
	c.Add(id(1), "alice", "first")
	c.Add(id(1), "alice", "second")
	if v, hit := run(t, c, id(1), "alice", nil); !hit || v != "first" {
		t.Fatalf("%q hit %v; want the first outcome", v, hit)
	}
	c.Add(id(1), "alice", "third") // indexed now: known, ignored
	if n := c.Len(); n != 2 {
		t.Fatalf("%d entries; want the two added before the index", n)
	}
}

// TestUsersForgotten: a user with nothing held is forgotten, and its
// number, given to another user, does not bring the old entries back.
func TestUsersForgotten(t *testing.T) {
	clk := &clock{now: time.Unix(1e9, 0)}
	c := New(Config{Expiry: time.Minute, MaxEntries: 10, MaxPerUser: 10, Now: clk.Now})
	for u := range 1000 {
		run(t, c, id(uint64(u%3)), fmt.Sprint("u", u), func() (string, bool) { return fmt.Sprint(u), true })
		if u%100 == 50 {
			clk.add(2 * time.Minute)
		}
	}
	if len(c.users)-len(c.free) > 10 || len(c.byName) > 10 {
		t.Fatalf("%d users known (%d names) for 10 entries", len(c.users)-len(c.free), len(c.byName))
	}
	if v, hit := run(t, c, id(999%3), "u999", nil); !hit || v != "999" {
		t.Fatalf("newest entry: %q hit %v", v, hit)
	}
	if _, hit := run(t, c, id(0), "u0", func() (string, bool) { return "", false }); hit {
		t.Fatalf("an expired user's entry came back")
	}
}

// TestUserMakingRoomForItself: a user whose only entry is the oldest of
// a full cache adds another; making room drops that entry, and the user
// must stay known for the new one.
func TestUserMakingRoomForItself(t *testing.T) {
	c := New(Config{MaxEntries: 3, MaxPerUser: 3})
	c.Add(id(1), "alice", "a1")
	c.Add(id(2), "bob", "b2")
	c.Add(id(3), "bob", "b3")
	c.Add(id(4), "alice", "a4")
	run(t, c, id(5), "bob", func() (string, bool) { return "b5", true })
	if v, hit := run(t, c, id(4), "alice", nil); !hit || v != "a4" {
		t.Fatalf("alice's newest entry: %q hit %v", v, hit)
	}
	if n := c.Len(); n != 3 {
		t.Fatalf("%d entries held, cap 3", n)
	}
}

// TestAddWhileTheCallRuns: a replayed success of a call this member is
// running (as active, then deposed) does not make a second entry.
func TestAddWhileTheCallRuns(t *testing.T) {
	c := New(Config{})
	call, _, _, _ := c.Begin(context.Background(), id(1), "alice")
	c.Add(id(1), "alice", "replayed")
	call.End(true, "ran")
	if n := c.Len(); n != 1 {
		t.Fatalf("%d entries for one call", n)
	}
}

// TestQueueBounded: the queue of all entries keeps a slot per entry held
// and a bounded number of slots of entries gone, both when one user at
// its cap pushes out its own oldest behind another user's older entry,
// and when the oldest leave from the front.
func TestQueueBounded(t *testing.T) {
	c := New(Config{MaxEntries: 1000, MaxPerUser: 100})
	c.Add(id(0), "alice", "a")
	for n := range uint64(20000) {
		c.Add(id(1+n), "mallory", "m")
		if q := len(c.order); q > 4*c.live+130 {
			t.Fatalf("after %d calls the queue has %d slots for %d entries", n+1, q, c.live)
		}
	}
	c = New(Config{MaxEntries: 100, MaxPerUser: 100})
	for n := range uint64(20000) {
		c.Add(id(n), "bob", "b")
		if q := len(c.order); q > 4*c.live+130 {
			t.Fatalf("after %d calls the queue has %d slots for %d entries", n+1, q, c.live)
		}
	}
}

// BenchmarkAddAtUserCap: a standby replaying one user's at-most-once
// calls with that user at its share (the default, 65,536), each Add
// pushing out the oldest: what a follower does for every create,
// delete and rename of a namespace benchmark.
func BenchmarkAddAtUserCap(b *testing.B) {
	c := New(Config{})
	for i := range DefaultMaxEntries / 4 {
		c.Add(id(uint64(i)), "alice", nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c.Add(id(uint64(DefaultMaxEntries+i)), "alice", nil)
	}
}

// BenchmarkBeginEndAtUserCap: the active's side of the same calls, each
// a first attempt that succeeds.
func BenchmarkBeginEndAtUserCap(b *testing.B) {
	c := New(Config{})
	ctx := context.Background()
	for i := range DefaultMaxEntries / 4 {
		c.Add(id(uint64(i)), "alice", nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		call, _, hit, err := c.Begin(ctx, id(uint64(DefaultMaxEntries+i)), "alice")
		if hit || err != nil {
			b.Fatal(hit, err)
		}
		call.End(true, nil)
	}
}
