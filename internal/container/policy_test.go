package container

import (
	"os"
	"strings"
	"testing"
)

// TestPolicyRefusesRootBannedAndLowUsers: run_as_user may not be root or
// banned (but may be below min_user_id: the operator named it); a
// submitter's own account is used only when it is not root, not banned
// and at or above min_user_id, and otherwise the task falls back to
// run_as_user with the reason.
func TestPolicyRefusesRootBannedAndLowUsers(t *testing.T) {
	for _, name := range []string{"root", "bin", "nobody", "daemon"} {
		if _, err := lookup(name); err != nil {
			if os.Getenv("CI") == "true" { // Debian has them all
				t.Fatalf("CI=true and this host has no account %s: %v", name, err)
			}
			t.Skipf("this host has no account %s: %v", name, err)
		}
	}
	for user, want := range map[string]string{"root": "has id 0", "bin": "is banned"} {
		p := DefaultPolicy()
		p.RunAsUser = user
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run_as_user %s: %v, want %q", user, err, want)
		}
	}
	p := DefaultPolicy()
	p.RunAsUser = "daemon" // uid 1: allowed, named on purpose
	if err := p.Validate(); err != nil {
		t.Errorf("run_as_user daemon: %v", err)
	}
	p = DefaultPolicy()
	for submitter, why := range map[string]string{
		"root":       "has id 0",
		"bin":        "is banned",
		"daemon":     "below the minimum allowed 1000",
		"no-such-us": "unknown user",
	} {
		id, reason, err := p.Resolve(submitter)
		if err != nil || id.Name != "nobody" || !strings.Contains(reason, why) {
			t.Errorf("submitter %s: ran as %+v (%q, %v), want nobody because %q", submitter, id, reason, err, why)
		}
	}
	// Control: an allowed account of the submitter's name is used.
	p.MinUserID = 1
	if id, reason, err := p.Resolve("daemon"); err != nil || id.Name != "daemon" || reason != "" {
		t.Errorf("submitter daemon with min_user_id 1: %+v %q %v", id, reason, err)
	}
	p.RunAs = RunAsLocalUser
	if id, _, err := p.Resolve("daemon"); err != nil || id.Name != "nobody" {
		t.Errorf("run_as local-user: %+v %v", id, err)
	}
	p.RunAs = "me"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `run_as "me"`) {
		t.Errorf("run_as me: %v", err)
	}
}
