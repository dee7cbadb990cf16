package datanode

import (
	"context"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// throttle is HDFS's DataTransferThrottler for balancer moves
// (dfs.datanode.balance.bandwidthPerSec): every move this datanode sends
// shares one budget of balance_bandwidth bytes per second, so
// rebalancing never takes the bandwidth clients and re-replication need.
// It is a token bucket (golang.org/x/time/rate) holding at most a
// quarter second of the budget (at least a packet), so a burst after an
// idle spell stays small. It keeps its own accounting — bytes granted,
// and when the first and the latest grant were made — which the
// datanode's metrics and tests read: bytes - burst <= rate x span holds
// however slowly the machine runs.
type throttle struct {
	lim   *rate.Limiter
	rate  int64
	burst int

	mu          sync.Mutex // guards bytes, first, last
	bytes       int64
	first, last time.Time
}

// newThrottle returns a throttle of bw bytes per second, nil (no limit)
// when bw <= 0.
func newThrottle(bw int64) *throttle {
	if bw <= 0 {
		return nil
	}
	burst := int(max(bw/4, 128<<10))
	return &throttle{lim: rate.NewLimiter(rate.Limit(bw), burst), rate: bw, burst: burst}
}

// wait blocks until n bytes may be sent.
func (t *throttle) wait(ctx context.Context, n int) error {
	for n > 0 {
		k := min(n, t.burst)
		if err := t.lim.WaitN(ctx, k); err != nil {
			return err
		}
		now := time.Now()
		t.mu.Lock()
		if t.first.IsZero() {
			t.first = now
		}
		t.last = now
		t.bytes += int64(k)
		t.mu.Unlock()
		n -= k
	}
	return nil
}

// throttleStats is a throttle's accounting.
type throttleStats struct {
	Bytes int64         // granted
	Span  time.Duration // from the first grant to the latest
	Rate  int64         // bytes per second allowed
	Burst int           // bytes granted at once after an idle spell
}

func (t *throttle) stats() throttleStats {
	if t == nil {
		return throttleStats{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return throttleStats{Bytes: t.bytes, Span: t.last.Sub(t.first), Rate: t.rate, Burst: t.burst}
}

// throttledConn sends through a throttle. It hides the TCP connection's
// ReadFrom, so a throttled transfer takes the plain write path rather
// than sendfile, which could not be paced.
type throttledConn struct {
	net.Conn
	ctx context.Context
	t   *throttle
}

func (c *throttledConn) Write(b []byte) (int, error) {
	if err := c.t.wait(c.ctx, len(b)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// BalanceBytes is what balancer moves from this datanode have sent
// through its balance_bandwidth throttle (0 without one).
func (d *DataNode) BalanceBytes() int64 { return d.balance.stats().Bytes }
