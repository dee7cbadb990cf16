package chaos

import (
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"smarth/internal/cluster"
)

// A run given a cluster's home uses the owner's token from that home, as
// `smarth chaos --home H` must on a secure cluster, and
// $SMARTH_TOKEN_FILE still wins when set.
func TestRunUsesTheHomesToken(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	home := t.TempDir()
	tok := cluster.TokenFile(home, u.Username)
	if err := os.MkdirAll(filepath.Dir(tok), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tok, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &run{st: &cluster.State{Home: home}}
	t.Setenv(cluster.EnvTokenFile, "")
	sec, err := r.security()
	if err != nil || sec.TokenFile != tok {
		t.Fatalf("security() = %q, %v; want the home's token %q", sec.TokenFile, err, tok)
	}
	t.Setenv(cluster.EnvTokenFile, "/elsewhere/token")
	if sec, _ = r.security(); sec.TokenFile != "/elsewhere/token" {
		t.Fatalf("with $%s set, security() = %q", cluster.EnvTokenFile, sec.TokenFile)
	}
}
