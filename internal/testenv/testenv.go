// Package testenv decides what a test does when the machine lacks
// something the test needs: root, a tool such as iproute2, network
// namespaces, a cgroup controller, a real block device. Outside CI it
// skips with the reason, so a developer's laptop stays usable; under
// CI=true it fails, because .ci/run runs as root on Debian and installs
// the tools, and a CI run that skipped the test would pass without
// running it. The webui and webhdfs tests apply the same rule to
// Chromium, Java, Maven and python3-venv.
//
// It leaves to each test the probing itself (what "cannot create a
// namespace" looks like differs per test).
//
// It also gives tests the machine's ports a restarted server can count on
// getting back (RestartablePorts).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run under CI (CI=true, as .ci/run sets).
func CI() bool { return os.Getenv("CI") == "true" }

// Missing ends the test for a missing prerequisite: t.Skip outside CI,
// t.Fatal under CI.
func Missing(t testing.TB, format string, a ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, a...)
	if CI() {
		t.Fatalf("%s (CI=true: a missing prerequisite fails the test instead of skipping it)", msg)
	}
	t.Skip(msg)
}

// NeedRoot ends the test (Missing) unless it runs as root.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root to %s", why)
	}
}

// NeedTools ends the test (Missing) unless every tool is on PATH.
func NeedTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			Missing(t, "%s is not installed (not in PATH)", tool)
		}
	}
}
