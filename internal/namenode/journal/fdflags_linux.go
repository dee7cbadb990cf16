package journal

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FDFlags reads the open flags of process pid's descriptor fd from
// /proc: what the kernel holds, for tests that must know a segment is
// really written directly and synchronously.
func FDFlags(pid, fd int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			f, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("/proc/%d/fdinfo/%d has no flags line", pid, fd)
}
