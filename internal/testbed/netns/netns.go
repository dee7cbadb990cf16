package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is where iproute2 keeps its named namespaces.
const Dir = "/run/netns"

// Path is the file of the named namespace.
func Path(name string) string { return filepath.Join(Dir, name) }

// Do runs f on an OS thread that has entered the namespace at path, then
// returns the thread to the process's namespace. f must not start
// goroutines that rely on being in the namespace: only f's own thread is.
func Do(path string, f func() error) error {
	target, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open network namespace: %w", err)
	}
	defer target.Close()
	errc := make(chan error, 1)
	// A fresh goroutine, so that if the thread cannot be returned to the
	// original namespace it is simply thrown away when the goroutine ends
	// still locked, and no other goroutine ever runs on it.
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter network namespace %s: %w", path, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("leave network namespace %s: %w", path, err))
			return // thread stays locked and dies with the goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Listen opens a listener inside the namespace at path.
func Listen(path, network, addr string) (net.Listener, error) {
	var ln net.Listener
	err := Do(path, func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	return ln, err
}

// Dialer returns a dial function whose connections start inside the
// namespace at path, for grpc.WithContextDialer and similar.
func Dialer(path string) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var c net.Conn
		err := Do(path, func() error {
			var d net.Dialer
			var err error
			// The connect happens here, on the namespace's thread;
			// afterwards the socket belongs to the namespace.
			c, err = d.DialContext(ctx, "tcp", addr)
			return err
		})
		return c, err
	}
}

// Inode identifies a namespace: the inode of its file (or of a process's
// /proc/<pid>/ns/net link target).
func Inode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// PIDIn reports whether process pid runs inside the namespace at path.
func PIDIn(pid int, path string) bool {
	want, err := Inode(path)
	if err != nil {
		return false
	}
	got, err := Inode(fmt.Sprintf("/proc/%d/ns/net", pid))
	return err == nil && got == want
}

// PIDs lists the processes inside the namespace at path, like `ip netns
// pids`, by comparing every process's namespace with it.
func PIDs(path string) ([]int, error) {
	want, err := Inode(path)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ino, err := Inode(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && ino == want {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// List names the namespaces in Dir that start with prefix.
func List(prefix string) ([]string, error) {
	entries, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Signal sends sig to pid only if it still runs inside the namespace at
// path, so a pid reused by an unrelated process is never signalled.
func Signal(pid int, path string, sig syscall.Signal) bool {
	if !PIDIn(pid, path) {
		return false
	}
	return syscall.Kill(pid, sig) == nil
}
