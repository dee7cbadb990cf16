package namenode

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"smarth/internal/namenode/journal"
	"smarth/internal/rpc/dfspb"
)

// TestCrashKeepsAttributeOps: setTimes, setQuota and setXAttr are as
// crash-safe as creates: after a crash at a random point (with checkpoints
// during the run) everything acknowledged is there, and every quota's
// cached usage matches its subtree.
func TestCrashKeepsAttributeOps(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { crashAttrsOnce(t, seed) })
	}
}

func crashAttrsOnce(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	fs := journal.NewMemFS()
	cfg := testConfig(t)
	cfg.MetaDir = "/meta"
	cfg.CheckpointTxns = 40
	nn, err := newNameNode(cfg, testLogger(t), fs, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	timed := map[string]int64{} // acknowledged setTimes: path -> mtime
	tagged := map[string]string{}
	quotas := map[string]bool{}
	var ops atomic.Int64
	crashAt := int64(60 + rng.Intn(200))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := callCtx("hdfs")
			dir := fmt.Sprintf("/w%d", w)
			if err := nn.mkdirs(ctx, &dfspb.MkdirsRequest{Path: dir}); err != nil {
				return
			}
			if err := nn.setQuota(ctx, &dfspb.SetQuotaRequest{Path: dir, NsQuota: 1 << 20, DsQuota: 1 << 40}); err != nil {
				return
			}
			mu.Lock()
			quotas[dir] = true
			mu.Unlock()
			for i := 0; ; i++ {
				p := fmt.Sprintf("%s/f%d", dir, i)
				st, err := nn.create(ctx, &dfspb.CreateRequest{Path: p, ClientName: fmt.Sprint("c", w)})
				if err != nil {
					return
				}
				if ok, err := nn.complete(ctx, &dfspb.CompleteRequest{Path: p, ClientName: fmt.Sprint("c", w), FileId: st.GetFileId()}); err != nil || !ok {
					return
				}
				if err := nn.setTimes(ctx, &dfspb.SetTimesRequest{Path: p, MtimeMs: int64(i) * 1000, AtimeMs: -1}); err != nil {
					return
				}
				mu.Lock()
				timed[p] = int64(i) * 1000
				mu.Unlock()
				v := fmt.Sprint("v", i)
				if err := nn.setXAttr(ctx, &dfspb.SetXAttrRequest{Path: p, Xattr: &dfspb.XAttr{Name: "user.v", Value: []byte(v)}, Flags: 1}); err != nil {
					return
				}
				mu.Lock()
				tagged[p] = v
				mu.Unlock()
				ops.Add(1)
			}
		}()
	}
	go func() {
		for ops.Load() < crashAt {
			if nn.journal.LastTxID()-nn.ckptTx > cfg.CheckpointTxns {
				nn.checkpoint()
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
	defer nn2.Close()
	mu.Lock()
	defer mu.Unlock()
	ctx := callCtx("hdfs")
	for p, mtime := range timed {
		st, err := nn2.fileInfo(ctx, p)
		if err != nil || st.GetModificationTimeMs() != mtime {
			t.Errorf("%s: setTimes(%d) acknowledged; after the crash %v %v", p, mtime, st.GetModificationTimeMs(), err)
		}
	}
	for p, v := range tagged {
		r, err := nn2.getXAttrs(ctx, &dfspb.GetXAttrsRequest{Path: p, Names: []string{"user.v"}})
		if err != nil || len(r.GetXattrs()) != 1 || string(r.GetXattrs()[0].GetValue()) != v {
			t.Errorf("%s: xattr user.v=%s acknowledged; after the crash %v %v", p, v, r, err)
		}
	}
	nn2.mu.RLock()
	defer nn2.mu.RUnlock()
	for dir := range quotas {
		n, err := nn2.state.Tree().Lookup(dir)
		if err != nil || n.Quota() == nil || n.Quota().NS != 1<<20 {
			t.Fatalf("%s: quota acknowledged; after the crash %v %v", dir, n, err)
		}
		if want := int64(n.NumChildren()) + 1; n.Quota().UsedNS != want {
			t.Errorf("%s: quota caches %d names; the directory holds %d", dir, n.Quota().UsedNS, want)
		}
	}
	t.Logf("seed %d: crash after %d ops; %d setTimes, %d xattrs acknowledged", seed, crashAt, len(timed), len(tagged))
}
