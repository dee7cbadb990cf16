package webhdfs_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"smarth/internal/testcluster"
)

// TestSecure: in secure mode user.name counts for nothing; a credential
// (Authorization) or a delegation token proves the user; tokens renew
// and cancel as HDFS's; the redirect's token cannot be re-pointed at
// another user.
func TestSecure(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2})
	w := newWeb(t, c)
	ctx := context.Background()
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/user/alice", 0o700, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/user/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}

	w.op("GET", "/user/alice", "LISTSTATUS").remote(t, 401, "SecurityException")
	w.op("GET", "/user/alice", "LISTSTATUS", "user.name=alice").remote(t, 401, "SecurityException")
	w.auth = "Bearer alice:0123456789abcdef"
	w.op("GET", "/user/alice", "LISTSTATUS").remote(t, 401, "SecurityException")

	w.auth = "Bearer " + c.Credential("alice")
	if p := w.op("GET", "/", "GETHOMEDIRECTORY", "user.name="+osUser(t)).json(t)["Path"]; p != "/user/alice" {
		t.Fatalf("user.name overrode the credential: %v", p)
	}
	w.op("GET", "/", "GETHOMEDIRECTORY", "doas=bob").remote(t, 403, "AuthorizationException")
	data := randBytes(3<<20 + 5)
	if r := w.twoStep("PUT", "/user/alice/f", "CREATE", data); r.code != 201 {
		t.Fatalf("CREATE with a credential: %d %s", r.code, r.body)
	}

	tok := w.op("GET", "/", "GETDELEGATIONTOKEN", "renewer=alice").json(t)["Token"].(map[string]any)["urlString"].(string)
	w.auth = ""
	if r := w.twoStep("GET", "/user/alice/f", "OPEN", nil, "delegation="+tok); r.code != 200 || !bytes.Equal(r.body, data) {
		t.Fatalf("OPEN with a delegation token: %d, %d bytes", r.code, len(r.body))
	}
	w.op("GET", "/", "GETDELEGATIONTOKEN", "delegation="+tok).remote(t, 400, "IllegalArgumentException")
	// Nor with a token sent as a Bearer credential: neither a delegation
	// token nor a redirect's token (from a leaked URL) mints or renews one.
	w.auth = "Bearer " + tok
	w.op("GET", "/", "GETDELEGATIONTOKEN").remote(t, 403, "AccessControlException")
	w.op("PUT", "/", "RENEWDELEGATIONTOKEN", "token="+tok).remote(t, 403, "AccessControlException")
	redir, _ := url.Parse(w.op("GET", "/user/alice/f", "OPEN").hdr.Get("Location"))
	w.auth = "Bearer " + redir.Query().Get("delegation")
	w.op("GET", "/", "GETDELEGATIONTOKEN").remote(t, 401, "SecurityException")
	w.auth = ""

	// A redirect's token re-labelled for another user is refused by the
	// namenode the datanode asks.
	r := w.op("GET", "/user/alice/f", "OPEN", "delegation="+tok)
	u, _ := url.Parse(r.hdr.Get("Location"))
	q := u.Query()
	q.Set("delegation", strings.Replace(q.Get("delegation"), "alice:", "root:", 1))
	u.RawQuery = q.Encode()
	w.do("GET", u.String(), nil).remote(t, 401, "SecurityException")

	// Renew: only the renewer; the new expiry is about a day away.
	w.auth = "Bearer " + c.Credential("bob")
	w.op("PUT", "/", "RENEWDELEGATIONTOKEN", "token="+tok).remote(t, 403, "AccessControlException")
	w.op("GET", "/user/alice", "LISTSTATUS").remote(t, 403, "AccessControlException")
	w.auth = "Bearer " + c.Credential("alice")
	exp := w.op("PUT", "/", "RENEWDELEGATIONTOKEN", "token="+tok).json(t)["long"].(float64)
	if d := time.Until(time.UnixMilli(int64(exp))); d < 23*time.Hour || d > 25*time.Hour {
		t.Fatalf("renewed expiry %v away", d)
	}
	w.op("PUT", "/", "RENEWDELEGATIONTOKEN", "token=alice:tok.bogus.00").remote(t, 403, "InvalidToken")

	// Cancel: the token stops working, also on the RPC path a datanode uses.
	if r := w.op("PUT", "/", "CANCELDELEGATIONTOKEN", "token="+tok); r.code != 200 {
		t.Fatalf("CANCELDELEGATIONTOKEN: %d %s", r.code, r.body)
	}
	w.auth = ""
	w.op("GET", "/user/alice", "LISTSTATUS", "delegation="+tok).remote(t, 403, "InvalidToken")
	q.Set("delegation", tok)
	u.RawQuery = q.Encode()
	w.do("GET", u.String(), nil).remote(t, 401, "SecurityException")

	// The superuser may act for others.
	w.auth = "Bearer " + c.Credential(osUser(t))
	if p := w.op("GET", "/", "GETHOMEDIRECTORY", "doas=bob").json(t)["Path"]; p != "/user/bob" {
		t.Fatalf("doas by the superuser: %v", p)
	}
}
