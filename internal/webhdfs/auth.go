package webhdfs

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"smarth/internal/auth"
)

// Authority is the namenode's knowledge of who calls: it checks proofs
// with the namenode's identity secret, resolves the caller the way the
// gRPC server does, and issues the tokens WebHDFS hands out.
type Authority interface {
	// Secure reports secure mode: callers prove who they are and
	// user.name is never trusted.
	Secure() bool
	// Verify returns the user a credential proves: a user credential
	// ("user:mac") or a token this namenode issued and has not cancelled.
	Verify(cred string) (user string, err error)
	// MayProxy reports whether real may act for other users (doas).
	MayProxy(real string) bool
	// Caller returns ctx carrying user as the established caller of the
	// namenode's ClientProtocol methods.
	Caller(ctx context.Context, user string) context.Context
	// IssueDelegation mints a Hadoop delegation token of kind (WEBHDFS
	// or SWEBHDFS delegation) for user, naming service as Hadoop's
	// namenode names its RPC address ("" with no error in simple mode,
	// where a Hadoop namenode returns a null token).
	IssueDelegation(user, renewer, kind, service string) (string, error)
	// IssueRedirect mints the short-lived token a datanode passes back
	// as user's credential for one redirected operation, good only for
	// that operation, path and datanode, and never at the namenode's
	// own WebHDFS door.
	IssueRedirect(user string, scope RedirectScope) string
	// Renew extends a delegation token and returns its new expiry (unix
	// ms); only its renewer may.
	Renew(token, caller string) (int64, error)
	// Cancel revokes a delegation token; its user or renewer may.
	Cancel(token, caller string) error
}

// RedirectScope is what a redirect token is good for.
type RedirectScope struct {
	Op       string // CREATE, APPEND, OPEN or GETFILECHECKSUM
	Path     string
	Datanode string // the id of the datanode redirected to: its calls alone may carry the token
	// Via is the proof the request came with (a credential or a
	// delegation token): a redirect token of a delegation token dies
	// with it.
	Via string
}

// DefaultWebUser is the user of a simple-mode request that names none
// (Hadoop's hadoop.http.staticuser.user).
const DefaultWebUser = "dr.who"

// authenticate establishes the user a request acts as. Secure mode: a
// delegation token (delegation=) or a credential in the Authorization
// header ("Bearer <credential>"); user.name is ignored. Simple mode:
// user.name as asserted, as Hadoop's pseudo authentication. In both, doas
// switches to another user only for a configured proxy user.
func authenticate(a Authority, r *http.Request, p Params) (string, *RemoteException) {
	var user string
	if a.Secure() {
		cred := presented(r, p)
		if cred == "" {
			return "", Exception("SecurityException", "Authentication required: this namenode runs in secure mode; pass a delegation token (delegation=, from op=GETDELEGATIONTOKEN) or your credential (Authorization: Bearer <the contents of your token file>)")
		}
		u, err := a.Verify(cred)
		if err != nil && p.Str("delegation") != "" {
			// HDFS refuses a bad, expired or cancelled delegation token
			// with InvalidToken, an IOException: 403, which Hadoop's
			// WebHdfsFileSystem recognises by its class (and answers by
			// fetching a new token when it can).
			// HDFS's message is the token's fault alone ("token (...)
			// is invalid, password doesn't match"), without our prefix.
			return "", Exception("InvalidToken", strings.TrimPrefix(err.Error(), auth.ErrUnauthenticated.Error()+": "))
		}
		if err != nil {
			return "", Exception("SecurityException", "Failed to obtain user group information: "+err.Error())
		}
		user = u
	} else {
		u, err := p.User("user.name")
		if err != nil {
			return "", FromError(err)
		}
		user = u
		if user == "" {
			user = DefaultWebUser
		}
	}
	doas, err := p.User("doas")
	if err != nil {
		return "", FromError(err)
	}
	if doas != "" && doas != user {
		if !a.MayProxy(user) {
			return "", Exception("AuthorizationException", fmt.Sprintf("User: %s is not allowed to impersonate %s", user, doas))
		}
		user = doas
	}
	return user, nil
}

// presented is the proof a request carries: a delegation token
// (delegation=) or what the Authorization header holds.
func presented(r *http.Request, p Params) string {
	if cred := p.Str("delegation"); cred != "" {
		return cred
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, v, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Smarth") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
