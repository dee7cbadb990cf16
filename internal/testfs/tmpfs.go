// Package testfs gives tests small real file systems to fill: a tmpfs of a
// few MiB runs out of space in milliseconds, where the test machine's disk
// would take minutes and starve everything else on it.
package testfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of the given size ("4m", as mount's size= option)
// on a new directory and unmounts it when the test ends. Mounting needs
// root: outside CI the test is skipped without it; under CI=true (which
// runs as root) it fails instead, so a disk-full test cannot pass by not
// running.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a %s tmpfs on %s (CI runs as root; a disk-full test must not skip): %v", size, dir, err)
		}
		t.Skipf("needs root to mount a %s tmpfs (%v); CI=true makes this a failure", size, err)
	}
	t.Cleanup(func() {
		// MNT_DETACH: a daemon the test forgot to stop must not keep the
		// mount (and the test's temporary directory) busy.
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// Free is the bytes available to an unprivileged process on the file
// system holding dir.
func Free(t testing.TB, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// Fill writes the file path until about leave bytes of its file system
// are free, while something else (a datanode storing a block) may be
// writing to the same file system: if the space runs out first, the file
// is cut back by leave bytes, so leave bytes are free at the end either
// way. A single write of Free - leave bytes failed with ENOSPC in a CI run
// when a datanode's packets landed between the statfs and the write.
func Fill(t testing.TB, path string, leave int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := Free(t, filepath.Dir(path)) - leave
	chunk := make([]byte, 64<<10)
	var n int64
	for n < want {
		w, err := f.Write(chunk[:min(int64(len(chunk)), want-n)])
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			if err := f.Truncate(max(n-leave, 0)); err != nil {
				t.Fatalf("cut back %s after the disk filled: %v", path, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("fill %s: %v", path, err)
		}
	}
}
