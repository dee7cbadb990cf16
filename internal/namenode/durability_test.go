package namenode

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// dumpState renders the persistent state (tree, blocks, counters) as text
// so two namenodes can be compared.
func dumpState(nn *NameNode) string {
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	var lines []string
	nn.state.Tree().Walk(func(n *namespace.INode) bool {
		l := fmt.Sprintf("%s id=%d dir=%v mode=%o %s:%s mtime=%d", n.Path(), n.ID, n.IsDir(), n.Perm(), n.Owner(), n.Group(), n.MTime)
		if !n.IsDir() {
			l += fmt.Sprintf(" repl=%d bs=%d len=%d", n.Replication(), n.BlockSize(), n.Length())
			if n.Writer() != nil {
				l += " writer=" + n.Writer().Client
			}
			for _, b := range n.Blocks {
				l += fmt.Sprintf(" [%d gs=%d len=%d %v]", b.ID, b.GS, b.NumBytes, b.State)
			}
		}
		lines = append(lines, l)
		return true
	})
	sort.Strings(lines)
	lines = append(lines, fmt.Sprintf("lastInode=%d lastBlock=%d lastGS=%d", nn.state.Tree().LastID(), nn.state.Blocks().LastID(), nn.state.Blocks().LastGS()))
	return strings.Join(lines, "\n")
}

func TestRestartKeepsNamespace(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	writeFile(t, c, fc, "/data/a", 3, 1<<20, 500)
	writeFile(t, c, fc, "/data/b", 2, 10)
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/tmp/x/y", CreateParent: true, Permission: 0o1777})
	c.cp.Rename(c.ctx(), &dfspb.RenameRequest{Src: "/data/b", Dst: "/tmp/x"})
	c.cp.SetReplication(c.ctx(), &dfspb.SetReplicationRequest{Path: "/data/a", Replication: 2})
	// A checkpoint in the middle: later edits replay on top of the image.
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	c.cp.SetOwner(c.ctx(), &dfspb.SetOwnerRequest{Path: "/tmp/x/b", Owner: "alice", Group: "g"})
	c.cp.SetPermission(c.ctx(), &dfspb.SetPermissionRequest{Path: "/data", Permission: 0o700})
	// An open file with a block being written, and a pipeline update.
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/open", ClientName: "w"})
	ab, _ := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/open", ClientName: "w", FileId: cr.GetStatus().GetFileId()})
	up, _ := c.cp.UpdateBlockForPipeline(c.ctx(), &dfspb.UpdateBlockForPipelineRequest{Block: ab.Block.Block, ClientName: "w"})
	c.cp.UpdatePipeline(c.ctx(), &dfspb.UpdatePipelineRequest{ClientName: "w", OldBlock: ab.Block.Block,
		NewBlock: &dfspb.ExtendedBlock{BlockId: ab.Block.Block.BlockId, GenerationStamp: up.Block.Block.GenerationStamp, NumBytes: 77}, NewNodes: ids(ab.GetBlock())[:2]})
	c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/gone", ClientName: "w"})
	c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/gone"})
	before := dumpState(nn)
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, cfg)
	if after := dumpState(nn2); after != before {
		t.Fatalf("namespace changed across a restart\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Blocks exist, so it waits in safe mode for block reports.
	c2 := dial(t, nn2.Addr(), "hdfs")
	_, err := c2.cp.Mkdirs(c2.ctx(), &dfspb.MkdirsRequest{Path: "/new"})
	wantErr(t, err, codes.Unavailable, "mkdir /new: namenode is in safe mode: 0 of 3 blocks reported (need 3")
	// The open file kept its writer and lease.
	if _, err := c2.cp.RenewLease(c2.ctx(), &dfspb.RenewLeaseRequest{ClientName: "w"}); err != nil {
		t.Fatal(err)
	}
	// The datanodes come back with their replicas: safe mode ends.
	fc2 := newFakeCluster(t, nn2)
	for i := 1; i <= 3; i++ {
		old := fc.node(fmt.Sprintf("id-dn%d", i))
		d := fc2.addWith(old.info.Hostname, "/r", old.snapshot())
		_ = d
	}
	waitFor(t, "safe mode off after block reports", func() bool {
		r, err := c2.cp.SetSafeMode(c2.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
		return err == nil && !r.GetOn()
	})
	if _, err := c2.cp.Mkdirs(c2.ctx(), &dfspb.MkdirsRequest{Path: "/new"}); err != nil {
		t.Fatal(err)
	}
}

func TestSafeModeManualAndEmpty(t *testing.T) {
	nn := startNN(t, testConfig(t))
	c := dial(t, nn.Addr(), "hdfs")
	r, err := c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
	if err != nil || r.GetOn() {
		t.Fatalf("an empty namespace starts out of safe mode: %v %v", r, err)
	}
	c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER})
	_, err = c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c"})
	wantErr(t, err, codes.Unavailable, "create /f: namenode is in safe mode: entered manually")
	// Reads still work.
	if _, err := c.cp.GetListing(c.ctx(), &dfspb.GetListingRequest{Path: "/"}); err != nil {
		t.Fatal(err)
	}
	c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_LEAVE})
	if _, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c"}); err != nil {
		t.Fatal(err)
	}
}

