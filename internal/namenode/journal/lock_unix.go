//go:build unix

package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"smarth/internal/diskperm"
)

// LockDir takes an exclusive lock on dir (a file "in_use.lock" in it,
// holding the owner's pid), so that two namenodes never write one edit
// log. The lock goes away with the process, even after kill -9.
func LockDir(dir string) (release func() error, err error) {
	if err := os.MkdirAll(dir, diskperm.Dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "in_use.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, diskperm.File)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(owner); perr != nil {
				owner = "unknown"
			}
			return nil, fmt.Errorf("%s is in use by another namenode (pid %s)", dir, owner)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() error {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return f.Close()
	}, nil
}
