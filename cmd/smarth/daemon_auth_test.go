package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Daemons are secure unless their config says otherwise: a datanode,
// resource manager or node manager started without the key, secret or
// credential that needs exits with a usage error (2) naming the key and
// where to get it, before binding anything.
func TestDaemonsWithoutSecretsRefuseToStart(t *testing.T) {
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(t.TempDir(), "no-token"))
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"datanode", "--data-dir", filepath.Join(dir, "dn")}, []string{"datanode_key_file: not set", "meta_dir/datanode.key"}},
		{[]string{"datanode", "--data-dir", filepath.Join(dir, "dn"), "--datanode-key-file", filepath.Join(dir, "dn.key")},
			[]string{filepath.Join(dir, "dn.key") + " does not exist"}},
		{[]string{"resourcemanager"}, []string{"auth_secret_file: not set", "meta_dir/auth.key", "token_file: not set", "smarth login"}},
		{[]string{"nodemanager", "--work-dir", filepath.Join(dir, "nm")}, []string{"token_file: not set", "smarth login"}},
		{[]string{"namenode", "--meta-dir", filepath.Join(dir, "nn"), "--auth", "none"}, []string{`auth: "none" must be`}},
	} {
		code, _, stderr := runSmarth(tc.args...)
		if code != 2 {
			t.Errorf("smarth %s: exit %d (%s), want 2", strings.Join(tc.args, " "), code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("smarth %s: %q does not say %q", strings.Join(tc.args, " "), stderr, w)
			}
		}
	}
}
