package replog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"smarth/internal/testenv"
)

// The operator's calls (`smarth admin ha transfer-leader|add|remove`):
// leadership moves to the named node, which takes writes while the old
// leader refuses them naming it; a removed node leaves the
// configuration; a new node added as a voter catches up on everything.
func TestTransferRemoveAdd(t *testing.T) {
	dir := t.TempDir()
	nodes := group(t, dir, 3, nil)
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := write(ctx, ld.log, ld.fsm, fmt.Sprintf("a%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	to := another(nodes, ld)
	if err := ld.log.TransferLeadership(ctx, to.id); err != nil {
		t.Fatalf("transfer to %s: %v", to.id, err)
	}
	waitFor(t, 10*time.Second, to.id+" to be the ready leader", to.log.IsLeader)
	// The new leader is ready once a majority has its barrier, which may
	// be it and the third node: the old leader learns who leads from the
	// new leader's next heartbeat, and only then can its refusal name it.
	waitFor(t, 10*time.Second, ld.id+" to learn that "+to.id+" leads", func() bool {
		id, _ := ld.log.Leader()
		return id == to.id
	})
	var nl ErrNotLeader
	if err := write(ctx, ld.log, ld.fsm, "refused"); !errors.As(err, &nl) || nl.LeaderID != to.id {
		t.Fatalf("write on the old leader after the transfer: %v, want ErrNotLeader naming %s", err, to.id)
	}
	old := ld
	ld = to
	for i := 0; i < 10; i++ {
		if err := write(ctx, ld.log, ld.fsm, fmt.Sprintf("b%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	if err := ld.log.RemoveServer(ctx, old.id); err != nil {
		t.Fatalf("remove %s: %v", old.id, err)
	}
	if m := ld.log.Stats().Members; len(m) != 2 {
		t.Fatalf("members after removing %s: %+v", old.id, m)
	}
	old.close()

	// A fourth node, empty, joins as a voter.
	addr := testenv.RestartablePorts(t, 1)[0]
	// It names the group's members (as a namenode's ha_peers does): its
	// raft port takes only their certificates.
	peers := map[string]string{"nn9": addr}
	for _, n := range nodes {
		peers[n.id] = n.cfg.Bind
	}
	nn := &node{id: "nn9", cfg: testConfig(Config{ID: "nn9", Bind: addr, Peers: peers, Dir: filepath.Join(dir, "nn9"), TLS: certs(t, dir, "nn9")})}
	nn.start(t)
	t.Cleanup(nn.close)
	if err := ld.log.AddVoter(ctx, nn.id, addr); err != nil {
		t.Fatalf("add %s: %v", nn.id, err)
	}
	for i := 0; i < 10; i++ {
		if err := write(ctx, ld.log, ld.fsm, fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "nn9 to hold all 30 records", func() bool { return len(nn.fsm.list()) >= 30 })
	if err := equalLists(ld.fsm.list(), nn.fsm.list()); err != nil {
		t.Fatalf("nn9: %v", err)
	}
	voters := 0
	for _, m := range ld.log.Stats().Members {
		if m.Voter && m.ID != old.id {
			voters++
		}
	}
	if voters != 3 {
		t.Fatalf("voters after adding nn9: %+v", ld.log.Stats().Members)
	}
}

// VerifyLeader (before a linearizable read) passes on the leader while a
// majority follows it, is refused on a follower naming the leader, and
// fails on a leader whose followers are gone, even when asked at once.
func TestVerifyLeader(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, nil)
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ld.log.VerifyLeader(ctx); err != nil {
		t.Fatalf("VerifyLeader on the leader: %v", err)
	}
	for _, n := range nodes {
		if n == ld {
			continue
		}
		var nl ErrNotLeader
		if err := n.log.VerifyLeader(ctx); !errors.As(err, &nl) || nl.LeaderID != ld.id {
			t.Fatalf("VerifyLeader on follower %s: %v, want ErrNotLeader naming %s", n.id, err, ld.id)
		}
		n.close()
	}
	start := time.Now()
	if err := ld.log.VerifyLeader(ctx); err == nil {
		t.Fatalf("VerifyLeader passed on a leader whose followers are all down (after %v)", time.Since(start))
	}
}
