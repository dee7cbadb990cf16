package tune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readSys(t *testing.T, h Host, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.ProcSys, strings.ReplaceAll(name, ".", "/")))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

func TestSysctlRevertAfterCrash(t *testing.T) {
	h := fakeProcSys(t)
	revertFile := filepath.Join(t.TempDir(), "run", "sysctl.revert")
	s := Sysctls{Root: h.ProcSys, RevertFile: revertFile}
	err := s.Apply(map[string]string{"net.core.busy_read": "50", "net.ipv4.tcp_rmem": "4096 87380 16777216"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, h, "net.core.busy_read"); got != "50" {
		t.Fatalf("busy_read %q after apply", got)
	}
	// The process "crashes" here: nothing restores. A second change is
	// refused until the first is reverted.
	if err := s.Apply(map[string]string{"net.core.busy_poll": "50"}); err == nil || !strings.Contains(err.Error(), "not restored") {
		t.Fatalf("apply over an unrestored change: %v", err)
	}
	// The next start restores from the revert file.
	restarted := Sysctls{Root: h.ProcSys, RevertFile: revertFile}
	old, err := restarted.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != 2 || readSys(t, h, "net.core.busy_read") != "0" || readSys(t, h, "net.ipv4.tcp_rmem") != "4096 131072 6291456" {
		t.Fatalf("after restore: busy_read %q tcp_rmem %q (restored %v)", readSys(t, h, "net.core.busy_read"), readSys(t, h, "net.ipv4.tcp_rmem"), old)
	}
	if _, err := os.Stat(revertFile); !os.IsNotExist(err) {
		t.Fatalf("revert file left after restore: %v", err)
	}
	if old, err := restarted.Restore(); err != nil || old != nil {
		t.Fatalf("restore with nothing to restore: %v %v", old, err)
	}
}

func TestSysctlBadInputLeavesHostAsItWas(t *testing.T) {
	h := fakeProcSys(t)
	revertFile := filepath.Join(t.TempDir(), "sysctl.revert")
	s := Sysctls{Root: h.ProcSys, RevertFile: revertFile}
	cases := map[string]map[string]string{
		"unknown setting":      {"net.core.busy_read": "50", "net.core.bogus": "1"},
		"out of range":         {"net.core.busy_read": "50", "net.core.busy_poll": "5000000"},
		"socket, not a sysctl": {"so_busy_poll": "50"},
	}
	for name, vals := range cases {
		if err := s.Apply(vals); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
		if got := readSys(t, h, "net.core.busy_read"); got != "0" {
			t.Fatalf("%s: busy_read changed to %q", name, got)
		}
		if _, err := os.Stat(revertFile); !os.IsNotExist(err) {
			t.Fatalf("%s: revert file written for a refused change", name)
		}
	}
}

func TestSysctlNoPermissionChangesNothing(t *testing.T) {
	h := fakeProcSys(t)
	// busy_read is writable, busy_poll is not: the check must refuse
	// before busy_read is touched. Root ignores file modes, so make the
	// second file unwritable by replacing it with a directory entry that
	// cannot be opened for writing.
	ro := filepath.Join(h.ProcSys, "net/core/busy_poll")
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Remove(ro); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	revertFile := filepath.Join(t.TempDir(), "sysctl.revert")
	s := Sysctls{Root: h.ProcSys, RevertFile: revertFile}
	err := s.Apply(map[string]string{"net.core.busy_read": "50", "net.core.busy_poll": "50"})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("unwritable sysctl: %v", err)
	}
	if os.Geteuid() != 0 && !strings.Contains(err.Error(), "no permission") {
		t.Fatalf("unwritable sysctl without a permission message: %v", err)
	}
	if got := readSys(t, h, "net.core.busy_read"); got != "0" {
		t.Fatalf("busy_read changed to %q although busy_poll could not be", got)
	}
	if _, err := os.Stat(revertFile); !os.IsNotExist(err) {
		t.Fatal("revert file left after a refused change")
	}
}
