package auth

import (
	"bytes"
	"testing"
)

// FuzzVerify feeds arbitrary credential strings, as they arrive in call
// metadata, to both verifiers: neither may panic, and what one accepts
// must be exactly the credential minted for the name it returns — so no
// parsing slack (extra colons, case, padding, trailing bytes) lets a
// caller claim a name the key did not sign, and a user credential never
// passes as a datanode's or the reverse.
func FuzzVerify(f *testing.F) {
	key := bytes.Repeat([]byte{7}, keyLen)
	for _, s := range []string{
		UserCredential(key, "alice"),
		DatanodeCredential(key, "dn-1:9866"),
		UserCredential(key, "bob:x"),
		"", ":", "alice", "alice:", ":" + mac(key, "user", ""),
		UserCredential(bytes.Repeat([]byte{8}, keyLen), "alice"), // another cluster's key
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cred string) {
		u, uerr := VerifyUser(key, cred)
		if uerr == nil {
			if u == "" || cred != UserCredential(key, u) || CredentialUser(cred) != u {
				t.Fatalf("user credential %q accepted as %q", cred, u)
			}
		}
		d, derr := VerifyDatanode(key, cred)
		if derr == nil {
			if d == "" || cred != DatanodeCredential(key, d) {
				t.Fatalf("datanode credential %q accepted as %q", cred, d)
			}
		}
		if uerr == nil && derr == nil {
			t.Fatalf("%q passes as both a user's and a datanode's credential", cred)
		}
	})
}
