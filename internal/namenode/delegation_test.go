package namenode

import (
	"errors"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
)

// hadoopToken decodes a token IssueDelegation returned.
func hadoopToken(t *testing.T, s string) (auth.HadoopToken, auth.DelegationIdentifier) {
	t.Helper()
	ht, err := auth.DecodeHadoopToken(s)
	if err != nil {
		t.Fatalf("the namenode issued no Hadoop token: %v (%q)", err, s)
	}
	id, err := auth.ParseDelegationIdentifier(ht.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	return ht, id
}

// TestHadoopDelegationTokenIssued: GETDELEGATIONTOKEN's token is Hadoop's
// Token with HDFS's identifier: kind, owner, renewer, a week's max date,
// the current master key, a 20-byte HMAC-SHA1 password; and it proves its
// owner.
func TestHadoopDelegationTokenIssued(t *testing.T) {
	id, now := newCacheTestAuth(t)
	s, err := id.web.IssueDelegation("alice", "yarn", auth.KindWebHDFS, "127.0.0.1:8020")
	if err != nil {
		t.Fatal(err)
	}
	ht, did := hadoopToken(t, s)
	if ht.Kind != "WEBHDFS delegation" || ht.Service != "127.0.0.1:8020" || len(ht.Password) != 20 {
		t.Fatalf("token %+v", ht)
	}
	if did.Owner != "alice" || did.Renewer != "yarn" || did.RealUser != "" || did.IssueDate != now.UnixMilli() ||
		did.MaxDate != now.Add(7*24*time.Hour).UnixMilli() || did.MasterKeyID != masterKeyID(*now) || did.Seq < 0 {
		t.Fatalf("identifier %+v", did)
	}
	if u, err := id.verifyCall(s); err != nil || u != "alice" {
		t.Fatalf("verify = %q, %v", u, err)
	}
}

// TestAttackHadoopDelegationToken: as a user holding a valid token of
// their own, every edit is refused: another owner or renewer written into
// the identifier (the password no longer matches), a forged password, a
// master key id not in use, a token of another kind; an expired token; a
// cancelled one at once; and only the named renewer renews.
func TestAttackHadoopDelegationToken(t *testing.T) {
	id, now := newCacheTestAuth(t)
	s, err := id.web.IssueDelegation("alice", "alice", auth.KindWebHDFS, "")
	if err != nil {
		t.Fatal(err)
	}
	ht, did := hadoopToken(t, s)
	refused := func(what, tok, want string) {
		t.Helper()
		u, err := id.verifyCall(tok)
		if !errors.Is(err, auth.ErrUnauthenticated) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: verify = %q, %v; want a refusal saying %q", what, u, err, want)
		}
	}
	edit := func(f func(*auth.DelegationIdentifier)) string {
		d := did
		f(&d)
		e := ht
		e.Identifier = d.Marshal()
		return e.URLString()
	}
	refused("owner edited", edit(func(d *auth.DelegationIdentifier) { d.Owner = "hdfs" }), "password doesn't match")
	refused("renewer edited", edit(func(d *auth.DelegationIdentifier) { d.Renewer = "bob" }), "password doesn't match")
	refused("max date edited", edit(func(d *auth.DelegationIdentifier) { d.MaxDate += int64(365 * 24 * time.Hour / time.Millisecond) }), "password doesn't match")
	refused("future master key", edit(func(d *auth.DelegationIdentifier) { d.MasterKeyID++ }), "Unable to find master key")
	refused("stale master key", edit(func(d *auth.DelegationIdentifier) { d.MasterKeyID -= 10 }), "Unable to find master key")
	forged := ht
	forged.Password = append([]byte(nil), ht.Password...)
	forged.Password[0] ^= 1
	refused("forged password", forged.URLString(), "password doesn't match")
	other := ht
	other.Kind = "HDFS_BLOCK_TOKEN"
	refused("another kind", other.URLString(), "not authenticated")
	// The password is the identifier's HMAC under the master key: a
	// password from another cluster's secret does not pass.
	foreign := ht
	foreign.Password = auth.DelegationPassword(auth.DelegationMasterKey([]byte("another cluster's identity secret"), did.MasterKeyID), ht.Identifier)
	refused("another secret's password", foreign.URLString(), "password doesn't match")

	// Only the renewer renews; an owner who is not the renewer may not.
	bobs, _ := id.web.IssueDelegation("bob", "yarn", auth.KindWebHDFS, "")
	if _, err := id.web.Renew(bobs, "bob"); err == nil || !strings.Contains(err.Error(), "non-matching renewer yarn") {
		t.Fatalf("renew by the owner, not the renewer: %v", err)
	}
	if _, err := id.web.Renew(bobs, "yarn"); err != nil {
		t.Fatalf("renew by the renewer: %v", err)
	}

	// Expired: a day after issue without renewal.
	*now = now.Add(delegationRenewInterval + time.Second)
	refused("expired", s, "expired")
	*now = now.Add(-2 * time.Second)
	if u, err := id.verifyCall(s); err != nil || u != "alice" {
		t.Fatalf("live again before its expiry: %q, %v", u, err)
	}
	if err := id.web.Cancel(s, "alice"); err != nil {
		t.Fatal(err)
	}
	refused("cancelled", s, "cancelled")
	if _, err := id.web.Renew(s, "alice"); err == nil {
		t.Fatal("a cancelled token was renewed")
	}
}

// TestHadoopDelegationTokenSurvivesRestart: a namenode started again on
// the same meta_dir and identity secret accepts the tokens it issued,
// keeps their renewals, and keeps refusing the cancelled ones.
func TestHadoopDelegationTokenSurvivesRestart(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	start := func() *identity {
		id := &identity{mode: auth.Secure, secret: []byte("0123456789abcdef0123456789abcdef"), superuser: "hdfs"}
		web, err := newWebAuth(id, dir, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		id.web = web
		return id
	}
	id := start()
	kept, _ := id.web.IssueDelegation("alice", "alice", auth.KindWebHDFS, "")
	renewed, _ := id.web.IssueDelegation("alice", "alice", auth.KindWebHDFS, "")
	cancelled, _ := id.web.IssueDelegation("alice", "alice", auth.KindWebHDFS, "")
	if err := id.web.Cancel(cancelled, "alice"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(20 * time.Hour)
	if _, err := id.web.Renew(renewed, "alice"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour) // across a master key roll: the old key still checks

	id = start()
	if u, err := id.verifyCall(kept); err != nil || u != "alice" {
		t.Fatalf("after restart, a live token: %q, %v", u, err)
	}
	if _, err := id.verifyCall(cancelled); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("after restart, a cancelled token: %v", err)
	}
	now = now.Add(5 * time.Hour) // past the first day: only the renewed one lives
	if _, err := id.verifyCall(kept); !errors.Is(err, auth.ErrTokenExpired) {
		t.Fatalf("after restart, an unrenewed token past its day: %v", err)
	}
	if u, err := id.verifyCall(renewed); err != nil || u != "alice" {
		t.Fatalf("after restart, a renewed token: %q, %v", u, err)
	}
}
