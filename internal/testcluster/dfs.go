package testcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// DFS is a running test file system, in-process (*Cluster) or as child
// processes (*Procs). Lifecycle methods fail the test that started the
// cluster if they cannot do what they say.
type DFS interface {
	NameNodeAddr() string
	NumDataNodes() int
	// Client returns a client of the cluster, closed when t ends.
	Client(t testing.TB, opts ...ClientOption) *client.FileSystem

	StopDataNode(i int)    // graceful
	KillDataNode(i int)    // crash: no clean-up, connections cut
	RestartDataNode(i int) // same data dir; waits until registered again
	// RestartNameNode stops the namenode and starts it again on the same
	// address and metadata, then waits until every running datanode is
	// registered again and safe mode is off.
	RestartNameNode()

	// WaitFor polls cond until it holds; on timeout it fails t with
	// "timed out waiting for <what>".
	WaitFor(t testing.TB, what string, cond func() bool)
	// WaitReplication waits until every block of path has exactly r live
	// replicas.
	WaitReplication(t testing.TB, path string, r int)
	// WaitLive waits until exactly n datanodes are live at the namenode.
	WaitLive(t testing.TB, n int)

	// Credentials and TLS, for harnesses and tests that make their own
	// clients and daemons (mrtest, the CLI tests): see base's methods.
	Credential(user string) string
	TokenFile(t testing.TB, user string) string
	IdentitySecretFile() string
	ClientTLS() *tls.Config
	CAFile() string
	Wire(t testing.TB, name string) pki.Config
}

var (
	_ DFS = (*Cluster)(nil)
	_ DFS = (*Procs)(nil)
)

// base holds what both implementations share: options, logs, and a client
// used by the Wait helpers.
type base struct {
	t    testing.TB // the test that started the cluster
	opts Options
	logs *logs
	addr func() string // the namenode's current address

	adminOnce sync.Once
	admin     *client.FileSystem
	adminErr  error
}

func (b *base) NumDataNodes() int { return b.opts.DataNodes }

