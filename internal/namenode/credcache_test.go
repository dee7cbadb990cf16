package namenode

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/webhdfs"
)

func newCacheTestAuth(t *testing.T) (*identity, *time.Time) {
	t.Helper()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	id := &identity{mode: auth.Secure, secret: []byte("0123456789abcdef0123456789abcdef"), superuser: "hdfs"}
	web, err := newWebAuth(id, t.TempDir(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	id.web = web
	return id, &now
}

// A cached delegation token is still refused on the first call after it
// is cancelled, and after it expires: the cache holds the signature check
// only.
func TestCredCacheHonoursCancellationAndExpiry(t *testing.T) {
	id, now := newCacheTestAuth(t)
	tok, err := id.web.IssueDelegation("alice", "alice", auth.KindWebHDFS, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call is answered from the cache
		if u, err := id.verifyCall(tok); err != nil || u != "alice" {
			t.Fatalf("verify live token = %q, %v", u, err)
		}
	}
	if _, ok := id.creds.get(tok); !ok {
		t.Fatal("a verified token was not cached")
	}
	if err := id.web.Cancel(tok, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := id.verifyCall(tok); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("cancelled token accepted from the cache: %v", err)
	}

	redirect := id.web.IssueRedirect("bob", webhdfs.RedirectScope{Op: "OPEN"})
	if u, err := id.verifyCall(redirect); err != nil || u != "bob" {
		t.Fatalf("verify redirect token = %q, %v", u, err)
	}
	*now = now.Add(redirectLifetime + time.Second)
	if _, err := id.verifyCall(redirect); !errors.Is(err, auth.ErrTokenExpired) {
		t.Fatalf("expired redirect token accepted from the cache: %v", err)
	}
}

// A renewal moves a cached delegation token's expiry: the renewed expiry,
// not the one signed into the token, decides.
func TestCredCacheSeesRenewal(t *testing.T) {
	id, now := newCacheTestAuth(t)
	tok, err := id.web.IssueDelegation("alice", "alice", auth.KindWebHDFS, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := id.verifyCall(tok); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(delegationRenewInterval - time.Minute)
	if _, err := id.web.Renew(tok, "alice"); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(2 * time.Minute) // past the signed expiry, within the renewed one
	if u, err := id.verifyCall(tok); err != nil || u != "alice" {
		t.Fatalf("renewed token refused: %q, %v", u, err)
	}
}

// Bad credentials are refused every time and never cached; user
// credentials are; the cache stays bounded however many tokens arrive.
func TestCredCacheRefusesAndIsBounded(t *testing.T) {
	id, _ := newCacheTestAuth(t)
	good := auth.UserCredential(id.secret, "carol")
	forged := auth.UserCredential([]byte("another secret, not this namenode's"), "carol")
	for range 2 {
		if u, err := id.verifyCall(good); err != nil || u != "carol" {
			t.Fatalf("verify = %q, %v", u, err)
		}
		if _, err := id.verifyCall(forged); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("forged credential accepted: %v", err)
		}
	}
	if _, ok := id.creds.get(forged); ok {
		t.Fatal("a forged credential was cached")
	}
	for i := range maxCachedCreds + 10 {
		if _, err := id.verifyCall(id.web.IssueRedirect(fmt.Sprintf("u%d", i), webhdfs.RedirectScope{Op: "OPEN"})); err != nil {
			t.Fatal(err)
		}
	}
	if n := id.creds.len(); n > maxCachedCreds || n == 0 {
		t.Fatalf("cache holds %d credentials, bound %d", n, maxCachedCreds)
	}
	if u, err := id.verifyCall(good); err != nil || u != "carol" {
		t.Fatalf("verify after eviction = %q, %v", u, err)
	}

	// Without WebHDFS (the fuzz tests' identity) user credentials are cached too.
	bare := &identity{mode: auth.Secure, secret: id.secret}
	for range 2 {
		if u, err := bare.verifyCall(good); err != nil || u != "carol" {
			t.Fatalf("bare verify = %q, %v", u, err)
		}
		if _, err := bare.verifyCall(forged); err == nil {
			t.Fatal("bare: forged credential accepted")
		}
	}
}

// verifyCall checks cred as the credential of a GetFileInfo call naming
// no path, from no peer in particular.
func (id *identity) verifyCall(cred string) (string, error) {
	return id.verify(context.Background(), cred, "/smarth.dfs.ClientProtocol/GetFileInfo", nil)
}
