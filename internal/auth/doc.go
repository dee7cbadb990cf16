// Package auth establishes who is calling a smarth daemon, so that a
// server never takes a name a caller merely asserts (DESIGN "Security",
// docs/security.md).
//
// A user credential is "user:hex(HMAC-SHA256(secret, user))" under the
// namenode's identity secret: whoever can read a user's 0600 token file
// is that user, as whoever can read a Kerberos ticket cache is its
// principal. Datanodes prove they belong to the cluster with the shared
// datanode key (HMAC over their id). The package holds the formats, the
// key files and the checks; which RPCs need which proof is the servers'
// business.
package auth
