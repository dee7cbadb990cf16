package namenode

import (
	"crypto/hmac"
	"fmt"
	"time"

	"smarth/internal/auth"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
)

// Hadoop-format delegation tokens (docs/security.md, "Delegation
// tokens"): WebHDFS's GETDELEGATIONTOKEN issues HDFS's
// DelegationTokenIdentifier with an HMAC-SHA1 password under a master key,
// so Hadoop's clients can hold and present them. Renewals and
// cancellations are logged (tokenLog, fsstate.RenewToken and CancelToken),
// keyed by auth.HadoopTokenKey as smarth's own tokens are by their seq.

// delegationKeyInterval is how long one master key signs new tokens,
// as HDFS's dfs.namenode.delegation.key.update-interval (a day).
const delegationKeyInterval = 24 * time.Hour

// masterKeyID is the id of the master key new tokens get at t.
func masterKeyID(t time.Time) int32 {
	return int32(t.UnixMilli() / delegationKeyInterval.Milliseconds())
}

// issueHadoop mints a Hadoop delegation token of kind for user.
func (a *webAuth) issueHadoop(user, renewer, kind, service string) string {
	now := a.clock()
	id := auth.DelegationIdentifier{Owner: user, Renewer: renewer, IssueDate: now.UnixMilli(),
		MaxDate: now.Add(delegationMaxLifetime).UnixMilli(), Seq: int32(newSeq() & 0x7fffffff), MasterKeyID: masterKeyID(now)}
	b := id.Marshal()
	pw := auth.DelegationPassword(auth.DelegationMasterKey(a.key, id.MasterKeyID), b)
	return auth.HadoopToken{Identifier: b, Password: pw, Kind: kind, Service: service}.URLString()
}

// parseHadoop checks a Hadoop delegation token's password and returns it
// in the form the rest of webAuth checks for liveness. The owner, renewer
// and dates are the identifier's, which the password binds: editing any
// of them fails here. A master key older than any live token could be
// signed with, or one not yet in use, is refused without being derived
// for comparison, as HDFS refuses a key id it does not hold.
func (a *webAuth) parseHadoop(s string) (auth.Token, error) {
	ht, err := auth.DecodeHadoopToken(s)
	if err != nil {
		return auth.Token{}, err
	}
	if !auth.IsDelegationKind(ht.Kind) {
		return auth.Token{}, fmt.Errorf("%w: a %q token is no delegation token", auth.ErrUnauthenticated, ht.Kind)
	}
	id, err := auth.ParseDelegationIdentifier(ht.Identifier)
	if err != nil {
		return auth.Token{}, err
	}
	now := a.clock()
	if id.MasterKeyID > masterKeyID(now) || id.MasterKeyID < masterKeyID(now.Add(-delegationMaxLifetime))-1 {
		return auth.Token{}, fmt.Errorf("%w: token (%s): Unable to find master key for keyId=%d from cache", auth.ErrUnauthenticated, id, id.MasterKeyID)
	}
	if !hmac.Equal(ht.Password, auth.DelegationPassword(auth.DelegationMasterKey(a.key, id.MasterKeyID), ht.Identifier)) {
		return auth.Token{}, fmt.Errorf("%w: token (%s) is invalid, password doesn't match", auth.ErrUnauthenticated, id)
	}
	return auth.Token{Kind: auth.KindDelegation, User: id.Owner, Renewer: id.Renewer, Issued: id.IssueDate,
		Expires: min(id.IssueDate+delegationRenewInterval.Milliseconds(), id.MaxDate), MaxDate: id.MaxDate,
		Seq: auth.HadoopTokenKey(ht.Identifier)}, nil
}

// parseToken checks a token's signature: smarth's own form ("user:tok.…",
// signed with the identity secret; still accepted until those issued
// before Hadoop's form expire) or a Hadoop delegation token.
func (a *webAuth) parseToken(s string) (auth.Token, error) {
	if auth.IsToken(s) && !auth.IsHadoopToken(s) {
		return auth.ParseToken(a.key, s)
	}
	return a.parseHadoop(s)
}

// tokenLog keeps delegation tokens' renewals and cancellations in the
// namespace (webAuth's tokenStore): logged like any mutation, so an HA
// group's members and a restarted namenode hold them, and read from
// the state under the namenode's lock.
type tokenLog struct{ nn *NameNode }

func (l tokenLog) delegationToken(seq uint64) (int64, bool) {
	l.nn.mu.RLock()
	defer l.nn.mu.RUnlock()
	return l.nn.state.DelegationToken(seq)
}

func (l tokenLog) logToken(r fsstate.Record) error {
	_, err := l.nn.mutate(r.Kind().String(), "", namespace.Caller{Trusted: true}, r, nil, nil)
	return err
}
