package namenode

import (
	"sync"
	"time"

	"smarth/internal/auth"
)

// credCache remembers credentials whose signature checked out, keyed by
// the exact credential bytes, so that a client's every call does not
// recompute an HMAC-SHA256 (and, for a token, decode its JSON): in secure
// mode that check was about 6% of the namenode's CPU at 64 client
// threads. Only the signature check is cached. Whether a token is still
// live (not expired, not cancelled, its renewed expiry) is decided on
// every hit by webAuth.live, so a cancelled delegation token is refused
// on the very next call, as it was without the cache. A plain user
// credential does not expire: it is valid as long as the identity secret,
// which is loaded once per process.
//
// The zero value is ready to use.
type credCache struct {
	mu sync.RWMutex
	m  map[string]credEntry
}

type credEntry struct {
	user string
	tok  *auth.Token // nil: a plain user credential
}

// maxCachedCreds bounds the cache: a caller minting many tokens (each
// WebHDFS redirect carries a new one) must not grow the namenode's memory.
// A namenode sees a few credentials per user and host.
const maxCachedCreds = 4096

func (c *credCache) get(cred string) (credEntry, bool) {
	c.mu.RLock()
	e, ok := c.m[cred]
	c.mu.RUnlock()
	return e, ok
}

// put adds a checked credential. When the cache is full it first drops
// tokens that can no longer be used at now (past their max date, or past
// their expiry for tokens that cannot be renewed), and if that frees
// nothing, everything: a refill costs one HMAC per credential.
func (c *credCache) put(cred string, e credEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]credEntry)
	}
	if len(c.m) >= maxCachedCreds {
		ms := now.UnixMilli()
		for k, v := range c.m {
			if v.tok != nil && max(v.tok.Expires, v.tok.MaxDate) < ms {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCachedCreds {
			clear(c.m)
		}
	}
	c.m[cred] = e
}

func (c *credCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
