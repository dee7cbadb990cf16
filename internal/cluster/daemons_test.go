package cluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pids maps each recorded daemon to its pid.
func pids(st *State) map[string]int {
	m := map[string]int{}
	for _, d := range st.Daemons {
		m[d.Name] = d.PID
	}
	return m
}

// crash SIGKILLs a running daemon and waits until it is gone.
func crash(t *testing.T, st *State, name string) {
	t.Helper()
	d, ok := st.Daemon(name)
	if !ok || !d.Running() {
		t.Fatalf("%s is not running before the crash", name)
	}
	if err := syscall.Kill(d.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitGone(d.PID, d.ConfigFile, 10*time.Second) {
		t.Fatalf("%s (pid %d) still runs after SIGKILL", name, d.PID)
	}
}

// Up on a cluster with one crashed datanode starts that datanode only;
// Up on a cluster where everything runs refuses.
func TestUpStartsOnlyMissingDaemons(t *testing.T) {
	opts := fakeOptions(t)
	st, err := Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	before := pids(st)
	crash(t, st, "dn2")

	var out strings.Builder
	opts.Out = &out
	opts.DataNodes = 5 // a new cluster's shape: ignored for an existing one
	st, err = Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	after := pids(st)
	for name, pid := range before {
		d, _ := st.Daemon(name)
		switch {
		case !d.Running():
			t.Errorf("%s not running after up", name)
		case name == "dn2" && after[name] == pid:
			t.Errorf("dn2 kept its dead pid %d", pid)
		case name != "dn2" && after[name] != pid:
			t.Errorf("%s restarted (pid %d -> %d) though it ran", name, pid, after[name])
		}
	}
	if len(st.Daemons) != 4 || !st.Ready {
		t.Errorf("after up: %d daemons, ready=%v; want the recorded 4, ready", len(st.Daemons), st.Ready)
	}
	if !strings.Contains(out.String(), "runs 3 of 4 daemons; starting dn2") {
		t.Errorf("up output:\n%s", out.String())
	}
	if _, err := Up(context.Background(), opts); !errors.Is(err, ErrRunning) {
		t.Errorf("up with everything running: %v, want ErrRunning", err)
	}
}

// Stop and Start of the namenode keep its address, though it first bound
// port 0: the running datanodes know it by that address.
func TestStopStartNameNodeKeepsItsAddress(t *testing.T) {
	opts := fakeOptions(t)
	st, err := Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	addr := st.NameNode
	co := ControlOptions{Home: opts.Home, ReadyTimeout: 20 * time.Second, StopGrace: 5 * time.Second}
	line, err := Stop("nn", co)
	if err != nil || !strings.Contains(line, "stopped") {
		t.Fatalf("stop nn: %q, %v", line, err)
	}
	if s, _ := LoadState(opts.Home); s.Ready {
		t.Error("state says ready with the namenode stopped")
	}
	if _, err := Start(context.Background(), "dn1", co); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("start of a running datanode: %v", err)
	}
	st, err = Start(context.Background(), "namenode", co)
	if err != nil {
		t.Fatal(err)
	}
	if st.NameNode != addr || !st.Ready {
		t.Errorf("namenode back at %q (ready=%v), want %q", st.NameNode, st.Ready, addr)
	}
	old := pids(st)["dn3"]
	st, lines, err := Restart(context.Background(), "dn3", co)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := st.Daemon("dn3"); d.PID == old || !d.Running() || !strings.Contains(lines[0], "stopped") {
		t.Errorf("restart dn3: pid %d -> %d, running=%v, %q", old, d.PID, d.Running(), lines)
	}
	if _, err := Start(context.Background(), "dn9", co); err == nil || !strings.Contains(err.Error(), "it has dn1, dn2, dn3, namenode") {
		t.Errorf("start of an unknown daemon: %v", err)
	}
}

// A start that fails before the daemon is ready keeps the pid recorded
// before it: there a process taken for stopped still runs, which down
// must find (a chaos run once lost track of a live namenode so). The
// stand-in for it is this test process, whose command line is not a
// daemon's.
func TestFailedStartKeepsRecordedPid(t *testing.T) {
	opts := fakeOptions(t)
	st, err := Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	crash(t, st, "dn3")
	d, _ := st.Daemon("dn3")
	d.PID = os.Getpid()
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeFailEnv, "datanode")
	co := ControlOptions{Home: opts.Home, ReadyTimeout: 20 * time.Second, StopGrace: 5 * time.Second}
	if _, err := Start(context.Background(), "dn3", co); err == nil || !strings.Contains(err.Error(), "dn3 exited before it was ready") {
		t.Fatalf("start of a datanode that fails: %v", err)
	}
	st, err = LoadState(opts.Home)
	if err != nil {
		t.Fatal(err)
	}
	if got := pids(st)["dn3"]; got != os.Getpid() {
		t.Errorf("dn3 recorded with pid %d after its failed start; want the pid recorded before, %d", got, os.Getpid())
	}
}
