package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Up gives its datanodes a socket directory under the home, 0755 so that
// every local user's client reaches it; where the datanodes would refuse
// the path (a directory above it others may write, a path too long for
// a unix socket) it leaves short-circuit reads off and says why, rather
// than failing the whole cluster.
func TestPrepareSockets(t *testing.T) {
	var out strings.Builder
	o := &Options{Out: &out}
	home, err := os.MkdirTemp("", "sc") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	p := o.prepareSockets(layout{home})
	if want := filepath.Join(home, "sockets", "dn__PORT.sock"); p != want {
		t.Fatalf("socket path %q, want %q", p, want)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("socket directory: %v %v, want 0755", fi.Mode(), err)
	}

	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if p := o.prepareSockets(layout{filepath.Join(open, "home")}); p != "" {
		t.Errorf("under a world-writable directory: socket path %q, want none", p)
	}
	if !strings.Contains(out.String(), "short-circuit local reads off: the path component: '"+open+"'") ||
		!strings.Contains(out.String(), "is world-writable") {
		t.Errorf("output %q, want the reason short-circuit reads are off", out.String())
	}

	out.Reset()
	long := filepath.Join(t.TempDir(), strings.Repeat("h", 100))
	if p := o.prepareSockets(layout{long}); p != "" || !strings.Contains(out.String(), "more than a unix socket's 107") {
		t.Errorf("a home too long for a socket path: %q, output %q", p, out.String())
	}
}

// A client of the local cluster's namenode uses the path cluster.json
// records, unless the cluster's switch or the client's environment turns
// short-circuit reads off; a client of another namenode does not.
func TestClientDomainSocket(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SMARTH_HOME", home)
	t.Setenv(EnvShortCircuitReads, "")
	st := &State{Home: home, NameNode: "127.0.0.1:8020", DomainSocketPath: "/run/smarth/dn_PORT.sock"}
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	if got := ClientDomainSocket("localhost:8020"); got != st.DomainSocketPath {
		t.Errorf("client of the local cluster: %q, want %q", got, st.DomainSocketPath)
	}
	if got := ClientDomainSocket("10.0.0.9:8020"); got != "" {
		t.Errorf("client of another namenode: %q, want none", got)
	}
	t.Setenv(EnvShortCircuitReads, "false")
	if got := ClientDomainSocket("127.0.0.1:8020"); got != "" {
		t.Errorf("with %s=false: %q, want none", EnvShortCircuitReads, got)
	}
	t.Setenv(EnvShortCircuitReads, "")
	off := false
	st.ShortCircuitReads = &off
	if err := st.save(); err != nil {
		t.Fatal(err)
	}
	if got := ClientDomainSocket("127.0.0.1:8020"); got != "" {
		t.Errorf("with short_circuit_reads: false: %q, want none", got)
	}
}
