package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"smarth/internal/diskperm"
)

// Ready is what a daemon writes to its ready file once it listens. Each
// daemon fills the keys it has: namenode {pid,rpc,http}, datanode
// {pid,id,data,ipc,http}, resource manager {pid,rpc,http}, node manager
// {pid,rpc,shuffle,http}.
type Ready struct {
	PID     int    `json:"pid"`
	RPC     string `json:"rpc,omitempty"`
	HTTP    string `json:"http,omitempty"`
	ID      string `json:"id,omitempty"`
	Data    string `json:"data,omitempty"`
	IPC     string `json:"ipc,omitempty"`
	Shuffle string `json:"shuffle,omitempty"`
}

// ProcSpec says how to run one daemon as a child process of the smarth
// binary: `<binary> <kind> --config C --ready-file R --log-file L [args]`.
type ProcSpec struct {
	Name       string   // "namenode", "dn1", "rm", "nm1": unique in a cluster
	Kind       string   // the smarth subcommand: namenode, datanode, resourcemanager, nodemanager
	Binary     string   // path of the smarth executable
	ConfigFile string   // YAML config, already written
	ReadyFile  string   // removed before start; the daemon writes it
	LogFile    string   // the daemon's own log (--log-file)
	OutFile    string   // the child's stdout and stderr (panics, early errors)
	Args       []string // extra flags
	// Detach puts the child in its own session so it outlives the
	// launcher (smarth cluster up). Without it the child gets SIGKILL when
	// the launching thread dies, which is what tests want.
	Detach bool
}

// Proc is a started daemon process.
type Proc struct {
	Spec ProcSpec
	PID  int

	cmd    *exec.Cmd
	exited chan struct{} // closed when the child has been reaped
	err    error         // exit status, valid after exited is closed
}

// Launch starts the daemon described by spec and returns at once; use
// WaitReady to wait for its ready file.
func Launch(spec ProcSpec) (*Proc, error) {
	if spec.Binary == "" {
		return nil, errors.New("launch " + spec.Name + ": no smarth binary given")
	}
	for _, f := range []string{spec.ReadyFile, spec.LogFile, spec.OutFile} {
		if f != "" {
			if err := os.MkdirAll(filepath.Dir(f), diskperm.Dir); err != nil {
				return nil, fmt.Errorf("launch %s: %w", spec.Name, err)
			}
		}
	}
	if err := os.Remove(spec.ReadyFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("launch %s: remove stale ready file: %w", spec.Name, err)
	}
	args := []string{spec.Kind}
	if spec.ConfigFile != "" {
		args = append(args, "--config", spec.ConfigFile)
	}
	args = append(args, "--ready-file", spec.ReadyFile)
	if spec.LogFile != "" {
		args = append(args, "--log-file", spec.LogFile)
	}
	args = append(args, spec.Args...)
	cmd := exec.Command(spec.Binary, args...)
	cmd.Stdin = nil
	if spec.OutFile != "" {
		out, err := os.OpenFile(spec.OutFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, diskperm.File)
		if err != nil {
			return nil, fmt.Errorf("launch %s: %w", spec.Name, err)
		}
		defer out.Close() // the child has its own copy after Start
		cmd.Stdout, cmd.Stderr = out, out
	}
	if spec.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("launch %s: %w", spec.Name, err)
	}
	p := &Proc{Spec: spec, PID: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited reports whether the child has exited, and its exit error.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.exited:
		return true, p.err
	default:
		return false, nil
	}
}

// Done is closed once the child has exited.
func (p *Proc) Done() <-chan struct{} { return p.exited }

// WaitReady waits until the daemon has written its ready file, the child
// exits (an error with the end of its output) or ctx ends.
func (p *Proc) WaitReady(ctx context.Context) (Ready, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, err := ReadReady(p.Spec.ReadyFile); err == nil {
			return r, nil
		}
		select {
		case <-p.exited:
			// It may have written the file just before exiting, but a
			// daemon that exited is not ready either way.
			return Ready{}, fmt.Errorf("%s exited before it was ready (%v)%s", p.Spec.Name, p.err, p.outputTail())
		case <-ctx.Done():
			return Ready{}, fmt.Errorf("%s: no ready file %s after waiting: %w%s", p.Spec.Name, p.Spec.ReadyFile, ctx.Err(), p.outputTail())
		case <-tick.C:
		}
	}
}

