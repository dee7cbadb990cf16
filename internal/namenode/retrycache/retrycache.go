// Package retrycache is the namenode's retry cache, as HDFS's RetryCache
// (dfs.namenode.enable.retrycache): the outcome of each at-most-once call
// (create, delete, rename, ...) by its client's and call's ids
// (callid.ID) and the calling user, so that a call repeated after its
// reply was lost gets the first attempt's outcome instead of being
// applied twice: a repeated create returns the file it made, not "already
// exists"; a repeated delete returns success, not "not found".
//
// Only successes are remembered, as in HDFS: a failed call changed
// nothing, so its repeat may run again. Entries expire (HDFS's
// dfs.namenode.retrycache.expirytime.millis, 10 minutes) and the cache
// holds at most Config.MaxEntries of them, each user at most
// Config.MaxPerUser: a user who floods the cache with calls pushes out
// only its own oldest entries, never another user's. The key includes
// the user, so that one user who learns another's ids cannot read or
// replay the other's outcome. Entries of calls still running are not
// counted against the caps: there are at most as many as calls in
// flight, which the RPC server bounds (ipc_max_calls, connections).
//
// How it is held: a standby adds an entry for every at-most-once call it
// replays and never looks one up, so the finished entries are kept as
// each user's ring of fixed-size, pointer-free records (the outcomes in
// a parallel slice), with one queue of all of them in order for expiry
// and the total cap, and no per-entry allocation. The index from a call
// to its entry, the only thing lookups need, is built on the first Begin
// (this member became the active) and kept from then on; Standby drops
// it again. A standby's Add is thus an append to two rings, where a map
// of some 65,536 entries a user took three cache-missing operations (and
// an allocation the collector had to trace) per call.
package retrycache

import (
	"context"
	"sync"
	"time"

	"smarth/internal/rpc/callid"
)

// Defaults: HDFS's expiry; sizes for about 100 MB at a few hundred bytes
// an entry (HDFS sizes its cache as 3% of the heap).
const (
	DefaultExpiry     = 10 * time.Minute
	DefaultMaxEntries = 256 << 10
)

// Config bounds a cache.
type Config struct {
	Expiry     time.Duration // an entry is forgotten this long after it was made
	MaxEntries int           // entries of all users
	MaxPerUser int           // entries of one user (0: MaxEntries/4)
	Now        func() time.Time
}

// key is a call: its ids and the user's number in Cache.users.
type key struct {
	client [callid.ClientIDLen]byte
	call   uint64
	user   uint32
}

// record is a finished entry in its user's ring.
type record struct {
	client  [callid.ClientIDLen]byte
	call    uint64
	expires int64 // nanoseconds after Cache.base
}

// userLog is one user's finished entries, oldest first, in a ring that
// grows up to the user's cap. Entries are numbered as they come, from
// 0. A user is forgotten only when nothing of it is held, and its last
// entry can only leave from the front of Cache.order, after every ref of
// the user: so no ref of a forgotten user remains, to be read as an
// entry of the next user given its place.
type userLog struct {
	name   string
	recs   []record
	outs   []any // outcomes, beside recs
	start  int   // position of the oldest
	n      int
	lo     uint64 // number of the oldest
	flying int    // calls of this user between Begin and End
}

func (u *userLog) at(num uint64) int { return (u.start + int(num-u.lo)) % len(u.recs) }

func (u *userLog) holds(num uint64) bool { return num >= u.lo && num-u.lo < uint64(u.n) }

// push appends an entry (the caller keeps n under the cap) and gives its
// number.
func (u *userLog) push(r record, out any) uint64 {
	if u.n == len(u.recs) {
		c := max(2*len(u.recs), 16)
		recs, outs := make([]record, c), make([]any, c)
		for i := range u.n {
			p := (u.start + i) % len(u.recs)
			recs[i], outs[i] = u.recs[p], u.outs[p]
		}
		u.recs, u.outs, u.start = recs, outs, 0
	}
	p := (u.start + u.n) % len(u.recs)
	u.recs[p], u.outs[p] = r, out
	u.n++
	return u.lo + uint64(u.n) - 1
}

// pop drops the oldest entry and gives it.
func (u *userLog) pop() record {
	r := u.recs[u.start]
	u.outs[u.start] = nil
	u.start = (u.start + 1) % len(u.recs)
	u.n--
	u.lo++
	return r
}

