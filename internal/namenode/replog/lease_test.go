package replog

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestReadLease: a successful VerifyLeader grants a lease of ReadLease
// from its start, which expires on the clock with nothing renewing it;
// TransferLeadership ends it and no later VerifyLeader of the same term
// grants another (a failed transfer's TimeoutNow may still reach its
// target), while the read index itself keeps working.
func TestReadLease(t *testing.T) {
	const lease = 500 * time.Millisecond
	nodes := group(t, t.TempDir(), 1, func(_ int, c *Config) { c.ReadLease = lease })
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, ok := ld.log.Lease(); ok {
		t.Fatal("a lease before any VerifyLeader")
	}
	if err := ld.log.VerifyLeader(ctx); err != nil {
		t.Fatalf("VerifyLeader: %v", err)
	}
	if left, ok := ld.log.Lease(); !ok || left > lease {
		t.Fatalf("after VerifyLeader: lease %v, %v; want at most %v left", left, ok, lease)
	}
	// Expiry: polled, since the machine may be slow; it must come.
	waitFor(t, 20*time.Second, "the lease to expire with nothing renewing it", func() bool {
		_, ok := ld.log.Lease()
		return !ok
	})
	if err := ld.log.VerifyLeader(ctx); err != nil {
		t.Fatalf("VerifyLeader: %v", err)
	}
	if _, ok := ld.log.Lease(); !ok {
		t.Fatal("no lease after a second VerifyLeader")
	}

	// A single-member group has no one to transfer to: raft refuses, and
	// the lease must be gone all the same, for the term.
	if err := ld.log.TransferLeadership(ctx, ""); err == nil {
		t.Fatal("a transfer in a group of one succeeded")
	}
	if _, ok := ld.log.Lease(); ok {
		t.Fatal("a lease after TransferLeadership began")
	}
	if err := ld.log.Settle(ctx); err != nil {
		t.Fatalf("settle after the failed transfer: %v", err)
	}
	if err := ld.log.VerifyLeader(ctx); err != nil {
		t.Fatalf("VerifyLeader after the failed transfer (the read index must keep working): %v", err)
	}
	if left, ok := ld.log.Lease(); ok {
		t.Fatalf("a lease (%v left) granted in the term of a transfer this node started", left)
	}
}

// TestReadLeaseEndsWithLeadership: a leader that stepped down (its
// followers gone, check quorum) holds no lease, even one whose time has
// not run out (stretched here to 30 s so that only the step-down can end
// it): after a step-down it may vote for another at once.
func TestReadLeaseEndsWithLeadership(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, func(_ int, c *Config) { c.ReadLease = 30 * time.Second })
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ld.log.VerifyLeader(ctx); err != nil {
		t.Fatalf("VerifyLeader: %v", err)
	}
	if _, ok := ld.log.Lease(); !ok {
		t.Fatal("no lease after VerifyLeader")
	}
	for _, n := range nodes {
		if n != ld {
			n.close()
		}
	}
	waitFor(t, 20*time.Second, "the leader without followers to step down", func() bool {
		return ld.log.Stats().Role != "Leader"
	})
	if left, ok := ld.log.Lease(); ok {
		t.Fatalf("a lease (%v left) on a node that is no longer the leader", left)
	}
}

// TestRestartHoldsVotes: with read leases, a member that starts keeps
// its raft port closed for a heartbeat timeout, so a lease it helped
// grant before it died (and, wiped, forgot) has ended before it can vote
// for anyone (holdVotes).
func TestRestartHoldsVotes(t *testing.T) {
	const hb = 1500 * time.Millisecond
	nodes := group(t, t.TempDir(), 1, func(_ int, c *Config) { c.ReadLease = 200 * time.Millisecond })
	nd := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := write(ctx, nd.log, nd.fsm, "a"); err != nil {
		t.Fatal(err)
	}
	nd.close()
	nd.cfg.HeartbeatTimeout, nd.cfg.ElectionTimeout = hb, hb
	nd.cfg.ReadLease = time.Duration(float64(hb) * (1 - LeaseDriftMargin))
	listening := make(chan struct{})
	go func() { // the port must stay closed while Open waits
		defer close(listening)
		for {
			c, err := net.DialTimeout("tcp", nd.cfg.Bind, time.Second)
			if err == nil {
				c.Close()
				return
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	start := time.Now()
	nd.start(t)
	<-listening
	if took := time.Since(start); took < hb {
		t.Fatalf("the restarted member listened %v after it started; want a heartbeat timeout (%v) first", took, hb)
	}
	waitFor(t, 20*time.Second, "the restarted member to apply its log", func() bool { return len(nd.fsm.list()) == 1 })
}
