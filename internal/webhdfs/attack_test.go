package webhdfs_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/testcluster"
)

// redirectOf returns the Location of a namenode redirect and the token in
// it.
func redirectOf(t *testing.T, r resp) (*url.URL, string) {
	t.Helper()
	if r.code != 307 {
		t.Fatalf("want a redirect, got %d %s", r.code, r.body)
	}
	u, err := url.Parse(r.hdr.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u, u.Query().Get("delegation")
}

// withPath is u (a datanode URL) re-pointed at path, op and extra
// parameters, keeping its token.
func withPath(u *url.URL, path, op string, kv ...string) string {
	v := *u
	v.Path = "/webhdfs/v1" + path
	q := v.Query()
	q.Set("op", op)
	for _, s := range kv {
		k, val, _ := strings.Cut(s, "=")
		q.Set(k, val)
	}
	v.RawQuery = q.Encode()
	return v.String()
}

// Hole 4 (issue 23): the token a WebHDFS redirect carries is good for one
// operation on one path, for minutes, only on the datanode it was sent
// to, never as a credential at the namenode's own door (where it minted a
// fresh one-hour token from OPEN&noredirect=true), and it dies with the
// delegation token it was issued under. bob here is whoever got hold of
// alice's redirect URL (a log, a proxy, a browser history).
func TestAttackRedirectTokenIsSinglePurpose(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster")
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2})
	w := newWeb(t, c)
	admin := c.Client(t)
	if err := admin.Mkdir(t.Context(), "/user/alice", 0o700, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(t.Context(), "/user/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	w.auth = "Bearer " + c.Credential("alice")
	data, other := randBytes(200_000), []byte("alice's other file")
	for p, b := range map[string][]byte{"/user/alice/f": data, "/user/alice/g": other} {
		if r := w.twoStep("PUT", p, "CREATE", b); r.code != 201 {
			t.Fatalf("CREATE %s: %d %s", p, r.code, r.body)
		}
	}
	deleg := w.op("GET", "/", "GETDELEGATIONTOKEN", "renewer=alice").json(t)["Token"].(map[string]any)["urlString"].(string)
	w.auth = ""
	loc, redirect := redirectOf(t, w.op("GET", "/user/alice/f", "OPEN", "delegation="+deleg))

	// Short-lived: minutes, not the hour it was.
	_, rest, _ := strings.Cut(redirect, ":tok.")
	payload, _, _ := strings.Cut(rest, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var tok auth.Token
	if err != nil || json.Unmarshal(raw, &tok) != nil {
		t.Fatalf("redirect token %q does not decode: %v", redirect, err)
	}
	if life := time.Duration(tok.Expires-tok.Issued) * time.Millisecond; life > 15*time.Minute {
		t.Errorf("a redirect token lives %v; want minutes", life)
	}

	// Not a credential at the namenode: it mints nothing, lists nothing.
	w.auth = "Bearer " + redirect
	w.op("GET", "/user/alice/f", "OPEN", "noredirect=true").remote(t, 401, "SecurityException")
	w.op("GET", "/", "GETDELEGATIONTOKEN").remote(t, 401, "SecurityException")
	w.op("GET", "/user/alice", "LISTSTATUS").remote(t, 401, "SecurityException")
	w.auth = ""
	w.op("GET", "/user/alice/f", "OPEN", "noredirect=true", "delegation="+redirect).remote(t, 403, "InvalidToken")

	// On the datanode: not for another path, nor another operation.
	w.do("GET", withPath(loc, "/user/alice/g", "OPEN"), nil).remote(t, 401, "SecurityException")
	w.do("PUT", withPath(loc, "/user/alice/f", "CREATE", "overwrite=true"), []byte("bob was here")).remote(t, 401, "SecurityException")
	w.do("PUT", withPath(loc, "/user/alice/planted", "CREATE"), []byte("bob was here")).remote(t, 401, "SecurityException")
	w.do("GET", withPath(loc, "/user/alice/f", "GETFILECHECKSUM"), nil).remote(t, 401, "SecurityException")
	if _, err := admin.Stat(t.Context(), "/user/alice/planted"); err == nil {
		t.Error("a redirect token for OPEN created /user/alice/planted")
	}

	// Its own operation works, until the delegation token is cancelled.
	if r := w.do("GET", loc.String(), nil); r.code != 200 || !bytes.Equal(r.body, data) {
		t.Fatalf("the redirect itself: %d, %d bytes", r.code, len(r.body))
	}
	_, second := redirectOf(t, w.op("GET", "/user/alice/f", "OPEN", "delegation="+deleg))
	w.auth = "Bearer " + c.Credential("alice")
	if r := w.op("PUT", "/", "CANCELDELEGATIONTOKEN", "token="+deleg); r.code != 200 {
		t.Fatalf("CANCELDELEGATIONTOKEN: %d %s", r.code, r.body)
	}
	w.auth = ""
	q := loc.Query()
	q.Set("delegation", second)
	loc.RawQuery = q.Encode()
	w.do("GET", loc.String(), nil).remote(t, 401, "SecurityException")
}