// ref is an entry's place in Cache.order: its user and number.
type ref struct {
	user uint32
	num  uint64
}

// Cache is safe for concurrent use.
type Cache struct {
	cfg    Config
	base   time.Time
	mu     sync.Mutex
	users  []*userLog        // by number; nil: free
	byName map[string]uint32 // numbers of the users in users
	free   []uint32          // free numbers in users
	order  []ref             // finished entries, oldest first (they expire in this order), with refs to entries already gone
	head   int               // order[head:] is the queue
	live   int               // finished entries held
	index  map[key]uint64    // call -> number of its entry; nil until the first Begin, and after Standby
	flying map[key]*Call     // calls between Begin and End
}

// New makes a cache.
func New(cfg Config) *Cache {
	if cfg.Expiry <= 0 {
		cfg.Expiry = DefaultExpiry
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.MaxPerUser <= 0 {
		cfg.MaxPerUser = max(cfg.MaxEntries/4, 1)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache{cfg: cfg, base: cfg.Now(), byName: map[string]uint32{}, flying: map[key]*Call{}}
}

// Call is a call's place in the cache, from Begin to End.
type Call struct {
	c       *Cache
	k       key
	done    chan struct{} // made by the first repeat that waits; closed at End
	ok      bool
	outcome any
}

// Begin looks the call up. A finished, successful first attempt gives
// its outcome (hit): the caller answers with it and does nothing. A
// first attempt still running (the client gave up on it and repeated the
// call here) is waited for, as HDFS's waitForCompletion, until ctx ends.
// Otherwise the call is the first attempt (or a failed one's repeat): the
// caller runs it and reports with End.
func (c *Cache) Begin(ctx context.Context, id callid.ID, user string) (call *Call, outcome any, hit bool, err error) {
	for {
		c.mu.Lock()
		c.expireLocked()
		c.indexLocked()
		k := key{id.Client, id.Call, c.userLocked(user)}
		u := c.users[k.user]
		if num, ok := c.index[k]; ok {
			out := u.outs[u.at(num)]
			c.releaseLocked(k.user)
			c.mu.Unlock()
			return nil, out, true, nil
		}
		first := c.flying[k]
		if first == nil {
			call := &Call{c: c, k: k}
			c.flying[k] = call
			u.flying++
			c.mu.Unlock()
			return call, nil, false, nil
		}
		c.releaseLocked(k.user)
		if first.done == nil {
			first.done = make(chan struct{})
		}
		done := first.done
		c.mu.Unlock()
		select {
		case <-done:
			// Held now if it succeeded; run again if it failed.
		case <-ctx.Done():
			return nil, nil, false, ctx.Err()
		}
	}
}

// End records the attempt's outcome: a success is kept until it expires;
// a failure is forgotten, so a repeat runs again.
func (call *Call) End(ok bool, outcome any) {
	c, k := call.c, call.k
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.flying, k)
	c.users[k.user].flying--
	if ok {
		c.keepLocked(k, outcome)
	}
	c.releaseLocked(k.user)
	if call.done != nil {
		close(call.done)
	}
}

// Add records the success of a call applied elsewhere: an HA standby
// replaying the active's edits (HDFS's addCacheEntryWithPayload on edit
// log replay), so that a repeat after a failover is answered here. A call
// already known keeps its entry; while there is no index (a standby that
// was never active) only the calls in flight are looked at, and a second
// entry of a call is dropped when the index is built. The log a standby
// replays holds a call's success once (the active answers its repeats
// from this cache), so that is a guard, not a path a standby takes.
func (c *Cache) Add(id callid.ID, user string, outcome any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	k := key{id.Client, id.Call, c.userLocked(user)}
	if c.flying[k] == nil {
		if _, known := c.index[k]; !known {
			c.keepLocked(k, outcome)
		}
	}
	c.releaseLocked(k.user)
}

// Standby drops the index: this member stopped being the active, and a
// standby only adds. The next Begin builds it again.
func (c *Cache) Standby() {
	c.mu.Lock()
	c.index = nil
	c.mu.Unlock()
}

// userLocked gives the user's number, making its log if it has none.
// The caller releases it (releaseLocked) once done, so that a user left
// with nothing held is forgotten.
func (c *Cache) userLocked(name string) uint32 {
	if n, ok := c.byName[name]; ok {
		return n
	}
	u := &userLog{name: name}
	var n uint32
	if len(c.free) > 0 {
		n = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		c.users[n] = u
	} else {
		n = uint32(len(c.users))
		c.users = append(c.users, u)
	}
	c.byName[name] = n
	return n
}

// releaseLocked forgets a user with no entries and no call in flight,
// so that the users a cache knows are bounded by what it holds.
func (c *Cache) releaseLocked(n uint32) {
	u := c.users[n]
	if u.n > 0 || u.flying > 0 {
		return
	}
	delete(c.byName, u.name)
	c.users[n] = nil
	c.free = append(c.free, n)
}

// keepLocked starts a finished entry's life and applies the bounds:
// the user's oldest entry goes when the user is at its share, the oldest
// of all when the cache is full.
func (c *Cache) keepLocked(k key, outcome any) {
	u := c.users[k.user]
	for u.n >= c.cfg.MaxPerUser {
		c.popLocked(k.user)
	}
	u.flying++ // pinned: making room must not forget this user
	for c.live >= c.cfg.MaxEntries {
		c.popOldestLocked()
	}
	u.flying--
	r := record{client: k.client, call: k.call, expires: int64(c.cfg.Now().Sub(c.base) + c.cfg.Expiry)}
	num := u.push(r, outcome)
	c.live++
	if c.index != nil {
		c.index[k] = num
	}
	if c.head > 0 && c.head >= len(c.order)/2 {
		c.order = c.order[:copy(c.order, c.order[c.head:])]
		c.head = 0
	}
	c.order = append(c.order, ref{k.user, num})
	if q := len(c.order) - c.head; q > 64 && q > 2*c.live {
		c.compactLocked()
	}
}

// popLocked drops user n's oldest entry.
func (c *Cache) popLocked(n uint32) {
	u := c.users[n]
	num := u.lo
	r := u.pop()
	c.live--
	if c.index != nil {
		k := key{r.client, r.call, n}
		if c.index[k] == num {
			delete(c.index, k)
		}
	}
}

// oldestLocked skips the refs of entries already gone (a user's cap
// dropped them) and gives the oldest held entry's user and the record.
func (c *Cache) oldestLocked() (uint32, *record, bool) {
	for c.head < len(c.order) {
		r := c.order[c.head]
		if u := c.users[r.user]; u != nil && u.holds(r.num) {
			return r.user, &u.recs[u.at(r.num)], true
		}
		c.head++
	}
	return 0, nil, false
}

func (c *Cache) popOldestLocked() {
	if n, _, ok := c.oldestLocked(); ok {
		c.head++
		c.popLocked(n)
		c.releaseLocked(n)
	}
}

// compactLocked drops the refs of entries gone, which a user at its cap
// leaves behind one per call while an older entry of another user holds
// the queue's head.
func (c *Cache) compactLocked() {
	live := c.order[:0]
	for _, r := range c.order[c.head:] {
		if u := c.users[r.user]; u != nil && u.holds(r.num) {
			live = append(live, r)
		}
	}
	c.order, c.head = live, 0
}

// expireLocked drops entries past their expiry: the oldest first, so it
// stops at the first one still good.
func (c *Cache) expireLocked() {
	now := int64(c.cfg.Now().Sub(c.base))
	for {
		_, r, ok := c.oldestLocked()
		if !ok || now < r.expires {
			return
		}
		c.popOldestLocked()
	}
}

// indexLocked builds the index if there is none, oldest entry first, so
// that a call held twice keeps its first outcome.
func (c *Cache) indexLocked() {
	if c.index != nil {
		return
	}
	c.index = make(map[key]uint64, c.live)
	for n, u := range c.users {
		if u == nil {
			continue
		}
		for i := range u.n {
			r := &u.recs[(u.start+i)%len(u.recs)]
			k := key{r.client, r.call, uint32(n)}
			if _, dup := c.index[k]; !dup {
				c.index[k] = u.lo + uint64(i)
			}
		}
	}
}

// Len is the number of finished entries held (for metrics and tests).
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	return c.live
}