// outputTail is the last lines the child printed and logged, to put in an
// error so a person sees why it failed without opening files.
func (p *Proc) outputTail() string {
	var b strings.Builder
	for _, f := range []string{p.Spec.OutFile, p.Spec.LogFile} {
		if t := tailLines(f, 8); t != "" {
			fmt.Fprintf(&b, "\n--- last lines of %s:\n%s", f, t)
		}
	}
	return b.String()
}

// Stop sends SIGTERM, waits up to grace, then SIGKILL, and waits for exit.
func (p *Proc) Stop(grace time.Duration) error {
	if ok, _ := p.Exited(); ok {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("%s (pid %d) did not stop within %v of SIGTERM; killed", p.Spec.Name, p.PID, grace)
}

// Kill sends SIGKILL (a crash) and waits for the child to be reaped.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// ReadReady parses a ready file. A missing or half-written file is an error;
// daemons write it to a temporary name and rename it, so a file that parses
// is complete.
func ReadReady(path string) (Ready, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Ready{}, err
	}
	var r Ready
	if err := json.Unmarshal(b, &r); err != nil {
		return Ready{}, fmt.Errorf("ready file %s: %w", path, err)
	}
	return r, nil
}

// tailLines returns the last n lines of a file, or "" if it is unreadable.
func tailLines(path string, n int) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 16 << 10
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-maxTail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// pidAlive reports whether pid exists (and is not a zombie we could reap).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := readProc(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		// The pid can vanish between kill(0) and the read (a zombie of
		// ours reaped meanwhile): with procfs present that means gone.
		// Only without procfs do we have to trust kill(0).
		return !haveProcfs()
	}
	// Field 3 is the state; a zombie has exited already.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}

// pidRuns reports whether pid is alive and its command line mentions
// marker (a path unique to the daemon, its config file), so that a pid
// reused by an unrelated process is never taken for ours.
//
// A live process with an empty command line is in execve: a namenode
// restarting itself in place (smarth namenode --self-restart) has one
// for a moment, between its old image and its new one's arguments. It is
// asked again rather than taken for gone; a chaos run that took it for
// gone started a second namenode on the same metadata, which refused
// to start, and the run gave up.
func pidRuns(pid int, marker string) bool {
	for try := 1; ; try++ {
		if !pidAlive(pid) {
			return false
		}
		b, err := readProc(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return !haveProcfs() // gone since pidAlive, unless we cannot tell
		}
		if len(b) > 0 || try == execRetries {
			return marker == "" || bytes.Contains(b, []byte(marker))
		}
		time.Sleep(execRetryPause)
	}
}

// execRetries and execRetryPause bound how long pidRuns waits for a
// process in execve to show its command line (an exec takes
// milliseconds; this allows for a loaded machine).
const (
	execRetries    = 10
	execRetryPause = 50 * time.Millisecond
)

// readProc reads a /proc file; a test replaces it to stand in for a
// process that vanishes between two reads.
var readProc = os.ReadFile

// haveProcfs reports whether /proc describes processes here, so that a
// missing /proc/<pid> file means the process is gone.
var haveProcfs = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
})

// stopPID stops a process that is not our child (it was started by an
// earlier `smarth cluster up`): SIGTERM, wait up to grace for it to go,
// then SIGKILL. It reports whether SIGKILL was needed.
func stopPID(pid int, marker string, grace time.Duration) (killed bool, err error) {
	if !pidRuns(pid, marker) {
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("signal pid %d: %w", pid, err)
	}
	if waitGone(pid, marker, grace) {
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return true, fmt.Errorf("kill pid %d: %w", pid, err)
	}
	if !waitGone(pid, marker, 5*time.Second) {
		return true, fmt.Errorf("pid %d still running after SIGKILL", pid)
	}
	return true, nil
}

// waitGone polls until pid no longer runs or d has passed.
func waitGone(pid int, marker string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !pidRuns(pid, marker) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(25 * time.Millisecond) // polling a pid we do not own: no wait(2) possible
	}
}
