package namenode

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
)

// TestHALeaseEndsOnTransfer: a leadership transfer this member starts
// ends its read lease. raft's transfer makes the target a candidate whose
// vote requests the followers grant despite knowing a leader, so the
// target can lead at once, well inside a lease. Here the old active
// (lease mode, a lease stretched to 20 s so that only the transfer can
// end it in the test's time) serves reads under its lease, then starts a
// transfer to nn2 through replog (the path every transfer of this code
// takes: transfer-leader's too, which besides refuses reads while it runs)
// and goes deaf the moment its TimeoutNow is written: it never hears of
// nn2's election and still leads in its own eyes. nn2 acknowledges
// /after; a getFileInfo of /after on the old active must then not be
// answered from its lease (its stale "not found") but wait for a read
// index, refused as a standby once it hears again.
func TestHALeaseEndsOnTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("a group of three namenodes through a leadership transfer (about 15 s)")
	}
	const old, to = 1, 2
	deaf := &deafOnTimeoutNow{}
	g := startHAGroup(t, 3, func(c *Config) {
		c.HA.ReadConsistency = readsLease
		if c.HA.ID == fmt.Sprintf("nn%d", old) {
			// Long raft timers: deaf, it keeps leading for 30 s.
			c.HA.HeartbeatTimeout, c.HA.ElectionTimeout, c.HA.LeaderLeaseTimeout = 30*time.Second, 30*time.Second, 30*time.Second
			c.readLease = 20 * time.Second
			c.raftConn = deaf.wrap
			return
		}
		c.HA.HeartbeatTimeout, c.HA.ElectionTimeout, c.HA.LeaderLeaseTimeout = 2*time.Second, 2*time.Second, time.Second
	})
	t.Cleanup(deaf.heal)
	activeWithWriter(t, g, old)
	a, h := g.cli[old], g.nns[old].ha
	waitFor(t, "a read on the active served under its lease", func() bool {
		a.cp.GetFileInfo(a.ctx(), &dfspb.GetFileInfoRequest{Path: "/keep/0"})
		return h.leaseReads.Load() > 0
	})

	deaf.arm(g.cfgs[to].HA.Peers[fmt.Sprintf("nn%d", to)].Raft)
	transferred := make(chan error, 1)
	go func() { transferred <- h.log.TransferLeadership(context.Background(), fmt.Sprintf("nn%d", to)) }()
	waitFor(t, fmt.Sprintf("nn%d to lead and acknowledge mkdirs /after", to), func() bool {
		c := g.cli[to]
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/after"})
		return err == nil
	})
	if st := h.log.Stats(); st.Role != "Leader" || !h.active.Load() {
		t.Fatalf("the old active no longer believes it leads (%s, active %v): the read below would prove nothing", st.Role, h.active.Load())
	}
	p := pauseRead(t, h, func() error {
		_, err := a.cp.GetFileInfo(a.ctx(), &dfspb.GetFileInfoRequest{Path: "/after"})
		return err
	})
	p.resume(t, h) // at once: the hold only lets the test see the check
	deaf.heal()
	if err := <-p.done; !isStandby(err) {
		t.Fatalf("getFileInfo /after on the old active after its transfer to nn%d: %v; want a standby refusal, not an answer from its lease", to, err)
	}
	<-transferred // its outcome does not matter: the TimeoutNow went out
	waitFor(t, fmt.Sprintf("nn%d to be a standby with /after", old), func() bool {
		st, err := a.cp.GetHAStatus(a.ctx(), &dfspb.GetHAStatusRequest{})
		return err == nil && st.State == dfspb.HAState_STANDBY && g.has(old, "/after")
	})
}

// deafOnTimeoutNow wraps a member's raft connections: once armed, the
// first TimeoutNow it writes to target (raft's net_transport frames an
// RPC as its type byte, 3 for TimeoutNow, then msgpack, flushed in one
// write) cuts it (raftCut) for reading only: every read on every
// connection blocks until heal, so the member hears nothing more, while
// what it sends still goes out.
type deafOnTimeoutNow struct {
	raftCut
	armMu  sync.Mutex
	target string
	armed  bool
}

const rpcTimeoutNow = 3 // hashicorp/raft net_transport.go

func (d *deafOnTimeoutNow) arm(target string) {
	d.armMu.Lock()
	d.armed, d.target = true, target
	d.armMu.Unlock()
}

func (d *deafOnTimeoutNow) wrap(c net.Conn) net.Conn {
	return &deafConn{cutConn: d.raftCut.wrap(c).(*cutConn), d: d}
}

// deafConn reads as a cutConn (held while cut) and writes through.
type deafConn struct {
	*cutConn
	d *deafOnTimeoutNow
}

func (c *deafConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && len(p) > 0 && len(p) < 512 && p[0] == rpcTimeoutNow {
		c.d.armMu.Lock()
		if c.d.armed && c.RemoteAddr().String() == c.d.target {
			c.d.armed = false
			c.d.cut()
		}
		c.d.armMu.Unlock()
	}
	return n, err
}
