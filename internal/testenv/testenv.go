// Package testenv decides, for tests, what a missing prerequisite (root,
// network namespaces, cgroups, a tool CI installs) means: outside CI the
// test skips and says what it needs; under CI (CI=true, as .ci/run runs)
// the test fails, because CI provides every prerequisite and a skip there
// would pass without ever running the check.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips t with the message outside CI and fails it under CI.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI=true: CI provides this prerequisite, so a skip would hide the test)", msg)
	}
	t.Skip(msg)
}

// RequireRoot calls SkipOrFail unless the test runs as root.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		SkipOrFail(t, "needs root: %s", why)
	}
}
