package client

import (
	"context"
	"sync"
	"time"

	"smarth/internal/rpc/dfspb"
)

// leaseRenewer keeps this client's leases alive while any file is open
// for writing: one RenewLease every Config.LeaseRenewal (about half the
// namenode's soft limit), from one goroutine that runs only while needed.
type leaseRenewer struct {
	f *FileSystem

	mu      sync.Mutex
	open    int           // guarded by mu: files open for writing
	stopped bool          // guarded by mu
	quit    chan struct{} // guarded by mu: closes the running goroutine, nil if none
}

func newLeaseRenewer(f *FileSystem) *leaseRenewer { return &leaseRenewer{f: f} }

// acquire notes one more open file, starting the renewals if needed.
func (l *leaseRenewer) acquire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open++
	if l.quit == nil && !l.stopped {
		l.quit = make(chan struct{})
		go l.run(l.quit)
	}
}

// release notes one file closed; the renewals stop with the last.
func (l *leaseRenewer) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.open <= 0 && l.quit != nil {
		close(l.quit)
		l.quit = nil
	}
}

func (l *leaseRenewer) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.quit != nil {
		close(l.quit)
		l.quit = nil
	}
}

func (l *leaseRenewer) run(quit chan struct{}) {
	t := time.NewTicker(l.f.cfg.LeaseRenewal)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), l.f.cfg.RPCTimeout)
			_, err := l.f.nn.RenewLease(ctx, &dfspb.RenewLeaseRequest{ClientName: l.f.cfg.ClientName})
			cancel()
			if err != nil {
				l.f.log.Warn("lease renewal failed", "client", l.f.cfg.ClientName, "err", err)
			}
		}
	}
}
