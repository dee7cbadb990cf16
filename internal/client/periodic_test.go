package client

import (
	"sync/atomic"
	"testing"
	"time"
)

// running reports whether p's goroutine is meant to run (it has a quit
// channel to be stopped by).
func (p *periodic) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.quit != nil
}

// TestPeriodicRunsWhileHeld: the task ticks only between the first acquire
// and the last release, release says when it was the last, and after stop
// an acquire starts nothing.
func TestPeriodicRunsWhileHeld(t *testing.T) {
	var ticks atomic.Int64
	p := &periodic{period: func() time.Duration { return time.Millisecond }, task: func() { ticks.Add(1) }}
	if p.running() {
		t.Fatal("running before any acquire")
	}
	p.acquire()
	p.acquire()
	waitFor(t, "the task to tick while held", func() bool { return ticks.Load() > 0 })
	if p.release() {
		t.Error("release of one of two holders reported the last")
	}
	if !p.running() {
		t.Error("stopped with a holder left")
	}
	if !p.release() {
		t.Error("release of the last holder did not say so")
	}
	if p.running() {
		t.Error("still running after the last release")
	}
	p.acquire()
	if !p.running() {
		t.Error("a new holder did not restart it")
	}
	p.stop()
	if p.running() {
		t.Error("running after stop")
	}
	p.release()
	p.acquire()
	if p.running() {
		t.Error("an acquire after stop restarted it")
	}
}
