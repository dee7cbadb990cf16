package datanode

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// errReceiveBudget is wrapped by every refusal for want of receive-buffer
// memory: the write is answered OP_STATUS_ERROR_BUSY.
var errReceiveBudget = errors.New("datanode receive buffers are full")

// recvBudget is the datanode-wide bound on packet buffers held by write
// connections (received and not yet stored, or stored and not yet
// forwarded). Each connection is already bounded (a disk queue of packets,
// a per-client buffer), but 4096 connections of 16 MiB packets are not:
// without a global bound a few peers could make the datanode allocate
// until the OOM killer ends it. A packet waits a little for room (as TCP
// would push back) and is refused after that, so memory never grows past
// the budget.
type recvBudget struct {
	mu       sync.Mutex
	capacity int64
	used     int64         // guarded by mu
	freed    chan struct{} // guarded by mu: closed and replaced whenever bytes are released
	// changed is told every change, under mu so that its view of the
	// total follows the real order (it must be quick: a gauge update).
	changed func(delta int64)
}

func newRecvBudget(capacity int64, changed func(delta int64)) *recvBudget {
	if changed == nil {
		changed = func(int64) {}
	}
	return &recvBudget{capacity: capacity, freed: make(chan struct{}), changed: changed}
}

// full reports whether nothing more fits: a new write is refused at once
// rather than accepted only to stall on its first packet.
func (b *recvBudget) full() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used >= b.capacity
}

// claim takes n bytes, waiting up to wait for room; it fails when the
// wait ends (errReceiveBudget) or stop is closed (errStopped). The
// returned function gives the bytes back; call it once.
func (b *recvBudget) claim(n int64, wait time.Duration, stop <-chan struct{}) (func(), error) {
	var timer *time.Timer // made only when there is no room: the fast path allocates nothing
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		if b.used+n <= b.capacity {
			b.used += n
			b.changed(n)
			b.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { b.release(n) }) }, nil
		}
		used, freed := b.used, b.freed
		b.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-freed:
		case <-stop:
			return nil, errStopped
		case <-timer.C:
			return nil, fmt.Errorf("%w: a %d-byte packet did not fit in %v (%d of receive_buffer_budget %d bytes held)",
				errReceiveBudget, n, wait, used, b.capacity)
		}
	}
}

func (b *recvBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.changed(-n)
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// inUse is the bytes held now.
func (b *recvBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
