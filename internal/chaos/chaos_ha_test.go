package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"smarth/internal/chaos"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// TestChaosHANameNodeFaults runs the chaos load on a 3-namenode local
// cluster (real processes) with namenode faults only: the active is
// SIGKILLed and SIGSTOPped in turn. Every fault must have hit the active
// of its term, another member must have become active, and a write must
// have been acknowledged after it (the failover time). The control: two
// acknowledged writes are undone behind the load's back before the
// verification — a failover probe's file deleted, a put's content
// replaced — and the run must report exactly those two as lost (so the
// strict check holds with namenode faults: anything else lost would be
// reported too). A second control: after the first fault the test moves
// the leadership itself (transfer-leader), an election no fault made,
// and the report must count it among the elections without a fault.
// Two of the three file workers read through the standbys (observer
// reads, with an msync before reading another worker's file): standbys
// must have served some of their reads, and none may have missed a file
// (a stale read is reported lost, and only the two broken files may be).
func TestChaosHANameNodeFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster of three namenodes and a timed chaos run skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(home, "token"))
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if _, err := cluster.Up(ctx, cluster.Options{
		Home: home, Binary: bin, NameNodes: 3, DataNodes: 3, BlockSize: 1 << 20,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", Detach: true, ReadyTimeout: 2 * time.Minute,
	}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var broken []string
	var transferred string // the member made active by the control's transfer-leader
	rep, err := chaos.Run(ctx, chaos.Options{Home: home, Duration: 30 * time.Second, Interval: 3 * time.Second,
		MaxDown: time.Second, StopHold: time.Second, Seed: 28, Kinds: []string{"namenode"}, NoJobs: true,
		MaxFileSize: 256 << 10, Dir: "/chaos/ha", Out: &log, ObserverReads: true,
		AfterFault: func(ctx context.Context, f chaos.Fault) error {
			if transferred != "" {
				return nil
			}
			var err error
			transferred, err = transferLeader(ctx, t, bin, home, f)
			return err
		},
		BeforeVerify: func(ctx context.Context, fs *client.FileSystem, p chaos.Promises) error {
			broken = breakProbeAndPut(ctx, t, fs, p)
			return nil
		}})
	if err != nil {
		t.Fatalf("chaos run: %v\n%s", err, log.String())
	}
	var sum bytes.Buffer
	rep.Print(&sum)
	t.Logf("\n%s", sum.String())
	kinds := map[string]int{}
	for _, f := range rep.Faults {
		kinds[f.Kind]++
		if f.Term == 0 || f.NewActive == "" || f.NewActive == f.Daemon || f.Failover <= 0 || f.Elected <= 0 {
			t.Errorf("fault %+v: not a failover of the active to another member with a write acknowledged after it", f)
		}
		// The election's steps, in the order the polls saw them: a
		// higher term, a raft leader named, a member ACTIVE.
		if !(0 < f.TermSeen && f.TermSeen <= f.LeaderSeen && f.LeaderSeen <= f.Elected && f.PollGap > 0) {
			t.Errorf("fault %+v: election steps term %v, leader %v, active %v (polls %v apart); want 0 < term <= leader <= active",
				f, f.TermSeen, f.LeaderSeen, f.Elected, f.PollGap)
		}
		if !strings.HasPrefix(f.Daemon, "nn") {
			t.Errorf("fault %+v: the victim is not a namenode", f)
		}
		if f.Kind == chaos.FaultStop && f.Resumed == "" {
			t.Errorf("fault %+v: what the resumed namenode did is not recorded", f)
		}
	}
	if kinds[chaos.FaultKill] == 0 || kinds[chaos.FaultStop] == 0 {
		t.Fatalf("faults by kind %v; want SIGKILL and SIGSTOP both\n%s", kinds, log.String())
	}
	for kind, n := range kinds {
		if s := rep.FailoverStats[kind]; s.Count != n || s.WriteMax <= 0 || s.WriteP50 > s.WriteMax {
			t.Errorf("failover stats for %s: %+v, want %d failovers measured", kind, s, n)
		} else if len(s.Phases) != 4 || s.Phases[0].Count != n || s.Phases[3].Count != n {
			t.Errorf("failover phases for %s: %+v, want 4 phases, the first and last over all %d failovers", kind, s.Phases, n)
		}
	}
	if len(rep.Faults) == 0 || !slices.ContainsFunc(rep.UncausedElections, func(e chaos.TermRise) bool {
		return e.After == 1 && e.From == rep.Faults[0].ElectedTerm && e.To > e.From
	}) {
		t.Errorf("control: transfer-leader to %s after the first fault is not among the elections without a fault %v (final term %d)",
			transferred, rep.UncausedElections, rep.FinalTerm)
	}
	if rep.ObserverServed == 0 {
		t.Errorf("no observer read was served by a standby (%d went to the active)", rep.ObserverToActive)
	}
	if rep.FinalTerm == 0 {
		t.Errorf("the active's term after the run was not read: elections after the last fault go uncounted")
	}
	var lost []string
	for _, l := range rep.Lost {
		lost = append(lost, l.What)
	}
	for _, b := range broken {
		if !slices.ContainsFunc(lost, func(l string) bool { return strings.Contains(l, b) }) {
			t.Errorf("control: %s was broken on purpose and not reported lost", b)
		}
	}
	if len(rep.Lost) != len(broken) {
		t.Errorf("lost %d, broke %d on purpose (%v):\n%s\n%s", len(rep.Lost), len(broken), broken, sum.String(), log.String())
	}
}

// breakProbeAndPut undoes two acknowledged writes with the run's client:
// it deletes a failover probe's file and rewrites a put's content. It
// returns the two paths the losses must name.
func breakProbeAndPut(ctx context.Context, t *testing.T, fs *client.FileSystem, p chaos.Promises) []string {
	var probe, put string
	for _, f := range p.Files {
		switch {
		case strings.Contains(f, "/failover/") && probe == "":
			probe = f
		case strings.Contains(f, "/files/") && put == "":
			put = f
		}
	}
	// The load never renames or deletes a probe's file, so one is there
	// whenever a failover was timed.
	if probe == "" || put == "" {
		t.Fatalf("control: promises %+v; need a probe's file and a put's", p)
	}
	if err := fs.Delete(ctx, probe, false); err != nil {
		t.Fatal(err)
	}
	w, err := fs.Create(ctx, put, client.CreateOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("not what was acknowledged"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []string{probe, put}
}

// transferLeader moves the HA group's leadership to a standby that was
// not fault f's victim, with `smarth admin ha transfer-leader` (an
// election no fault made), and returns that member's name. It runs on
// the run's fault goroutine: it returns its error, never fails the test.
func transferLeader(ctx context.Context, t *testing.T, bin, home string, f chaos.Fault) (string, error) {
	st, err := cluster.LoadState(home)
	if err != nil {
		return "", err
	}
	ms, err := cluster.HAStatus(ctx, st)
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.Err != nil || m.Name == f.Daemon || m.HA.GetState() != dfspb.HAState_STANDBY {
			continue
		}
		cmd := exec.CommandContext(ctx, bin, "admin", "ha", "transfer-leader", m.Name)
		cmd.Env = append(os.Environ(), "SMARTH_HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("control: transfer-leader %s: %v\n%s", m.Name, err, out)
		}
		t.Logf("control: %s", bytes.TrimSpace(out))
		return m.Name, nil
	}
	return "", fmt.Errorf("control: no standby other than %s to transfer the leadership to: %+v", f.Daemon, ms)
}
