package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/syncbuf"
	"smarth/internal/testcluster"
)

// pipelineLog collects the writer's "pipeline open" records: the block and
// its datanodes in pipeline order, as the client connected them.
type pipelineLog struct{ buf syncbuf.Buffer }

var dnName = regexp.MustCompile(`\bdn[0-9]+\b`)

// last returns the most recently opened pipeline: its block id and hosts
// in order (first is the one the client streams to).
func (l *pipelineLog) last() (uint64, []string) {
	var id uint64
	var hosts []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Block uint64 `json:"block"`
			Nodes string `json:"nodes"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "pipeline open" {
			id, hosts = rec.Block, dnName.FindAllString(rec.Nodes, -1)
		}
	}
	return id, hosts
}

// rbwSize is the size of datanode i's replica-being-written file of block
// id, -1 if it has none.
func rbwSize(c *testcluster.Procs, i int, id uint64) int64 {
	var size int64 = -1
	_ = filepath.WalkDir(c.DataDir(i), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == fmt.Sprintf("blk_%d", id) && strings.Contains(p, string(filepath.Separator)+"rbw"+string(filepath.Separator)) {
			if fi, err := d.Info(); err == nil {
				size = fi.Size()
			}
		}
		return nil
	})
	return size
}

// TestProcsDatanodeKilledInPipeline: a cluster of datanode processes, a
// file written through a pipeline, and the datanode at one position of the
// pipeline of the block being written SIGKILLed in the middle of that
// block. The victim is verified three ways before the kill: the client's
// own record of the pipeline it opened (order included), the namenode's
// locations of the under-construction block (same nodes), and the victim's
// replica-being-written file of that block on disk. Afterwards the write
// and close must succeed through pipeline recovery (with recovery
// disabled, every subtest fails here), the file reads back whole, the
// namenode must come to list three live replicas of every block, and each
// replica is read from its own datanode and compared; again after the
// victim returns with its stale replica. The control flips a byte in one
// listed replica on disk and the same per-replica check must catch it.
func TestProcsDatanodeKilledInPipeline(t *testing.T) {
	for _, mode := range []string{"classic", "multipipeline", "multipipeline-concurrent"} {
		for pos, name := range []string{"first", "middle", "last"} {
			t.Run(mode+"/"+name, func(t *testing.T) {
				killInPipeline(t, mode, pos)
			})
		}
	}
}

func killInPipeline(t *testing.T, mode string, pos int) {
	// Multi-pipeline mode keeps two pipelines open only with live >= 2 x
	// replication datanodes; with fewer it writes like classic.
	n := map[string]int{"classic": 4, "multipipeline": 6, "multipipeline-concurrent": 6}[mode]
	c := testcluster.StartProcs(t, testcluster.Options{DataNodes: n, BlockSize: 1 << 20,
		LeaseSoftLimit: time.Second, LeaseHardLimit: 2 * time.Second})
	var plog pipelineLog
	f := c.Client(t, testcluster.WithWriteMode(mode), testcluster.WithConfig(func(cfg *client.Config) {
		cfg.Logger = slog.New(slog.NewJSONHandler(&plog.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	ctx := context.Background()
	want := data(3<<20+777, uint64(10+pos))
	w, err := f.Create(ctx, "/f", client.CreateOptions{Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	// One whole block and half of the second: the second is the block
	// being written when the victim dies.
	half := 1<<20 + 1<<19
	if _, err := w.Write(want[:half]); err != nil {
		t.Fatal(err)
	}
	var (
		block  uint64
		pipe   []string
		victim string
	)
	c.WaitFor(t, "the second block's pipeline open, listed by the namenode and its victim receiving it", func() bool {
		block, pipe = plog.last()
		if len(pipe) != 3 {
			return false
		}
		locs, err := f.BlockLocations(ctx, "/f", 0, 1<<40)
		if err != nil || len(locs) != 2 || locs[1].BlockID != block {
			return false
		}
		if !sameSet(locs[1].Hosts, pipe) {
			t.Fatalf("the namenode lists %v for block %d, the client opened its pipeline to %v", locs[1].Hosts, block, pipe)
		}
		victim = pipe[pos]
		return rbwSize(c, hostIndex(t, victim), block) > 0
	})
	t.Logf("%s pipeline of block %d: %v; SIGKILL %s (pid %d) with %d bytes of the block on its disk",
		mode, block, pipe, victim, c.DataNodePID(hostIndex(t, victim)), rbwSize(c, hostIndex(t, victim), block))
	c.KillDataNode(hostIndex(t, victim))

	// Pipeline recovery must carry the write through: the namenode still
	// has live datanodes for a replacement, and unmodified code completes
	// every one of these writes. A failure here is the defect under test.
	if _, err := w.Write(want[half:]); err != nil {
		t.Fatalf("write after SIGKILL of %s (%s of the pipeline): %v", victim, []string{"first", "middle", "last"}[pos], err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after SIGKILL of %s: %v", victim, err)
	}
	if st, err := f.Stat(ctx, "/f"); err != nil || st.UnderConstruction || st.Size != int64(len(want)) {
		t.Fatalf("/f after the write: %+v %v; want closed at %d bytes", st, err, len(want))
	}
	if got := mustRead(t, f, "/f"); !bytes.Equal(got, want) {
		t.Fatalf("/f reads %d bytes, not the %d written", len(got), len(want))
	}
	// Full replication without the victim: once the namenode has declared
	// it dead (until then it still lists the victim's replicas of earlier
	// blocks), every block has its three replicas on live datanodes, and
	// each serves the right bytes.
	c.WaitLive(t, n-1)
	c.WaitReplication(t, "/f", 3)
	if err := eachReplica(ctx, t, c, "/f", want); err != nil {
		t.Fatal(err)
	}
	// The killed datanode comes back with its stale replica of the block
	// (older stamp, shorter): it must never be listed or served.
	c.RestartDataNode(hostIndex(t, victim))
	c.WaitLive(t, n)
	c.WaitReplication(t, "/f", 3)
	if err := eachReplica(ctx, t, c, "/f", want); err != nil {
		t.Fatal(err)
	}
	// Control: a replica the namenode lists, damaged on disk, fails the
	// same check.
	locs, err := f.BlockLocations(ctx, "/f", 0, 1<<40)
	if err != nil || len(locs) == 0 {
		t.Fatalf("locations: %v %v", locs, err)
	}
	bad := locs[0].Hosts[0]
	if !corruptFinalized(t, c, hostIndex(t, bad), locs[0].BlockID) {
		t.Fatalf("control: no finalized replica of block %d on %s to damage", locs[0].BlockID, bad)
	}
	if err := eachReplica(ctx, t, c, "/f", want); err == nil {
		t.Fatalf("control: a damaged replica on %s passed the per-replica check", bad)
	} else {
		t.Logf("control caught it: %v", err)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// eachReplica reads every replica of every block of p that the namenode
// lists, each from its own datanode: a client placed on that host is
// given the local replica first, and the reader must say that datanode
// served the block (a replica failing its checksums would make the reader
// move to another and show up here) and the bytes must be want's.
func eachReplica(ctx context.Context, t *testing.T, c *testcluster.Procs, p string, want []byte) error {
	t.Helper()
	admin := c.Client(t)
	ids := map[string]string{}
	dns, err := admin.Datanodes(ctx, 0)
	if err != nil {
		return err
	}
	for _, d := range dns {
		ids[d.GetHostname()] = d.GetId()
	}
	locs, err := admin.BlockLocations(ctx, p, 0, 1<<40)
	if err != nil {
		return err
	}
	replicas := 0
	for _, l := range locs {
		if len(l.Hosts) == 0 {
			return fmt.Errorf("block %d at offset %d has no replica listed", l.BlockID, l.Offset)
		}
		for _, h := range l.Hosts {
			fc := c.Client(t, testcluster.WithClientHost(h))
			r, err := fc.Open(ctx, p)
			if err != nil {
				return err
			}
			buf := make([]byte, l.Length)
			_, err = r.ReadAt(buf, l.Offset)
			served := r.ServedBy(l.BlockID)
			r.Close()
			fc.Close()
			if err != nil && err != io.EOF {
				return fmt.Errorf("block %d from %s: %v", l.BlockID, h, err)
			}
			if served != ids[h] {
				return fmt.Errorf("block %d: asked %s (id %s), served by %q: the replica on %s was not usable", l.BlockID, h, ids[h], served, h)
			}
			if !bytes.Equal(buf, want[l.Offset:l.Offset+l.Length]) {
				return fmt.Errorf("block %d: the replica on %s serves wrong bytes", l.BlockID, h)
			}
			replicas++
		}
	}
	t.Logf("read %d replicas of %d blocks of %s directly, each from its datanode", replicas, len(locs), p)
	return nil
}

// corruptFinalized flips a byte in the middle of datanode i's finalized
// replica of block id.
func corruptFinalized(t *testing.T, c *testcluster.Procs, i int, id uint64) bool {
	t.Helper()
	done := false
	_ = filepath.WalkDir(c.DataDir(i), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != fmt.Sprintf("blk_%d", id) || !strings.Contains(p, "finalized") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return err
		}
		b[len(b)/2] ^= 0x5a
		done = true
		return os.WriteFile(p, b, 0o644)
	})
	return done
}

// TestProcsPutKilledMidWrite: `smarth fs put` runs as its own process
// and is SIGKILLed once the namenode shows bytes of the file written
// (more than zero: a block completed). The put wrote to DST._COPYING_, so
// DST never appears, neither during the put nor after; lease recovery
// closes DST._COPYING_ at a prefix of the input at least as long as what
// the namenode showed before the kill. The control is the same put left
// to finish: DST then appears whole and the temporary name is gone, so the
// "DST never appears" check is one that can fail.
func TestProcsPutKilledMidWrite(t *testing.T) {
	c := testcluster.StartProcs(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20,
		LeaseSoftLimit: time.Second, LeaseHardLimit: 2 * time.Second})
	bin := testcluster.Binary(t)
	f := c.Client(t)
	ctx := context.Background()
	if err := f.Mkdir(ctx, "/up", 0o777, true); err != nil {
		t.Fatal(err)
	}
	want := data(5<<20+333, 77)
	// The put process proves the test's user as any client of the
	// cluster does: a token file when the cluster is secure.
	env := append(os.Environ(), "HOME="+t.TempDir(), "SMARTH_TOKEN_FILE=")
	if u, err := user.Current(); err != nil {
		t.Fatal(err)
	} else if cred := c.Credential(u.Username); cred != "" {
		tok := filepath.Join(t.TempDir(), "token")
		if err := auth.WriteTokenFile(tok, cred); err != nil {
			t.Fatal(err)
		}
		env[len(env)-1] = "SMARTH_TOKEN_FILE=" + tok
	}

	// put starts `smarth fs put - dst` fed from a pipe and returns the
	// command and the pipe's writing end.
	put := func(dst string) (*exec.Cmd, io.WriteCloser, *bytes.Buffer) {
		cmd := exec.Command(bin, "fs", "--namenode", c.NameNodeAddr(), "--progress", "never", "put", "-", dst)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, in, &out
	}
	finalAbsent := func(dst string) error {
		if _, err := f.Stat(ctx, dst); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s exists (stat err %v) while its put has not completed", dst, err)
		}
		return nil
	}

	cmd, in, out := put("/up/dst")
	// Feed all but the last 1 MiB: the put cannot finish, and writes on.
	feedErr := make(chan error, 1)
	go func() { _, err := in.Write(want[:4<<20]); feedErr <- err }()
	var seen int64
	c.WaitFor(t, "the namenode to show bytes of /up/dst._COPYING_ written", func() bool {
		if err := finalAbsent("/up/dst"); err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat(ctx, "/up/dst._COPYING_")
		seen = st.Size
		return err == nil && st.Size > 0
	})
	if seen <= 0 {
		t.Fatalf("killing at %d bytes written proves nothing", seen)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	in.Close()
	<-feedErr
	t.Logf("put SIGKILLed with %d bytes of /up/dst._COPYING_ shown by the namenode; its output: %q", seen, out.String())

	c.WaitFor(t, "lease recovery to close /up/dst._COPYING_", func() bool {
		if err := finalAbsent("/up/dst"); err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat(ctx, "/up/dst._COPYING_")
		return err == nil && !st.UnderConstruction
	})
	got := mustRead(t, f, "/up/dst._COPYING_")
	if int64(len(got)) < seen || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("recovered /up/dst._COPYING_ holds %d bytes; want a prefix of the input of at least the %d the namenode showed", len(got), seen)
	}
	if err := finalAbsent("/up/dst"); err != nil {
		t.Fatal(err)
	}
	t.Logf("lease recovery closed /up/dst._COPYING_ at %d bytes (a prefix of the input)", len(got))

	// Control: the same put, not killed.
	cmd, in, out = put("/up/whole")
	if _, err := in.Write(want); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("control put: %v: %s", err, out.String())
	}
	if err := finalAbsent("/up/whole"); err == nil {
		t.Fatal("control: the finished put's file is absent too; the check proves nothing")
	}
	if got := mustRead(t, f, "/up/whole"); !bytes.Equal(got, want) {
		t.Fatalf("control: /up/whole holds %d bytes, want %d", len(got), len(want))
	}
	if _, err := f.Stat(ctx, "/up/whole._COPYING_"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("control: the temporary name stayed: %v", err)
	}
}

// TestProcsNameNodeRestartIsRiddenOut: found by smarth chaos — every
// MapReduce job running while the namenode restarted (a few seconds)
// failed, its task attempts burning their retries on "connection refused"
// within a second. A client that has reached the namenode now waits a
// restart out (refused connections, then start-up safe mode) as Hadoop's
// IPC client does. The control is the same call with ConnectRetry off,
// which fails while the namenode is down.
func TestProcsNameNodeRestartIsRiddenOut(t *testing.T) {
	c := testcluster.StartProcs(t, testcluster.Options{DataNodes: 1})
	ctx := context.Background()
	f := c.Client(t)
	noRetry := c.Client(t, testcluster.WithConfig(func(cfg *client.Config) { cfg.ConnectRetry = -1 }))
	for _, fs := range []*client.FileSystem{f, noRetry} {
		if _, err := fs.Stat(ctx, "/"); err != nil {
			t.Fatal(err)
		}
	}
	c.KillNameNode()
	// Both clients share the process's one connection; a call made before
	// it has seen the namenode's socket close fails as an ambiguous EOF
	// (sent, never answered), which is right and not retried. Once it has,
	// a call without retries fails at once as unreachable.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := noRetry.Mkdir(ctx, "/control", 0o755, true)
		if err == nil {
			t.Fatal("control: mkdir succeeded while the namenode was down")
		}
		if strings.Contains(err.Error(), "cannot reach the namenode") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("control: mkdir without retries while the namenode is down = %v; want 'cannot reach the namenode'", err)
		}
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f.Mkdir(ctx, "/during-restart", 0o755, true) }()
	time.Sleep(1500 * time.Millisecond) // the namenode stays down this long: the outage under test
	c.RestartNameNode()
	if err := <-done; err != nil {
		t.Fatalf("mkdir issued while the namenode was down: %v", err)
	}
	if st, err := f.Stat(ctx, "/during-restart"); err != nil || !st.IsDir {
		t.Fatalf("/during-restart after the restart: %+v %v", st, err)
	}
	t.Logf("mkdir issued during a namenode restart succeeded after %v", time.Since(start).Round(time.Millisecond))
}
