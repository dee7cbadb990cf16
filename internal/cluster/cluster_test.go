package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeOptions runs the test binary as every daemon (see fake_test.go).
func fakeOptions(t *testing.T) Options {
	t.Helper()
	t.Setenv(fakeDaemonEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Cleanup(func() { _, _ = Down(home, time.Second) })
	return Options{
		Home: home, Binary: exe, DataNodes: 3,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		Detach: true, ReadyTimeout: 20 * time.Second, StopGrace: 5 * time.Second,
	}
}

func TestUpStatusDown(t *testing.T) {
	opts := fakeOptions(t)
	opts.NodeManagers = true
	opts.ResourceManager = map[string]any{"rpc_addr": "127.0.0.1:0", "http_addr": "127.0.0.1:0"}
	var out strings.Builder
	opts.Out = &out
	st, err := Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || st.NameNode == "" || st.ResourceManager == "" {
		t.Fatalf("state after up: ready=%v namenode=%q rm=%q", st.Ready, st.NameNode, st.ResourceManager)
	}
	if len(st.Daemons) != 1+3+1+3 {
		t.Fatalf("want 8 daemons (nn, 3 dn, rm, 3 nm), got %d", len(st.Daemons))
	}
	for _, want := range []string{"namenode  ready", "3 datanodes registered", "3 node managers ready"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("up output lacks %q:\n%s", want, out.String())
		}
	}

	// The state file is what other commands find the cluster by.
	t.Setenv("SMARTH_HOME", opts.Home)
	t.Setenv("SMARTH_NAMENODE", "")
	if got := DefaultNameNode(); got != st.NameNode {
		t.Errorf("DefaultNameNode() = %q, want the state file's %q", got, st.NameNode)
	}
	t.Setenv("SMARTH_NAMENODE", "10.0.0.1:8020")
	if got := DefaultNameNode(); got != "10.0.0.1:8020" {
		t.Errorf("DefaultNameNode() = %q, want $SMARTH_NAMENODE", got)
	}
	if got := DefaultResourceManager(); got != st.ResourceManager {
		t.Errorf("DefaultResourceManager() = %q, want %q", got, st.ResourceManager)
	}

	s, err := GetStatus(context.Background(), opts.Home)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	s.Print(&buf)
	for _, d := range st.Daemons {
		if !s.Alive[d.Name] {
			t.Errorf("status: %s (pid %d) not alive", d.Name, d.PID)
		}
	}
	for _, want := range []string{"dn1", "dn3", "LIVE", "/rack-b", "datanode report (3)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, buf.String())
		}
	}

	if _, err := Up(context.Background(), opts); !errors.Is(err, ErrRunning) {
		t.Errorf("second up on a running home: got %v, want ErrRunning", err)
	}

	lines, err := Down(opts.Home, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 8 || !strings.Contains(strings.Join(lines, "\n"), "stopped") {
		t.Errorf("down lines:\n%s", strings.Join(lines, "\n"))
	}
	for _, d := range st.Daemons {
		if pidRuns(d.PID, d.ConfigFile) {
			t.Errorf("%s (pid %d) still runs after down", d.Name, d.PID)
		}
	}
	after, err := LoadState(opts.Home)
	if err != nil {
		t.Fatal(err)
	}
	if after.NameNode != "" || after.Ready {
		t.Errorf("state after down still names a namenode: %+v", after)
	}
}

func TestUpFailureReportsAndCleansUp(t *testing.T) {
	opts := fakeOptions(t)
	t.Setenv(fakeFailEnv, "datanode")
	_, err := Up(context.Background(), opts)
	if err == nil {
		t.Fatal("up with failing datanodes succeeded")
	}
	for _, want := range []string{"dn1 exited before it was ready", "fake failure: cannot bind"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	st, lerr := LoadState(opts.Home)
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, d := range st.Daemons {
		if d.PID != 0 {
			t.Errorf("%s still recorded with pid %d after a failed up", d.Name, d.PID)
		}
	}
}

func TestDownKillsWhatIgnoresSIGTERM(t *testing.T) {
	opts := fakeOptions(t)
	opts.DataNodes = 1
	t.Setenv(fakeIgnoreTermEnv, "datanode")
	st, err := Up(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	dn, _ := st.Daemon("dn1")
	lines, err := Down(opts.Home, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "dn1") || !strings.Contains(strings.Join(lines, "\n"), "killed") {
		t.Errorf("down should report dn1 killed:\n%s", strings.Join(lines, "\n"))
	}
	if pidRuns(dn.PID, dn.ConfigFile) {
		t.Errorf("dn1 pid %d survived SIGKILL", dn.PID)
	}
}

// A state file left by a crashed `up` may name pids that now belong to
// other processes: down must not signal them.
func TestDownIgnoresReusedPIDs(t *testing.T) {
	home := t.TempDir()
	st := &State{Home: home, NameNode: "127.0.0.1:1", Daemons: []Daemon{{
		Name: "namenode", Kind: "namenode", PID: os.Getpid(),
		ConfigFile: filepath.Join(home, "conf", "namenode.yaml"),
	}}}
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	lines, err := Down(home, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "was not running") {
		t.Errorf("down lines: %q", lines)
	}
}

func TestDownWithoutCluster(t *testing.T) {
	_, err := Down(t.TempDir(), time.Second)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "smarth cluster up") {
		t.Errorf("down of an empty home: %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 5}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	want := []string{"/rack-a", "/rack-b", "/rack-a", "/rack-b", "/rack-a"}
	if strings.Join(o.Racks, ",") != strings.Join(want, ",") {
		t.Errorf("racks %v, want %v", o.Racks, want)
	}
	if o.Replication != 3 {
		t.Errorf("replication %d, want 3", o.Replication)
	}
	one := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 1}
	if err := one.setDefaults(); err != nil || one.Replication != 1 {
		t.Errorf("one datanode: replication %d (%v), want 1", one.Replication, err)
	}
	bad := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 2, Racks: []string{"/r1"}}
	if err := bad.setDefaults(); err == nil {
		t.Error("2 datanodes with 1 rack accepted")
	}
	nn := must(o.nameNodeConfig(layout{o.Home}))
	if racks := nn["racks"].(map[string]any); racks["dn2"] != "/rack-b" || racks["127.0.0.1"] != "/rack-a" {
		t.Errorf("namenode racks map %v", racks)
	}
}

func TestPurgeRefusesNonClusterDirs(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "precious")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Purge(dir); err == nil {
		t.Fatal("purge of a directory without cluster.json succeeded")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("purge removed a file it should not: %v", err)
	}
}
