package client

import (
	"context"
	"time"

	"smarth/internal/rpc/dfspb"
)

// leaseRenewer keeps this client's leases alive while any file is open
// for writing: one RenewLease every Config.LeaseRenewal (about half the
// namenode's soft limit), from one goroutine that runs only while needed
// (periodic: acquire per file opened, release per file closed, stop).
type leaseRenewer struct {
	f *FileSystem
	periodic
}

func newLeaseRenewer(f *FileSystem) *leaseRenewer {
	l := &leaseRenewer{f: f}
	l.periodic = periodic{period: func() time.Duration { return f.cfg.LeaseRenewal }, task: l.renew}
	return l
}

func (l *leaseRenewer) renew() {
	ctx, cancel := context.WithTimeout(context.Background(), l.f.cfg.RPCTimeout)
	_, err := l.f.nn.RenewLease(ctx, &dfspb.RenewLeaseRequest{ClientName: l.f.cfg.ClientName})
	cancel()
	if err != nil {
		l.f.log.Warn("lease renewal failed", "client", l.f.cfg.ClientName, "err", err)
	}
}
