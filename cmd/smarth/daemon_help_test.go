package main

import (
	"strings"
	"testing"
)

// TestDaemonHelpPointsToConfigReference: each daemon's --help sends the
// reader to docs/config.md (generated from the typed configs by
// internal/configdoc), the page with every key, its default and meaning.
func TestDaemonHelpPointsToConfigReference(t *testing.T) {
	for _, d := range []string{"namenode", "datanode", "resourcemanager", "nodemanager"} {
		code, out, errText := runSmarth(d, "--help")
		if code != 0 {
			t.Fatalf("smarth %s --help: exit %d: %s", d, code, errText)
		}
		flat := strings.Join(strings.Fields(out), " ")
		if !strings.Contains(flat, "every key, its default and meaning in docs/config.md") {
			t.Errorf("smarth %s --help does not point to docs/config.md:\n%s", d, out)
		}
		if strings.Contains(flat, "config contract") {
			t.Errorf("smarth %s --help still names an undocumented config contract", d)
		}
	}
}
