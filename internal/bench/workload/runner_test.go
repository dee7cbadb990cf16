package workload

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// A missing --home is said once, before any cluster; a combination that
// fails makes the run fail (it used to be logged and the run exit 0 with
// empty columns).
func TestRunFailsWhenHomeMissingOrCombinationsFail(t *testing.T) {
	w, err := Load("../../../testbed/workloads/w1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	combos, err := ParseCombos("nocache,cllru")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nosuch")
	if _, err := Run(context.Background(), w, Options{Home: missing, Combos: combos, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), missing+": no such directory") {
		t.Errorf("--home missing: %v, want an error naming %s", err, missing)
	}
	// A binary that does not exist: every cluster fails to start.
	res, err := Run(context.Background(), w, Options{Home: t.TempDir(), Binary: filepath.Join(t.TempDir(), "no-smarth"), Combos: combos, Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "2 of 2 combinations failed") {
		t.Errorf("every combination failed to start: %v, want an error saying 2 of 2 failed", err)
	}
	if res == nil || len(res.Combos) != 2 || res.Combos[0].Error == "" {
		t.Errorf("the result still lists both combinations with their errors: %+v", res)
	}
}
