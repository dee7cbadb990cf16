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

type key struct {
	id   callid.ID
	user string
}

type entry struct {
	key     key
	done    chan struct{} // closed when the first attempt finished
	ok      bool          // it succeeded (then outcome is its reply)
	outcome any
	expires time.Time
	// The entry's places in Cache.order and in its user's chain, once
	// finished: links in the entry itself, since a standby adds one for
	// every at-most-once call it replays and three allocations an entry
	// (the entry and two list elements) showed in its profile.
	all, mine links
}

// links are an entry's neighbours in one chain.
type links struct{ prev, next *entry }

// chain is a list of finished entries, oldest first, threaded through
// each entry's links of one kind (all or mine).
type chain struct {
	head, tail *entry
	n          int
	at         func(*entry) *links
}

func allLinks(e *entry) *links  { return &e.all }
func mineLinks(e *entry) *links { return &e.mine }

func (c *chain) pushBack(e *entry) {
	l := c.at(e)
	l.prev, l.next = c.tail, nil
	if c.tail != nil {
		c.at(c.tail).next = e
	} else {
		c.head = e
	}
	c.tail = e
	c.n++
}

func (c *chain) remove(e *entry) {
	l := c.at(e)
	if l.prev != nil {
		c.at(l.prev).next = l.next
	} else {
		c.head = l.next
	}
	if l.next != nil {
		c.at(l.next).prev = l.prev
	} else {
		c.tail = l.prev
	}
	l.prev, l.next = nil, nil
	c.n--
}

// Cache is safe for concurrent use.
type Cache struct {
	cfg    Config
	mu     sync.Mutex
	m      map[key]*entry
	order  chain // finished entries, oldest first (they expire in this order)
	byUser map[string]*chain
	closed chan struct{} // the done of entries added already finished (Add)
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
	closed := make(chan struct{})
	close(closed)
	return &Cache{cfg: cfg, m: map[key]*entry{}, order: chain{at: allLinks}, byUser: map[string]*chain{}, closed: closed}
}

// Call is a call's place in the cache, from Begin to End.
type Call struct {
	c *Cache
	e *entry
}

// Begin looks the call up. A finished, successful first attempt gives
// its outcome (hit): the caller answers with it and does nothing. A
// first attempt still running (the client gave up on it and repeated the
// call here) is waited for, as HDFS's waitForCompletion, until ctx ends.
// Otherwise the call is the first attempt (or a failed one's repeat): the
// caller runs it and reports with End.
func (c *Cache) Begin(ctx context.Context, id callid.ID, user string) (call *Call, outcome any, hit bool, err error) {
	k := key{id, user}
	for {
		c.mu.Lock()
		c.expireLocked()
		e := c.m[k]
		if e == nil {
			e = &entry{key: k, done: make(chan struct{})}
			c.m[k] = e
			c.mu.Unlock()
			return &Call{c, e}, nil, false, nil
		}
		select {
		case <-e.done:
			c.mu.Unlock()
			// A failed attempt was removed at End: only successes stay.
			return nil, e.outcome, true, nil
		default:
		}
		c.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, nil, false, ctx.Err()
		}
	}
}

// End records the attempt's outcome: a success is kept until it expires;
// a failure is forgotten, so a repeat runs again.
func (call *Call) End(ok bool, outcome any) {
	c, e := call.c, call.e
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		e.ok, e.outcome = true, outcome
		c.keepLocked(e)
	} else if c.m[e.key] == e {
		delete(c.m, e.key)
	}
	close(e.done)
}

// Add records the success of a call applied elsewhere: an HA standby
// replaying the active's edits (HDFS's addCacheEntryWithPayload on edit
// log replay), so that a repeat after a failover is answered here. A call
// already known keeps its entry.
func (c *Cache) Add(id callid.ID, user string, outcome any) {
	k := key{id, user}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	if c.m[k] != nil {
		return
	}
	e := &entry{key: k, done: c.closed, ok: true, outcome: outcome}
	c.m[k] = e
	c.keepLocked(e)
}

// keepLocked starts a finished entry's life and applies the bounds:
// the user's oldest entry goes when the user is at its share, the oldest
// of all when the cache is full.
func (c *Cache) keepLocked(e *entry) {
	e.expires = c.cfg.Now().Add(c.cfg.Expiry)
	u := c.byUser[e.key.user]
	if u == nil {
		u = &chain{at: mineLinks}
		c.byUser[e.key.user] = u
	}
	for u.n >= c.cfg.MaxPerUser {
		c.removeLocked(u.head)
	}
	for c.order.n >= c.cfg.MaxEntries {
		c.removeLocked(c.order.head)
	}
	c.order.pushBack(e)
	c.byUser[e.key.user].pushBack(e)
}

func (c *Cache) removeLocked(e *entry) {
	if c.m[e.key] == e {
		delete(c.m, e.key)
	}
	c.order.remove(e)
	if u := c.byUser[e.key.user]; u != nil {
		u.remove(e)
		if u.n == 0 {
			delete(c.byUser, e.key.user)
		}
	}
}

// expireLocked drops entries past their expiry: the oldest first, so it
// stops at the first one still good.
func (c *Cache) expireLocked() {
	now := c.cfg.Now()
	for e := c.order.head; e != nil; e = c.order.head {
		if now.Before(e.expires) {
			return
		}
		c.removeLocked(e)
	}
}

// Len is the number of finished entries held (for metrics and tests).
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	return c.order.n
}
