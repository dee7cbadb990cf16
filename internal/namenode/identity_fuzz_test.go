package namenode

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc/metadata"

	"smarth/internal/auth"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// FuzzAuthenticate gives the namenode's authentication arbitrary call
// metadata (asserted user, credential, proxy user, datanode credential)
// and datanode ids, in both modes: it must not panic, and the caller it
// establishes must be the one the credential proves (secure) or the one
// asserted (simple), acting for another only as a configured proxy user,
// with groups from the server's table — never from anything the caller
// sent. A datanode call passes only with the datanode key's proof, for
// the datanode proven.
func FuzzAuthenticate(f *testing.F) {
	key, dnKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	alice, oozie := auth.UserCredential(key, "alice"), auth.UserCredential(key, "oozie")
	dn1 := auth.DatanodeCredential(dnKey, "dn1")
	f.Add(true, false, "hdfs", alice, "", "", "")
	f.Add(true, false, "", oozie, "alice", "", "")
	f.Add(true, false, "", alice, "hdfs", "", "")
	f.Add(true, false, "alice", auth.UserCredential(dnKey, "alice"), "", "", "")
	f.Add(true, true, "", "", "", dn1, "dn1")
	f.Add(true, true, "", "", "", dn1, "dn2")
	f.Add(true, true, "", "", "", auth.DatanodeCredential(key, "dn1"), "")
	f.Add(false, false, "supergroup", "", "", "", "")
	f.Add(false, false, "mallory", "", "hdfs", "", "")
	f.Add(false, true, "", "", "", "", "dn1")
	groups := map[string][]string{"hdfs": {"supergroup"}, "alice": {"alice", "staff"}, "oozie": {"oozie"},
		"mallory": {"mallory"}, "supergroup": {"supergroup"}, defaultUser: {defaultUser}}
	f.Fuzz(func(t *testing.T, secure, datanode bool, user, cred, proxy, dnCred, named string) {
		id := &identity{mode: auth.Simple, dnKey: dnKey, superuser: "hdfs", proxyUsers: []string{"hdfs", "oozie"},
			static: groups, groups: map[string]groupEntry{}}
		if secure {
			id.mode, id.secret = auth.Secure, key
		}
		// Unknown users resolve to a one-name group without asking the
		// OS, so the fuzzer's names stay off the host's user database.
		id.static = maps2(groups, user, proxy, auth.CredentialUser(cred))
		md := metadata.MD{}
		for k, v := range map[string]string{auth.MDUser: user, auth.MDCredential: cred, auth.MDProxyUser: proxy, auth.MDDatanode: dnCred} {
			if v != "" {
				md.Set(k, v)
			}
		}
		ctx := metadata.NewIncomingContext(context.Background(), md)
		if datanode {
			md, _ := metadata.FromIncomingContext(ctx)
			err := id.authenticateDatanode(md, &dfspb.HeartbeatRequest{DatanodeId: named})
			if err == nil {
				proven, perr := auth.VerifyDatanode(dnKey, dnCred)
				if perr != nil || (named != "" && named != proven) {
					t.Fatalf("datanode call naming %q passed with credential %q", named, dnCred)
				}
			}
			return
		}
		out, err := id.authenticate(ctx, "/smarth.dfs.ClientProtocol/GetFileInfo", &dfspb.GetFileInfoRequest{})
		if err != nil {
			return
		}
		c, ok := out.Value(callerKey{}).(namespace.Caller)
		if !ok {
			t.Fatal("authenticated without a caller")
		}
		who := user
		if secure {
			var verr error
			if who, verr = auth.VerifyUser(key, cred); verr != nil {
				t.Fatalf("secure call passed with credential %q (%v)", cred, verr)
			}
		}
		if who == "" {
			who = defaultUser
		}
		if proxy != "" && proxy != who {
			if !slices.Contains(id.proxyUsers, who) {
				t.Fatalf("%s, not a proxy user, acts for %s", who, proxy)
			}
			who = proxy
		}
		if c.User != who || !slices.Equal(c.Groups, id.static[who]) {
			t.Fatalf("caller %+v, want %s with groups %v", c, who, id.static[who])
		}
	})
}

// maps2 is groups plus a one-name group for each name it lacks.
func maps2(groups map[string][]string, names ...string) map[string][]string {
	out := make(map[string][]string, len(groups)+len(names))
	for k, v := range groups {
		out[k] = v
	}
	for _, n := range names {
		if _, ok := out[n]; !ok && n != "" {
			out[n] = []string{n}
		}
	}
	return out
}