func (b *base) Client(t testing.TB, opts ...ClientOption) *client.FileSystem {
	t.Helper()
	if b.opts.Links != nil {
		opts = append([]ClientOption{WithDial(b.opts.Links.dialer("client"))}, opts...)
	}
	fs, err := client.New(b.opts.newClientConfig(b.addr(), b.logs.logger("client"), opts))
	if err != nil {
		t.Fatalf("testcluster: new client: %v", err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

// adminClient is a client owned by the cluster (closed with it).
func (b *base) adminClient() *client.FileSystem {
	b.adminOnce.Do(func() {
		b.admin, b.adminErr = client.New(b.opts.newClientConfig(b.addr(), b.logs.logger("admin-client"), nil))
	})
	if b.adminErr != nil {
		b.t.Fatalf("testcluster: admin client: %v", b.adminErr)
	}
	return b.admin
}

func (b *base) closeAdmin() {
	if b.admin != nil {
		b.admin.Close()
	}
}

func (b *base) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if err := b.waitFor(what, cond); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every 20ms for up to WaitTimeout.
func (b *base) waitFor(what string, cond func() bool) error {
	deadline := time.Now().Add(b.opts.WaitTimeout)
	for {
		if cond() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s (after %v)", what, b.opts.WaitTimeout)
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a condition with a deadline
	}
}

func (b *base) WaitReplication(t testing.TB, path string, r int) {
	t.Helper()
	var last string
	err := b.waitFor(fmt.Sprintf("%d replicas of every block of %s", r, path), func() bool {
		ok, state := b.replicated(path, r)
		last = state
		return ok
	})
	if err != nil {
		t.Fatalf("%v; last seen: %s", err, last)
	}
}

// replicated reports whether every block of path has exactly r live
// replicas, and a description of what it saw.
func (b *base) replicated(path string, r int) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fs := b.adminClient()
	st, err := fs.Stat(ctx, path)
	if err != nil {
		return false, err.Error()
	}
	locs, err := fs.BlockLocations(ctx, path, 0, max(st.Size, 1))
	if err != nil {
		return false, err.Error()
	}
	ok := true
	state := fmt.Sprintf("%d blocks, replicas per block:", len(locs))
	for _, l := range locs {
		state += fmt.Sprintf(" %v", l.Hosts)
		if len(l.Hosts) != r {
			ok = false
		}
	}
	return ok, state
}

func (b *base) WaitLive(t testing.TB, n int) {
	t.Helper()
	var last []string
	err := b.waitFor(fmt.Sprintf("%d live datanodes", n), func() bool {
		live, err := b.liveHosts()
		last = live
		return err == nil && len(live) == n
	})
	if err != nil {
		t.Fatalf("%v; live: %v", err, last)
	}
}

// liveHosts asks the namenode which datanodes are live.
func (b *base) liveHosts() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dns, err := b.adminClient().Datanodes(ctx, dfspb.DatanodeState_LIVE)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, d := range dns {
		if d.GetState() == dfspb.DatanodeState_LIVE {
			hosts = append(hosts, d.GetHostname())
		}
	}
	slices.Sort(hosts)
	return hosts, nil
}

// waitRegistered waits until every host in want is live at the namenode
// and safe mode is off.
func (b *base) waitRegistered(want []string) error {
	var last string
	err := b.waitFor(fmt.Sprintf("datanodes %v registered and safe mode off", want), func() bool {
		live, err := b.liveHosts()
		if err != nil {
			last = err.Error()
			return false
		}
		for _, h := range want {
			if !slices.Contains(live, h) {
				last = fmt.Sprintf("live: %v", live)
				return false
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := b.adminClient().Namenode().SetSafeMode(ctx, &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
		if err != nil {
			last = err.Error()
			return false
		}
		if r.GetOn() {
			last = "safe mode: " + r.GetReason()
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%v; last seen: %s", err, last)
	}
	return nil
}

// Credential is a credential for user on a secure cluster ("" on a Simple one),
// for harnesses that build their own clients (mrtest).
func (b *base) Credential(user string) string { return b.opts.Credential(user) }

// TokenFile writes user's credential to a 0600 token file (in a
// directory of the test's) and returns its path: what `smarth login`
// gives a user; "" on a Simple cluster.
func (b *base) TokenFile(t testing.TB, user string) string {
	t.Helper()
	cred := b.opts.Credential(user)
	if cred == "" {
		return ""
	}
	path := filepath.Join(t.TempDir(), user+".token")
	if err := auth.WriteTokenFile(path, cred); err != nil {
		t.Fatalf("testcluster: token file: %v", err)
	}
	return path
}

// ClientTLS is the TLS config that trusts the cluster's CA (nil without
// Options.TLS); Client sets it on every client.
func (b *base) ClientTLS() *tls.Config { return b.opts.ClientTLS() }

// CAFile is the cluster's CA certificate ("" without Options.TLS), for
// clients configured by file (the CLI's SMARTH_TLS_CA_FILE).
func (b *base) CAFile() string {
	if b.opts.tlsDir == "" {
		return ""
	}
	ca, _ := pki.CAFiles(b.opts.tlsDir)
	return ca
}

// Wire is the TLS switch for another daemon of the cluster named name (a
// resource manager, a node manager): a certificate from the cluster's CA;
// zero without Options.TLS.
func (b *base) Wire(t testing.TB, name string) pki.Config {
	t.Helper()
	w, err := b.opts.Wire(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// IdentitySecretFile is a secure cluster's identity secret ("" on a Simple one),
// for services that check credentials themselves (the resource manager).
func (b *base) IdentitySecretFile() string {
	if b.opts.keyDir == "" {
		return ""
	}
	return filepath.Join(b.opts.keyDir, "auth.key")
}
