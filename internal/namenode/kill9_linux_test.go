package namenode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/namenode/journal"
)

// checkSegmentFlags checks the kernel's view of how process pid writes its
// edit log: kill -9 cannot tell a direct write without O_DSYNC (the
// device's cache outlives the process), the descriptor's flags can.
func checkSegmentFlags(t *testing.T, pid int, editLogIO string) {
	t.Helper()
	flags := segmentFlags(t, pid)
	want := 0
	if editLogIO == "direct" {
		want = syscall.O_DIRECT | syscall.O_DSYNC
	}
	if got := flags & (syscall.O_DIRECT | syscall.O_DSYNC); got != want {
		t.Fatalf("edit_log_io: %s, segment opened with flags %#o (O_DIRECT|O_DSYNC part %#o, want %#o)", editLogIO, flags, got, want)
	}
}

// segmentFlags is the open flags of the edit-log segment process pid
// writes (the one descriptor open on an edits_ file for writing).
func segmentFlags(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil || !strings.Contains(filepath.Base(target), "edits_") {
			continue
		}
		fd, _ := strconv.Atoi(e.Name())
		flags, err := journal.FDFlags(pid, fd)
		if err != nil {
			t.Fatal(err)
		}
		if flags&(os.O_WRONLY|os.O_RDWR) != 0 {
			return flags
		}
	}
	t.Fatalf("process %d has no edit-log segment open for writing", pid)
	return 0
}
