package namenode

import (
	"errors"
	"path/filepath"
	"testing"

	"smarth/internal/auth"
)

// TestHADelegationTokenStateReachesEveryMember: a delegation token
// cancelled on the active is refused by every member, and so by the
// next active after a failover; a renewal made on the old active holds
// on the new one. Renewals and cancellations used to live in the
// active's own file, so a revoked token worked again after a failover
// and a renewed one died at its first date. The control: a token of the
// same kind that was not cancelled is accepted by every member, so the
// refusals are not a failure to verify tokens at all.
func TestHADelegationTokenStateReachesEveryMember(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "auth.key")
	if _, err := auth.LoadOrCreateKey(secret); err != nil {
		t.Fatal(err)
	}
	g := startHAGroup(t, 3, func(c *Config) { c.Auth, c.AuthSecretFile = auth.Secure, secret })
	activeOf := func(closed int) int {
		l := -1
		waitFor(t, "an active member", func() bool {
			for i, nn := range g.nns {
				if i != closed && nn.ha.active.Load() {
					l = i
					return true
				}
			}
			return false
		})
		return l
	}
	l := activeOf(-1)
	web := g.nns[l].ident.web
	issue := func(user string) string {
		tok, err := web.IssueDelegation(user, "yarn", auth.KindWebHDFS, "")
		if err != nil || tok == "" {
			t.Fatalf("delegation token for %s: %q, %v", user, tok, err)
		}
		return tok
	}
	cancelled, kept := issue("alice"), issue("bob")
	if err := web.Cancel(cancelled, "alice"); err != nil {
		t.Fatal(err)
	}
	exp, err := web.Renew(kept, "yarn")
	if err != nil {
		t.Fatal(err)
	}
	keptTok, err := web.parseToken(kept)
	if err != nil {
		t.Fatal(err)
	}
	for i, nn := range g.nns {
		waitFor(t, "member "+g.cfgs[i].HA.ID+" to refuse the cancelled token", func() bool {
			_, err := nn.ident.verifyCall(cancelled)
			return errors.Is(err, auth.ErrUnauthenticated)
		})
		if u, err := nn.ident.verifyCall(kept); err != nil || u != "bob" {
			t.Fatalf("member %s, the token not cancelled: %q, %v", g.cfgs[i].HA.ID, u, err)
		}
	}
	for i, nn := range g.nns {
		waitFor(t, "member "+g.cfgs[i].HA.ID+" to hold the renewal", func() bool {
			e, ok := tokenLog{nn}.delegationToken(keptTok.Seq)
			return ok && e == exp
		})
	}

	if err := g.nns[l].Close(); err != nil {
		t.Logf("close of the active: %v", err)
	}
	nl := activeOf(l)
	if _, err := g.nns[nl].ident.verifyCall(cancelled); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("the new active %s accepts the token cancelled on the old one: %v", g.cfgs[nl].HA.ID, err)
	}
	// The new active logs too: a cancellation there takes.
	if err := g.nns[nl].ident.web.Cancel(kept, "yarn"); err != nil {
		t.Fatalf("cancel on the new active: %v", err)
	}
	if _, err := g.nns[nl].ident.verifyCall(kept); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("a token cancelled on the new active is accepted there: %v", err)
	}
}

// TestDelegationTokenStateSurvivesRestart: a single namenode's
// renewals and cancellations come back from its journal and from its
// image (a checkpoint between the two restarts).
func TestDelegationTokenStateSurvivesRestart(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = auth.Secure
	nn := startNN(t, cfg)
	web := nn.ident.web
	cancelled, err := web.IssueDelegation("alice", "yarn", auth.KindWebHDFS, "")
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := web.IssueDelegation("bob", "yarn", auth.KindWebHDFS, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := web.Cancel(cancelled, "alice"); err != nil {
		t.Fatal(err)
	}
	exp, err := web.Renew(renewed, "yarn")
	if err != nil {
		t.Fatal(err)
	}
	seq := func(tok string) uint64 {
		p, err := web.parseToken(tok)
		if err != nil {
			t.Fatal(err)
		}
		return p.Seq
	}
	check := func(nn *NameNode, when string) {
		t.Helper()
		if _, err := nn.ident.verifyCall(cancelled); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("%s: the cancelled token is accepted: %v", when, err)
		}
		if e, ok := (tokenLog{nn}).delegationToken(seq(renewed)); !ok || e != exp {
			t.Fatalf("%s: the renewal is %d, %v; want %d", when, e, ok, exp)
		}
		if u, err := nn.ident.verifyCall(renewed); err != nil || u != "bob" {
			t.Fatalf("%s: the renewed token: %q, %v", when, u, err)
		}
	}
	check(nn, "before a restart")
	nn.Close()
	nn = startNN(t, cfg)
	check(nn, "after a restart (journal)")
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	nn = startNN(t, cfg)
	check(nn, "after a restart (image)")
}
