package ipc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callCtx is a server call's context when the call has a deadline. The
// deadline is reported at once, but the timer that closes Done at the
// deadline (context.WithDeadline's) is made only when someone asks for
// Done: most namespace calls never do, and a timer per call was 6% of the
// namenode's CPU under `smarth bench nn`. Err reports an expired deadline
// whether or not Done was asked for.
type callCtx struct {
	context.Context // the connection's context with the call's metadata
	deadline        time.Time

	once   sync.Once
	armed  atomic.Pointer[context.Context] // the WithDeadline child, once made
	cancel context.CancelFunc
}

func newCallCtx(parent context.Context, timeout time.Duration) *callCtx {
	return &callCtx{Context: parent, deadline: time.Now().Add(timeout)}
}

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callCtx) Done() <-chan struct{} {
	c.once.Do(func() {
		d, cancel := context.WithDeadline(c.Context, c.deadline)
		c.cancel = cancel
		c.armed.Store(&d)
	})
	return (*c.armed.Load()).Done()
}

func (c *callCtx) Err() error {
	if d := c.armed.Load(); d != nil {
		return (*d).Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// release ends the call: the timer stops if one was made, else Done
// and Err from now on say Canceled (a goroutine the handler left behind
// may still ask).
func (c *callCtx) release() {
	c.once.Do(func() { c.armed.Store(&ended) })
	if c.cancel != nil {
		c.cancel()
	}
}

// ended is the context of a call that returned before anyone asked Done.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()
