package container

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"smarth/internal/testenv"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needRoot skips a test that needs root and cgroups, or fails it under
// CI=true, where both must be there.
func needRoot(t *testing.T) {
	t.Helper()
	err := HostSupport()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %v", err)
	}
	t.Skipf("skipped: %v", err)
}

// newLauncher makes a linux launcher whose work directories sit in a
// fresh temp directory (0700, root's: the containers reach theirs only
// because the node manager enters it for them).
func newLauncher(t *testing.T, p Policy) (*Launcher, string) {
	t.Helper()
	root := t.TempDir()
	l, err := NewLauncher(Config{Executor: ExecutorLinux, Policy: p, Dir: filepath.Join(root, "containers"),
		Name: fmt.Sprintf("smarth-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")), Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l, root
}

func localPolicy(user string) Policy {
	p := DefaultPolicy()
	p.RunAs, p.RunAsUser = RunAsLocalUser, user
	return p
}

// run runs script in c and returns its stdout and stderr.
func run(t *testing.T, c *Container, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := c.Ready(); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(cmd, []string{"SMARTH_TASK_INDEX=3"}); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	return out.String(), err
}

func uidOf(t *testing.T, name string) uint32 {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("this test needs the account %s: %v", name, err)
	}
	n, _ := strconv.Atoi(u.Uid)
	return uint32(n)
}

