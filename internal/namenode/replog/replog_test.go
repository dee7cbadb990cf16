package replog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/syncbuf"

	"github.com/hashicorp/raft"
)

// Three nodes: records written on the leader are applied on all three in
// order (on the followers through FSM.Apply, on the leader by the caller
// itself, which Apply must then not repeat), and a follower refuses an
// append naming the leader.
func TestThreeNodesApplyInOrder(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, nil)
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var acked []string
	errc := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func(w int) {
			var err error
			for i := 0; i < 25 && err == nil; i++ {
				err = write(ctx, ld.log, ld.fsm, fmt.Sprintf("w%d-%d", w, i))
			}
			errc <- err
		}(w)
	}
	for w := 0; w < 8; w++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		r := fmt.Sprintf("seq-%d", i)
		if err := write(ctx, ld.log, ld.fsm, r); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, r)
	}
	want := ld.fsm.list()
	if len(want) != 250 {
		t.Fatalf("leader holds %d records, want 250", len(want))
	}
	for _, n := range nodes {
		waitFor(t, 10*time.Second, n.id+" to apply 250 records", func() bool { return len(n.fsm.list()) >= 250 })
		if err := equalLists(want, n.fsm.list()); err != nil {
			t.Fatalf("%s differs from the leader: %v", n.id, err)
		}
		if err := checkAcked(acked, n.fsm.list()); err != nil {
			t.Fatalf("%s: %v", n.id, err)
		}
		if st := n.log.Stats(); st.AppliedTxID != 250 {
			t.Fatalf("%s: applied txid %d, want 250", n.id, st.AppliedTxID)
		}
	}
	for _, n := range nodes {
		if n == ld {
			continue
		}
		_, err := n.log.Append([]byte("x"))
		var nl ErrNotLeader
		if !errors.As(err, &nl) || nl.LeaderID != ld.id || nl.LeaderAddr != ld.cfg.Bind {
			t.Fatalf("%s: Append on a follower: %v, want ErrNotLeader naming %s at %s", n.id, err, ld.id, ld.cfg.Bind)
		}
	}
}

// A follower whose whole data directory is deleted while it is down
// rejoins empty and catches up from the leader's snapshot and the log
// after it; nothing is lost and its files are private.
func TestFollowerLostDiskCatchesUp(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, func(i int, c *Config) {
		c.TrailingLogs = 5
		c.SegmentSize = 4096          // so the snapshot frees whole segments
		c.SnapshotThreshold = 1 << 30 // snapshots only when the test asks
	})
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var acked []string
	put := func(from, to int) {
		for i := from; i < to; i++ {
			r := fmt.Sprintf("r%d", i)
			if err := write(ctx, ld.log, ld.fsm, r); err != nil {
				t.Fatal(err)
			}
			acked = append(acked, r)
		}
	}
	put(0, 100)
	var lost *node
	for _, n := range nodes {
		if n != ld {
			lost = n
			break
		}
	}
	waitFor(t, 10*time.Second, lost.id+" to apply 100", func() bool { return len(lost.fsm.list()) == 100 })
	lost.close()
	if err := os.RemoveAll(lost.cfg.Dir); err != nil {
		t.Fatal(err)
	}
	put(100, 200)
	// The leader is idle between writes, so its state is at the applied
	// txid and the snapshot is taken; the log behind it (but 5) goes.
	if err := ld.log.Snapshot(ctx); err != nil {
		t.Fatalf("snapshot on the leader: %v", err)
	}
	put(200, 230)
	lost.start(t)
	waitFor(t, 20*time.Second, lost.id+" to catch up to 230 records", func() bool { return len(lost.fsm.list()) >= 230 })
	if err := equalLists(ld.fsm.list(), lost.fsm.list()); err != nil {
		t.Fatalf("%s after catch-up: %v", lost.id, err)
	}
	if err := checkAcked(acked, lost.fsm.list()); err != nil {
		t.Fatal(err)
	}
	if st := lost.log.Stats(); st.SnapshotLastIndex == 0 {
		t.Fatalf("%s caught up without a snapshot install (stats %+v): the test did not exercise it", lost.id, st)
	}
	checkPrivate(t, lost.cfg.Dir)
}