// callCtx is a context for calling handlers directly, carrying user as
// the caller the interceptor would have established.
func callCtx(user string) context.Context {
	return context.WithValue(context.Background(), callerKey{}, namespace.Caller{User: user, Groups: []string{user}})
}

// TestCrashLosesNothingAcknowledged runs concurrent creates, completes,
// mkdirs and deletes (and checkpoints) against a namenode on a
// crash-simulating file system, crashes it at a random moment, and
// demands that everything acknowledged before the crash is there after
// recovery, and that a second recovery gives the same state.
func TestCrashLosesNothingAcknowledged(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { crashOnce(t, seed) })
	}
}

func crashOnce(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	fs := journal.NewMemFS()
	cfg := testConfig(t)
	cfg.MetaDir = "/meta"
	cfg.CheckpointTxns = 50 // checkpoints happen during the run too
	nn, err := newNameNode(cfg, testLogger(t), fs, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	created := map[string]bool{}   // acknowledged creates
	completed := map[string]bool{} // acknowledged completes
	deleted := map[string]bool{}   // acknowledged deletes
	// deletes sent: one in flight at the crash may be durable without
	// its acknowledgement (its record synced with another writer's, its
	// own wait then failing on the crashed journal), so its file may
	// be gone
	deleting := map[string]bool{}
	dirs := map[string]bool{}
	var ops atomic.Int64
	crashAt := int64(100 + rng.Intn(400))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := callCtx("hdfs")
			for i := 0; ; i++ {
				dir := fmt.Sprintf("/w%d/d%d", w, i/10)
				p := fmt.Sprintf("%s/f%d", dir, i)
				st, err := nn.create(ctx, &dfspb.CreateRequest{Path: p, ClientName: fmt.Sprint("c", w), CreateParent: true})
				if err != nil {
					return // crashed
				}
				mu.Lock()
				created[p], dirs[dir] = true, true
				mu.Unlock()
				if ok, err := nn.complete(ctx, &dfspb.CompleteRequest{Path: p, ClientName: fmt.Sprint("c", w), FileId: st.GetFileId()}); err != nil || !ok {
					return
				}
				mu.Lock()
				completed[p] = true
				mu.Unlock()
				if i%7 == 3 {
					mu.Lock()
					deleting[p] = true
					mu.Unlock()
					if err := nn.delete(ctx, &dfspb.DeleteRequest{Path: p}); err != nil {
						return
					}
					mu.Lock()
					deleted[p] = true
					mu.Unlock()
				}
				ops.Add(1)
			}
		}()
	}
	go func() {
		for ops.Load() < crashAt {
			if nn.journal.LastTxID()-nn.ckptTx > cfg.CheckpointTxns {
				nn.checkpoint() // fails once crashed; that is fine
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for ops.Load() < crashAt {
		time.Sleep(time.Millisecond)
	}
	after := fs.Crash(rng)
	wg.Wait()
	nn.Close()

	nn2, err := newNameNode(cfg, testLogger(t), after, time.Now)
	if err != nil {
		t.Fatalf("recovery after crash: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	ctx := callCtx("hdfs")
	for p := range created {
		st, err := nn2.fileInfo(ctx, p)
		switch {
		case deleted[p]:
			if err == nil {
				t.Errorf("%s: deletion acknowledged, but the file is back", p)
			}
		case err != nil && !deleting[p]:
			t.Errorf("%s: create acknowledged, lost after the crash: %v", p, err)
		case err != nil: // its delete was in flight at the crash
		case completed[p] && st.GetUnderConstruction():
			t.Errorf("%s: complete acknowledged, but open after the crash", p)
		}
	}
	// Recovery is repeatable and the namenode keeps working.
	state := dumpState(nn2)
	nn2.Close()
	nn3, err := newNameNode(cfg, testLogger(t), after, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if got := dumpState(nn3); got != state {
		t.Errorf("a second recovery gives a different state\nfirst:\n%s\nsecond:\n%s", state, got)
	}
	if _, err := nn3.create(ctx, &dfspb.CreateRequest{Path: "/after", ClientName: "x"}); err != nil {
		t.Fatal(err)
	}
	nn3.Close()
	nn4, err := newNameNode(cfg, testLogger(t), after, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer nn4.Close()
	if _, err := nn4.fileInfo(ctx, "/after"); err != nil {
		t.Errorf("file created after recovery lost: %v", err)
	}
	t.Logf("seed %d: crash after %d ops; %d creates acknowledged", seed, crashAt, len(created))
}

func TestEditLogFailureStopsAcknowledging(t *testing.T) {
	fs := journal.NewMemFS()
	cfg := testConfig(t)
	cfg.MetaDir = "/meta"
	nn, err := newNameNode(cfg, testLogger(t), fs, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	ctx := callCtx("hdfs")
	fs.FailSync = fmt.Errorf("EIO")
	err = nn.mkdirs(ctx, &dfspb.MkdirsRequest{Path: "/a"})
	wantErr(t, err, codes.Unavailable, "cannot write its edit log")
	err = nn.mkdirs(ctx, &dfspb.MkdirsRequest{Path: "/b"})
	wantErr(t, err, codes.Unavailable, "mkdir /b: the namenode cannot write its edit log")
}

func TestMetaDirIsLocked(t *testing.T) {
	cfg := testConfig(t)
	nn, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "in use by another namenode") {
		t.Fatalf("second namenode on the same meta_dir: %v", err)
	}
	nn.Close()
	nn2, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	nn2.Close()
}

// TestRecoveryStampDurableBeforeHeartbeat: a lease recovery's new stamp is
// only appended when the command is queued; the heartbeat that carries the
// command must make it durable, or a crash right after would let the
// restarted namenode hand the same stamp out again while a datanode already
// stamped its replica with it.
func TestRecoveryStampDurableBeforeHeartbeat(t *testing.T) {
	fs := journal.NewMemFS()
	cfg := testConfig(t)
	cfg.MetaDir = "/meta"
	nn, err := newNameNode(cfg, testLogger(t), fs, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	if _, err := nn.registerDatanode(&dfspb.RegisterDatanodeRequest{Datanode: &dfspb.DatanodeInfo{Id: "dn1", IpAddr: "127.0.0.1", DataPort: 1}}, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// As sendRecoveryLocked does: log the stamp, queue the command, no sync.
	nn.mu.Lock()
	o := &fsstate.AllocGS{GS: nn.state.Blocks().NextGS()}
	nn.logOp(o)
	nn.nodes["dn1"].recoveries = append(nn.nodes["dn1"].recoveries, &dfspb.RecoverBlockCommand{NewGs: o.GS})
	nn.mu.Unlock()

	resp := nn.heartbeat(&dfspb.HeartbeatRequest{DatanodeId: "dn1"})
	var sent uint64
	for _, c := range resp.GetCommands() {
		if r := c.GetRecover(); r != nil {
			sent = r.GetNewGs()
		}
	}
	if sent != o.GS {
		t.Fatalf("heartbeat did not carry the recovery with stamp %d: %v", o.GS, resp.GetCommands())
	}
	nn2, err := newNameNode(cfg, testLogger(t), fs.Crash(nil), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer nn2.Close()
	nn2.mu.Lock()
	next := nn2.state.Blocks().NextGS()
	nn2.mu.Unlock()
	if next <= sent {
		t.Fatalf("after a crash the next stamp is %d, but %d was already sent to a datanode", next, sent)
	}
}