// TestContainerRunsAsUnprivilegedUserWithoutDaemonSecrets: a command run
// by a root node manager runs as nobody, cannot read a 0600 root file in
// a 0700 directory (the daemon's keys), and sees none of the daemon's
// environment: not its SMARTH_ credential variables nor anything else
// outside the allow-list. Its cwd and HOME are its own 0700 directory.
func TestContainerRunsAsUnprivilegedUserWithoutDaemonSecrets(t *testing.T) {
	needRoot(t)
	t.Setenv("SMARTH_TOKEN_FILE", "/secret/token")
	t.Setenv("SMARTH_IDENTITY_SECRET", "s3cret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "leak")
	l, root := newLauncher(t, localPolicy("nobody"))
	keys := filepath.Join(root, "keys")
	os.Mkdir(keys, 0o700)
	key := filepath.Join(keys, "auth.key")
	if err := os.WriteFile(key, []byte("identity-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := l.New(Spec{ID: "attempt_1_m_000000_0", User: "alice", MemoryBytes: 64 << 20, VCores: 1})
	defer c.Destroy()
	out, err := run(t, c, fmt.Sprintf(`echo "uid=$(id -u)"; echo "cwd=$(pwd)"; cat %s; env | sed 's/^/env:/'`, key))
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if want := fmt.Sprintf("uid=%d\n", uidOf(t, "nobody")); !strings.Contains(out, want) {
		t.Fatalf("want %q in:\n%s", want, out)
	}
	if strings.Contains(out, "identity-secret") || !strings.Contains(out, "Permission denied") {
		t.Errorf("the container read the root-only key, or failed for another reason:\n%s", out)
	}
	wd := c.WorkDir()
	if !strings.Contains(out, "cwd="+wd+"\n") {
		t.Errorf("cwd is not the work directory %s:\n%s", wd, out)
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "PWD": true, "TMPDIR": true, "USER": true, "LOGNAME": true,
		"LANG": true, "LC_ALL": true, "LC_CTYPE": true, "TZ": true, "SMARTH_TASK_INDEX": true, "SHLVL": true, "OLDPWD": true, "_": true}
	for _, line := range strings.Split(out, "\n") {
		kv, ok := strings.CutPrefix(line, "env:")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if !allowed[k] {
			t.Errorf("variable %s reached the container", kv)
		}
		if k == "HOME" && v != wd {
			t.Errorf("HOME=%s, want the work directory %s", v, wd)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(wd, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o777 != 0o700 || st.Uid != uidOf(t, "nobody") {
		t.Errorf("work directory %s: mode %o uid %d, want 0700 owned by nobody", wd, st.Mode&0o777, st.Uid)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wd); !os.IsNotExist(err) {
		t.Errorf("work directory %s left after Destroy: %v", wd, err)
	}
}

// TestContainerCannotReachAnotherContainer: attempt A (as daemon, a
// run_as_user the operator may name below min_user_id) keeps a file in
// its work directory (0644, as its umask makes it: the directory's 0700
// is what keeps it); attempt B (as nobody) can neither read it by its
// full path nor list the containers' parent to find it.
func TestContainerCannotReachAnotherContainer(t *testing.T) {
	needRoot(t)
	uidOf(t, "daemon")
	la, root := newLauncher(t, localPolicy("daemon"))
	// The path down to the containers' directory is open to all (as
	// work_dir is on a node), so only the containers' own modes are
	// tested: t.TempDir and its parent are 0700.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	a := la.New(Spec{ID: "attempt_1_m_000000_0", User: "alice", MemoryBytes: 64 << 20})
	defer a.Destroy()
	if out, err := run(t, a, `umask 022; echo private > mine; id -un`); err != nil || strings.TrimSpace(out) != "daemon" {
		t.Fatalf("attempt A: %v %q", err, out)
	}
	lb, _ := newLauncher(t, localPolicy("nobody"))
	lb.cfg.Dir = la.cfg.Dir // both under one node manager's containers directory
	b := lb.New(Spec{ID: "attempt_1_m_000001_0", User: "bob", MemoryBytes: 64 << 20})
	defer b.Destroy()
	theirs := filepath.Join(a.WorkDir(), "mine")
	out, err := run(t, b, fmt.Sprintf(`id -un; cat %s; ls %s`, theirs, la.cfg.Dir))
	if err == nil || strings.Contains(out, "private") || strings.Count(out, "Permission denied") != 2 {
		t.Fatalf("attempt B reached attempt A's work directory (%v):\n%s", err, out)
	}
	if !strings.HasPrefix(out, "nobody\n") {
		t.Fatalf("attempt B ran as %q", out)
	}
}

// TestContainerOverMemoryLimitIsKilledAndSaysWhy: tail holds a 200 MB
// line in memory; in a 32 MiB container the kernel kills it and the
// task's error says so in YARN's words. (Bounded, so a container without
// its limit ends cleanly and fails the test rather than eat the host.)
func TestContainerOverMemoryLimitIsKilledAndSaysWhy(t *testing.T) {
	needRoot(t)
	l, _ := newLauncher(t, localPolicy("nobody"))
	c := l.New(Spec{ID: "attempt_1_m_000002_0", User: "alice", MemoryBytes: 32 << 20})
	defer c.Destroy()
	out, err := run(t, c, `head -c 200M /dev/zero | tail >/dev/null`)
	if err == nil {
		t.Fatalf("tail of 200 MB ended cleanly in 32 MiB: %s", out)
	}
	msg := c.Explain(fmt.Errorf("streaming mapper: %w", err)).Error()
	for _, want := range []string{"Container [pid=", "containerID=attempt_1_m_000002_0", "is running beyond physical memory limits",
		"of 32 MB physical memory used", "Killing container.", "streaming mapper: exit status 137"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// Control: a failure that is not the memory limit is left alone, and
	// so is a success.
	c2 := l.New(Spec{ID: "attempt_1_m_000003_0", User: "alice", MemoryBytes: 32 << 20})
	defer c2.Destroy()
	_, err = run(t, c2, `exit 3`)
	if got := c2.Explain(err); got != err {
		t.Errorf("exit 3 explained as %v", got)
	}
	if _, err := run(t, c2, `true`); err != nil || c2.Explain(nil) != nil {
		t.Errorf("a clean command: %v, explained as %v", err, c2.Explain(nil))
	}
	// A shell that goes on after the kernel killed its big process ends
	// well; the task must fail for the limit all the same.
	c3 := l.New(Spec{ID: "attempt_1_m_000005_0", User: "alice", MemoryBytes: 32 << 20})
	defer c3.Destroy()
	if out, err := run(t, c3, `head -c 200M /dev/zero | tail >/dev/null; exit 0`); err != nil {
		t.Fatalf("the shell should end well after its pipeline was killed: %v %s", err, out)
	}
	if err := c3.Explain(nil); err == nil || !strings.Contains(err.Error(), "is running beyond physical memory limits") {
		t.Errorf("a command that went on after an OOM kill explained as %v; want the memory limit", err)
	}
}

// TestContainerDestroyKillsSetsidGrandchild: a command's child that
// leaves the process group (setsid) is still in the cgroup, and Destroy
// kills it.
func TestContainerDestroyKillsSetsidGrandchild(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		testenv.Missing(t, "no setsid for the test")
	}
	l, _ := newLauncher(t, localPolicy("nobody"))
	c := l.New(Spec{ID: "attempt_1_m_000004_0", User: "alice", MemoryBytes: 64 << 20})
	defer c.Destroy()
	out, err := run(t, c, `setsid sleep 600 >/dev/null 2>&1 & echo $!`)
	if err != nil {
		t.Fatal(err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("pid %q", out)
	}
	// The control: the shell is gone, the grandchild lives on in its
	// own session (once setsid has run) and in the container's cgroup.
	deadline := time.Now().Add(10 * time.Second)
	for sessionOf(pid) != pid {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("waited 10s for grandchild %d to be alive in a session of its own (sid %d)", pid, sessionOf(pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if procs := c.cg.procs(); !slices.Contains(procs, pid) {
		t.Fatalf("grandchild %d not in the container's cgroup %v", pid, procs)
	}
	if err := c.Destroy(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if ctx.Err() != nil {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("waited 10s for the setsid grandchild %d to die after Destroy", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sessionOf reads a process's session id from /proc (-1: gone).
func sessionOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 4 {
		return -1
	}
	n, _ := strconv.Atoi(f[3]) // state ppid pgrp session
	return n
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// TestSecureNodeManagerThatIsNotRootRefusesUserCode: without root the
// linux executor cannot switch users; in secure mode every command is
// refused with the reason, none runs as the node manager. In simple
// mode the same launcher runs it as the node manager (today's way).
func TestSecureNodeManagerThatIsNotRootRefusesUserCode(t *testing.T) {
	old := geteuid
	geteuid = func() int { return 1000 }
	defer func() { geteuid = old }()
	mark := filepath.Join(t.TempDir(), "ran")
	for _, secure := range []bool{true, false} {
		l, err := NewLauncher(Config{Executor: ExecutorLinux, Policy: DefaultPolicy(), Dir: t.TempDir(), Secure: secure})
		if err != nil {
			t.Fatal(err)
		}
		c := l.New(Spec{ID: "attempt_1_m_000005_0", User: "alice", MemoryBytes: 64 << 20})
		cmd := exec.Command("/bin/sh", "-c", "touch "+mark)
		err = c.Ready()
		if err == nil {
			err = c.Start(cmd, nil)
		}
		if secure {
			if err == nil || !strings.Contains(err.Error(), "not root") || !strings.Contains(err.Error(), "does not run user code as itself") {
				t.Fatalf("secure, not root: %v", err)
			}
			if _, serr := os.Stat(mark); serr == nil {
				t.Fatal("secure mode ran the command anyway")
			}
			continue
		}
		if err != nil {
			t.Fatalf("simple mode: %v", err)
		}
		cmd.Wait()
		if _, err := os.Stat(mark); err != nil {
			t.Fatalf("simple mode did not run the command: %v", err)
		}
	}
}

// TestStartSweepsWhatAGoneNodeManagerLeft: a node manager that died
// (here: a launcher named for a pid that has exited) left a container
// with a setsid'd process in its cgroup and its work directory. The next
// node manager to start kills the process and removes both. A live node
// manager's cgroup (the control: named for this process) is left alone.
func TestStartSweepsWhatAGoneNodeManagerLeft(t *testing.T) {
	needRoot(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "containers")
	start := func(name string) (*Launcher, *Container, int) {
		l, err := NewLauncher(Config{Executor: ExecutorLinux, Policy: localPolicy("nobody"), Dir: dir, Name: name, Secure: true})
		if err != nil {
			t.Fatal(err)
		}
		c := l.New(Spec{ID: "attempt_1_m_000006_0", User: "alice", MemoryBytes: 64 << 20})
		out, err := run(t, c, `setsid sleep 600 >/dev/null 2>&1 & echo $!`)
		pid, perr := strconv.Atoi(strings.TrimSpace(out))
		if err != nil || perr != nil {
			t.Fatalf("%v %q", err, out)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); c.Destroy(); l.Close() })
		return l, c, pid
	}
	live, _, livePid := start(fmt.Sprintf("smarth-test-%d-live", os.Getpid()))
	dead, deadCtr, deadPid := start(fmt.Sprintf("smarth-test-%d-gone", gone.Process.Pid))
	deadDir := deadCtr.WorkDir()

	start(fmt.Sprintf("smarth-test-%d-next", os.Getpid()))
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(deadPid, 0) == nil && !zombie(deadPid) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for the gone node manager's process %d to be killed", deadPid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, d := range dead.cgroups.base {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the gone node manager's cgroup %s is still there: %v", d, err)
		}
	}
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("the gone node manager's work directory %s is still there: %v", deadDir, err)
	}
	if syscall.Kill(livePid, 0) != nil || zombie(livePid) {
		t.Errorf("the live node manager's process %d was killed", livePid)
	}
	for _, d := range live.cgroups.base {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the live node manager's cgroup: %v", err)
		}
	}
}