func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// Upgrade path: the first node starts the group from an existing
// namenode's state; the others receive it by snapshot install, and new
// records continue its txids.
func TestSeedFromExistingState(t *testing.T) {
	var old []string
	for i := 1; i <= 120; i++ {
		old = append(old, fmt.Sprintf("image-%d", i))
	}
	nodes := groupWith(t, t.TempDir(), 3, func(i int, c *Config) {
		c.SeedFromFSM = i == 0
	}, func(i int) []string {
		if i == 0 {
			return old
		}
		return nil
	})
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 30; i++ {
		if err := write(ctx, ld.log, ld.fsm, fmt.Sprintf("new-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	want := append(append([]string(nil), old...), make([]string, 0)...)
	for i := 0; i < 30; i++ {
		want = append(want, fmt.Sprintf("new-%d", i))
	}
	for _, n := range nodes {
		waitFor(t, 10*time.Second, n.id+" to hold the image and 30 new records", func() bool { return len(n.fsm.list()) >= 150 })
		if err := equalLists(want, n.fsm.list()); err != nil {
			t.Fatalf("%s: %v", n.id, err)
		}
	}
}

// A node reopened in the same process (the namenode's reload after a
// diverged leadership loss) rebuilds its state from its own log: the
// stores it closed are free to open again.
func TestReopenRebuildsState(t *testing.T) {
	nodes := group(t, t.TempDir(), 1, nil)
	n := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		if err := write(ctx, n.log, n.fsm, fmt.Sprintf("r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	want := n.fsm.list()
	n.close()
	done := make(chan struct{})
	go func() { n.start(t); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Open after Close in the same process did not return in 20 s (a store left locked?)")
	}
	waitFor(t, 10*time.Second, "the reopened node to replay 20 records", func() bool { return len(n.fsm.list()) >= 20 })
	if err := equalLists(want, n.fsm.list()); err != nil {
		t.Fatal(err)
	}
}

// A leader's state is ahead of the log while appended records wait for
// commit; a snapshot then would label uncommitted operations with a
// committed index, so it is refused until the records are committed.
func TestLeaderSnapshotRefusedWhileAhead(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, nil)
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := write(ctx, ld.log, ld.fsm, "committed"); err != nil {
		t.Fatal(err)
	}
	// Applied and appended, not yet synced: the batch is not proposed.
	ld.fsm.mu.Lock()
	ld.fsm.recs = append(ld.fsm.recs, "pending")
	h, err := ld.log.Append([]byte("pending"))
	ld.fsm.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	// raft flattens the FSM's error into its own message.
	if err := ld.log.Snapshot(ctx); err == nil || !strings.Contains(err.Error(), errSnapshotAhead.Error()) {
		t.Fatalf("snapshot with an uncommitted record in the state: %v, want errSnapshotAhead", err)
	}
	if err := ld.log.Sync(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := ld.log.Snapshot(ctx); err != nil {
		t.Fatalf("snapshot once committed: %v", err)
	}
}

// An entry raft took into its apply channel after it shut down is never
// answered (with BatchApplyCh the channel is buffered, and Apply may pick
// it over the shutdown). Close must not wait for it, and the Sync of its
// batch must fail (outcome unknown), not hang or succeed. A Close that
// waited left a node reloading after a lost leadership silent for good.
func TestCloseEndsAnEntryRaftNeverAnswers(t *testing.T) {
	nodes := group(t, t.TempDir(), 1, nil)
	n := leaderOf(t, nodes)
	l := n.log
	l.raft.Shutdown().Error()
	// The real fault: Apply after the shutdown, until one is taken into
	// the channel (an errorFuture is the refusal; each try is a coin
	// toss between the closed shutdown channel and the buffer's room).
	var orphan raft.ApplyFuture
	for i := 0; i < 1000 && orphan == nil; i++ {
		if f := l.raft.Apply([]byte("x"), 0); fmt.Sprintf("%T", f) != "raft.errorFuture" {
			orphan = f
		}
	}
	if orphan == nil {
		t.Fatal("raft refused 1000 applies after shutdown; none was left in its channel")
	}
	// Proposed as the flush loop proposes a batch.
	b := &pending{first: 1, recs: [][]byte{[]byte("x")}, sent: true, done: make(chan struct{})}
	l.mu.Lock()
	l.inflight[b] = struct{}{}
	l.mu.Unlock()
	l.slots <- struct{}{}
	go l.await(b, orphan)

	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	waitFor(t, 30*time.Second, "Close to return with an entry raft will never answer in flight", func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	})
	n.log = nil // closed
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Sync(ctx, Handle{b: b, txid: 1}); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sync of the never-answered entry after Close: %v; want a shutdown error", err)
	}
}

// TestSnapshotFilesPrivateWithoutWarnings: a snapshot's directory and
// files end private (raft makes them 0755 and 0644), and narrowing
// raft's own modes is not reported as a warning on every snapshot.
func TestSnapshotFilesPrivateWithoutWarnings(t *testing.T) {
	var warns syncbuf.Buffer
	nodes := group(t, t.TempDir(), 1, func(i int, c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&warns, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	ld := leaderOf(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 10 {
		if err := write(ctx, ld.log, ld.fsm, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ld.log.Snapshot(ctx); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	checkPrivate(t, ld.cfg.Dir)
	if w := warns.String(); strings.Contains(w, "permission") {
		t.Fatalf("the snapshot's own files were reported:\n%s", w)
	}

	// Control: a file someone else widened is still narrowed and warned
	// about at the next snapshot.
	segs, err := filepath.Glob(filepath.Join(ld.cfg.Dir, "wal", "*.wal"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no log segment to widen (%v)", err)
	}
	if err := os.Chmod(segs[0], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(ctx, ld.log, ld.fsm, "after"); err != nil {
		t.Fatal(err)
	}
	if err := ld.log.Snapshot(ctx); err != nil {
		t.Fatalf("second snapshot: %v", err)
	}
	checkPrivate(t, ld.cfg.Dir)
	if w := warns.String(); !strings.Contains(w, "permission wider than allowed") || !strings.Contains(w, filepath.Base(segs[0])) {
		t.Fatalf("a widened log segment %s was not reported at the next snapshot; logged:\n%s", segs[0], w)
	}
}

// A member that cannot apply an entry stops its log and says so
// (Failed, Err), so that its caller leaves the group rather than stay a
// voter that could win elections it can never serve. The leader, which
// applied the record itself, goes on; a member that can apply it does
// not fail.
func TestFailedWhenAnEntryCannotBeApplied(t *testing.T) {
	nodes := group(t, t.TempDir(), 3, nil)
	ld := leaderOf(t, nodes)
	var bad, good *node
	for _, n := range nodes {
		if n != ld {
			if bad == nil {
				bad = n
			} else {
				good = n
			}
		}
	}
	bad.fsm.mu.Lock()
	bad.fsm.refuse = "poison"
	bad.fsm.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, r := range []string{"a", "poison", "b"} {
		if err := write(ctx, ld.log, ld.fsm, r); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-bad.log.Failed():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s refused a record, and its log did not stop within 10 s", bad.id)
	}
	if err := bad.log.Err(); err == nil || !strings.Contains(err.Error(), `record "poison" at txid 2 refused`) {
		t.Fatalf("%s: Err() = %v; want the refusal", bad.id, err)
	}
	waitFor(t, 10*time.Second, good.id+" to apply 3 records", func() bool { return len(good.fsm.list()) == 3 })
	for _, n := range []*node{ld, good} {
		select {
		case <-n.log.Failed():
			t.Fatalf("%s's log stopped (%v); only %s refused a record", n.id, n.log.Err(), bad.id)
		default:
		}
	}
}

// Another leader's entry, applied while this node's stint still holds
// its token (raft's notice of the lost leadership not yet read), ends
// the stint there: with every record of the stint committed the new
// leader's records are applied; with records of the stint not seen
// committed (memory ahead of the log) they are not, and the Lost says
// Diverged. A chaos run's deposed active, resumed after SIGSTOP, applied
// the new leader's records to its diverged memory before the notice
// ("complete: ... is not open for writing").
func TestAnotherLeadersEntryEndsTheStint(t *testing.T) {
	for _, tc := range []struct {
		name     string
		appended uint64 // the stint's last appended txid; 8 were committed
		diverged bool
	}{
		{"every record of the stint committed", 8, false},
		{"records of the stint not seen committed", 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &memFSM{}
			for i := uint64(1); i <= tc.appended; i++ {
				m.recs = append(m.recs, fmt.Sprint(i)) // a leader applies before it appends
			}
			l := &Log{cfg: Config{FSM: m}, log: slog.New(slog.DiscardHandler), lost: make(chan Lost, 1), failed: make(chan struct{})}
			l.token, l.skipTok, l.applied, l.lastTxID = 7, 7, 8, tc.appended
			e := &raft.Log{Index: 100, Term: 5, Type: raft.LogCommand, Data: encodeBatch(9, 9, [][]byte{[]byte("new leader's")})}
			if res := (*fsm)(l).Apply(e); res != nil {
				t.Fatalf("Apply: %v", res)
			}
			select {
			case lost := <-l.lost:
				if lost.Diverged != tc.diverged || lost.Term != 5 || lost.AppliedTxID != 8 {
					t.Fatalf("Lost %+v; want term 5, applied 8, diverged %v", lost, tc.diverged)
				}
			default:
				t.Fatal("another leader's entry did not end the stint (no Lost)")
			}
			want := int(tc.appended)
			if !tc.diverged {
				want++ // the new leader's record, on state equal to the log's
			}
			if got := len(m.list()); got != want || l.token != 0 {
				t.Fatalf("the FSM holds %d records, token %x; want %d records and the stint's token gone", got, l.token, want)
			}
		})
	}
}
