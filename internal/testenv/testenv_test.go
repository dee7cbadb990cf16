package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Missing skips outside CI and fails under CI=true. Run in a child test
// process so the failure can be observed.
func TestMissingFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "the frobnicator is missing")
		return
	}
	for _, ci := range []string{"true", ""} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		switch {
		case ci == "true" && (err == nil || !strings.Contains(string(out), "--- FAIL") || !strings.Contains(string(out), "frobnicator")):
			t.Errorf("CI=true: want a failure naming the prerequisite; err %v, output:\n%s", err, out)
		case ci == "" && (err != nil || !strings.Contains(string(out), "--- SKIP")):
			t.Errorf("outside CI: want a skip; err %v, output:\n%s", err, out)
		}
	}
}
