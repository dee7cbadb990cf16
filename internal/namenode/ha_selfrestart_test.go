package namenode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/sigstop"
)

// restartLine is what smarth namenode logs just before it re-executes
// itself after a diverged stint (cmd/smarth/namenode.go).
const restartLine = "namenode restarting itself"

// TestHADivergedActiveRestartsInPlace ends an active's stint with an edit
// its group never committed, every time: both standbys are frozen with
// SIGSTOP, then a mkdir reaches the active, which applies and appends it
// and waits for a majority that cannot answer; its leader lease lapses
// and it steps down with memory ahead of the log. That memory must go.
// With --self-restart (the default) the same process (pid and ready
// file) re-executes itself, reloads from the group's log and is a member
// again once the standbys resume, agreeing with the new active on what
// exists. The control, --self-restart=false (for a service manager),
// exits with status 1 and does not restart. The mkdir is never
// acknowledged: whether it survives is the group's to decide (the frozen
// standbys may have its entry in their sockets' buffers). The lease is 2 s
// so that on a loaded machine the mkdir reaches the active before the
// lease, counted from the standbys' last answers, lapses.
func TestHADivergedActiveRestartsInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three smarth namenode processes, twice")
	}
	for _, self := range []bool{true, false} {
		t.Run(fmt.Sprintf("self-restart=%v", self), func(t *testing.T) {
			var flags []string // the default restarts in place
			if !self {
				flags = []string{"--self-restart=false"}
			}
			g := startHAProcsLease(t, 2*time.Second, flags...)
			l := g.active(nil)
			p := g.procs[l]
			pid := p.cmd.Process.Pid
			for i, o := range g.procs {
				if i == l {
					continue
				}
				// Frozen means every thread stopped: a standby whose threads
				// ran on after kill(2) returned once acknowledged the mkdir.
				t.Cleanup(func() { o.cmd.Process.Signal(syscall.SIGCONT) })
				if _, err := sigstop.Stop(o.cmd.Process.Pid, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			c := g.cli[l]
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			mkdir := make(chan error, 1)
			go func() {
				_, err := c.cp.Mkdirs(metadataCtx(ctx, c), &dfspb.MkdirsRequest{Path: "/diverged"})
				mkdir <- err
			}()

			logged := func() bool {
				b, _ := os.ReadFile(p.logFile)
				return bytes.Contains(b, []byte(restartLine))
			}
			exited := func() bool {
				select {
				case <-p.exited:
					return true
				default:
					return false
				}
			}
			// waitDeposed is waitLong saying, on a timeout, what became of
			// the mkdir: acknowledged, the standbys were not frozen in time;
			// refused, the active's lease lapsed before the mkdir came.
			waitDeposed := func(what string, cond func() bool) {
				t.Helper()
				for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						select {
						case err := <-mkdir:
							t.Fatalf("timed out after a minute waiting for %s; the mkdir returned %v", what, err)
						default:
							t.Fatalf("timed out after a minute waiting for %s; the mkdir has not returned", what)
						}
					}
				}
			}
			if self {
				waitDeposed("the deposed active to restart itself in place or exit", func() bool { return logged() || exited() })
				select {
				case <-p.exited:
					t.Fatalf("the deposed active exited (%v) instead of restarting itself in place", p.cmd.ProcessState)
				case <-time.After(500 * time.Millisecond):
				}
			} else {
				waitDeposed("the deposed active to exit", exited)
				if code := p.cmd.ProcessState.ExitCode(); code != 1 {
					t.Errorf("the deposed active exited with status %d, want 1", code)
				}
				if logged() {
					t.Errorf("--self-restart=false: the deposed active logged %q", restartLine)
				}
			}
			if err := <-mkdir; err == nil {
				t.Fatalf("the mkdir that no majority could take was acknowledged")
			}
			for i, o := range g.procs {
				if i != l {
					o.cmd.Process.Signal(syscall.SIGCONT)
				}
			}
			if !self {
				return
			}

			// The same process, reloaded, is a member of the group again.
			nl := g.active(nil)
			var ready struct {
				PID int `json:"pid"`
			}
			if b, err := os.ReadFile(p.readyFile); err != nil || json.Unmarshal(b, &ready) != nil || ready.PID != pid {
				t.Errorf("ready file %s after the restart: pid %d (err %v), want the same process's %d", p.readyFile, ready.PID, err, pid)
			}
			a, err := g.cli[nl].cp.GetHAStatus(g.cli[nl].ctx(), &dfspb.GetHAStatusRequest{})
			if err != nil {
				t.Fatal(err)
			}
			want := g.exists(nl, "/diverged", a.AppliedTxid)
			waitLong(t, fmt.Sprintf("the restarted member to have applied the group's log to txid %d", a.AppliedTxid), func() bool {
				st, err := c.cp.GetHAStatus(c.ctx(), &dfspb.GetHAStatusRequest{})
				return err == nil && st.AppliedTxid >= a.AppliedTxid
			})
			if got := g.exists(l, "/diverged", a.AppliedTxid); got != want {
				t.Errorf("/diverged exists on the restarted member: %v, on the active: %v", got, want)
			}
			t.Logf("member %d diverged and restarted itself in place (pid %d); the unacknowledged mkdir survived: %v", l, pid, want)
		})
	}
}

// exists asks member i whether path exists, as an observer read at
// state id state (so a standby answers too, once it has applied it).
func (g *haProcs) exists(i int, path string, state uint64) bool {
	g.t.Helper()
	c := g.cli[i]
	ctx := metadata.AppendToOutgoingContext(c.ctx(), ipc.StateKey, strconv.FormatUint(state, 10))
	r, err := c.cp.GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: path})
	if err != nil {
		g.t.Fatalf("getFileInfo %s on member %d: %v", path, i, err)
	}
	return r.GetStatus() != nil
}
