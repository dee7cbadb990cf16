package replog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"smarth/internal/testenv"
)

// TestFollowers: the leader's record of each follower, taken from the
// replies its transport sees (raft keeps match indexes private): every
// follower at lag 0 once the writes are committed; a closed follower's
// lag grows by at least the writes made without it, and its last
// contact ages, while the other's returns to 0; removed, it is no longer
// listed; an empty node added in its place is listed and catches up to
// lag 0. A follower has no record (only a leader replicates).
func TestFollowers(t *testing.T) {
	dir := t.TempDir()
	nodes := group(t, dir, 3, nil)
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	writeN := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if err := write(ctx, ld.log, ld.fsm, fmt.Sprintf("%s%d", prefix, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	follower := func(id string) (Follower, bool) {
		for _, f := range ld.log.Followers() {
			if f.ID == id {
				return f, true
			}
		}
		return Follower{}, false
	}
	atZero := func(id string) func() bool {
		return func() bool {
			f, ok := follower(id)
			return ok && f.Contacted && f.Lag == 0 && f.Match == ld.log.raft.LastIndex()
		}
	}
	writeN("a", 5)
	var others []*node
	for _, n := range nodes {
		if n != ld {
			others = append(others, n)
			if fs := n.log.Followers(); fs != nil {
				t.Fatalf("follower %s reports followers: %+v", n.id, fs)
			}
		}
	}
	for _, n := range others {
		waitFor(t, 10*time.Second, n.id+" at lag 0 on the leader", atZero(n.id))
	}
	up, down := others[0], others[1]
	down.close()
	writeN("b", 5)
	waitFor(t, 10*time.Second, up.id+" back at lag 0 with "+down.id+" closed", atZero(up.id))
	if f, _ := follower(down.id); f.Lag < 5 {
		t.Fatalf("%s, closed during 5 writes: %+v; want a lag of at least 5", down.id, f)
	}
	waitFor(t, 10*time.Second, down.id+"'s last contact to age past a second", func() bool {
		f, _ := follower(down.id)
		return f.LastContact > time.Second
	})
	if err := ld.log.RemoveServer(ctx, down.id); err != nil {
		t.Fatal(err)
	}
	if _, ok := follower(down.id); ok {
		t.Fatalf("%s still listed after its removal: %+v", down.id, ld.log.Followers())
	}
	addr := testenv.RestartablePorts(t, 1)[0]
	peers := map[string]string{"nn9": addr, ld.id: ld.cfg.Bind, up.id: up.cfg.Bind} // the group it joins
	nn := &node{id: "nn9", cfg: testConfig(Config{ID: "nn9", Bind: addr, Peers: peers, Dir: dir + "/nn9", TLS: certs(t, dir, "nn9")})}
	nn.start(t)
	t.Cleanup(nn.close)
	if err := ld.log.AddVoter(ctx, nn.id, addr); err != nil {
		t.Fatal(err)
	}
	if _, ok := follower(nn.id); !ok {
		t.Fatalf("nn9 not listed after it was added: %+v", ld.log.Followers())
	}
	writeN("c", 3)
	waitFor(t, 10*time.Second, "the added nn9 at lag 0", atZero(nn.id))
}
