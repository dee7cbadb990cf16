package namenode

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"smarth/internal/auth"
	"smarth/internal/namenode/namespace"
	"smarth/internal/trash"
	"smarth/internal/webhdfs"
)

// WebHDFS on the namenode's HTTP port (package webhdfs): the handler calls
// the same ClientProtocol methods the gRPC server does, with the caller
// set as the interceptor sets it, so both front doors pass one set of
// permission checks.

// Token lifetimes, as HDFS's dfs.namenode.delegation.token.* defaults.
const (
	delegationRenewInterval = 24 * time.Hour
	delegationMaxLifetime   = 7 * 24 * time.Hour
	// redirectLifetime bounds the token in a WebHDFS redirect. The datanode
	// presents it on every namenode call of the write or read it serves,
	// so it must outlast a long transfer; a URL that leaks is good for
	// this long as its user at most.
	redirectLifetime = time.Hour
)

func (nn *NameNode) webhdfsRoutes(mux *http.ServeMux) {
	h := webhdfs.New(webhdfs.Config{
		RPC: &clientRPC{nn: nn}, Auth: nn.ident.web, CheckAccess: nn.checkAccess, TrashRoot: trash.Root,
		NameNodeRPC: nn.Addr(), Logger: nn.logger.With("component", "webhdfs"),
	})
	mux.Handle(webhdfs.Prefix+"/", h)
	mux.Handle(webhdfs.Prefix, h)
}

// checkAccess answers CHECKACCESS with the namespace's own permission
// rules.
func (nn *NameNode) checkAccess(ctx context.Context, path string, want uint16) error {
	p, err := cleanPath("checkAccess", path)
	if err != nil {
		return err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	return statusOf(nn.state.tree.CheckAccess(callerOf(ctx), p, want))
}

// webAuth is the namenode's webhdfs.Authority: proofs are checked with
// the identity secret (secure mode), tokens signed with it; renewals and
// cancellations of delegation tokens are kept in meta_dir so a restart
// does not bring a cancelled token back.
type webAuth struct {
	id    *identity
	key   []byte // signs tokens: the identity secret, or a per-process key in simple mode
	file  string // meta_dir/webhdfs-tokens.json
	clock func() time.Time

	mu sync.Mutex // guards issued, file writes
	// issued maps a delegation token's seq to its renewed expiry (unix
	// ms), or to minus its max date once cancelled: an entry is dropped
	// when the token could not be used any more anyway.
	issued map[uint64]int64
}

func newWebAuth(id *identity, metaDir string, clock func() time.Time) (*webAuth, error) {
	a := &webAuth{id: id, key: id.secret, file: filepath.Join(metaDir, "webhdfs-tokens.json"), clock: clock, issued: map[uint64]int64{}}
	if a.key == nil {
		// Simple mode trusts asserted names anyway; the key only makes
		// redirect tokens well formed.
		a.key = make([]byte, 32)
		_, _ = rand.Read(a.key)
	}
	b, err := os.ReadFile(a.file)
	switch {
	case err == nil:
		var saved map[uint64]int64
		if err := json.Unmarshal(b, &saved); err != nil {
			return nil, fmt.Errorf("webhdfs tokens %s: %w", a.file, err)
		}
		now := clock().UnixMilli()
		for seq, exp := range saved {
			if exp > now || -exp > now {
				a.issued[seq] = exp
			}
		}
	case !os.IsNotExist(err):
		return nil, fmt.Errorf("webhdfs tokens: %w", err)
	}
	return a, nil
}

// save writes the token table atomically; the caller holds mu.
func (a *webAuth) save() error {
	b, _ := json.Marshal(a.issued)
	// Synced before and after the rename: a cancellation must not come
	// undone, nor a torn file keep the namenode from starting.
	return auth.WriteFileAtomic(a.file, b, 0o600, 0o700)
}

func (a *webAuth) Secure() bool { return a.id.mode == auth.Secure }

func (a *webAuth) MayProxy(real string) bool { return slices.Contains(a.id.proxyUsers, real) }

func (a *webAuth) Caller(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, callerKey{}, namespace.Caller{User: user, Groups: a.id.groupsOf(user)})
}

// Verify accepts a user credential or a live token. A signature once
// checked is remembered (credCache); liveness is checked on every call.
func (a *webAuth) Verify(cred string) (string, error) {
	if e, ok := a.id.creds.get(cred); ok {
		if e.tok == nil {
			return e.user, nil
		}
		return a.live(e.tok)
	}
	if !auth.IsToken(cred) {
		u, err := auth.VerifyUser(a.id.secret, cred)
		if err == nil {
			a.id.creds.put(cred, credEntry{user: u}, a.clock())
		}
		return u, err
	}
	t, err := auth.ParseToken(a.key, cred)
	if err != nil {
		return "", err
	}
	u, err := a.live(&t)
	if err == nil {
		a.id.creds.put(cred, credEntry{user: u, tok: &t}, a.clock())
	}
	return u, err
}

// live says whether a token whose signature checked out may be used now:
// a redirect token until it expires, a delegation token until its
// (renewed) expiry unless cancelled.
func (a *webAuth) live(t *auth.Token) (string, error) {
	exp := t.Expires
	if t.Kind == auth.KindDelegation {
		a.mu.Lock()
		e, ok := a.issued[t.Seq]
		a.mu.Unlock()
		switch {
		case ok && e < 0:
			return "", fmt.Errorf("%w: delegation token %d of %s was cancelled", auth.ErrUnauthenticated, t.Seq, t.User)
		case ok:
			exp = e
		}
	}
	if err := t.CheckExpiry(exp, a.clock()); err != nil {
		return "", err
	}
	return t.User, nil
}

func newSeq() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:]) >> 1
}

func (a *webAuth) IssueRedirect(user string) string {
	now := a.clock()
	return auth.Token{Kind: auth.KindRedirect, User: user, Issued: now.UnixMilli(),
		Expires: now.Add(redirectLifetime).UnixMilli(), Seq: newSeq()}.Encode(a.key)
}

// IssueDelegation: a simple-mode namenode issues none (Hadoop answers
// {"Token": null} there).
func (a *webAuth) IssueDelegation(user, renewer string) (string, error) {
	if !a.Secure() {
		return "", nil
	}
	now := a.clock()
	t := auth.Token{Kind: auth.KindDelegation, User: user, Renewer: renewer, Issued: now.UnixMilli(),
		Expires: now.Add(delegationRenewInterval).UnixMilli(), MaxDate: now.Add(delegationMaxLifetime).UnixMilli(), Seq: newSeq()}
	return t.Encode(a.key), nil
}

func (a *webAuth) delegation(s string) (auth.Token, error) {
	if !a.Secure() {
		return auth.Token{}, webhdfs.Exception("IOException", "Delegation tokens are issued only in secure mode (this namenode runs auth: simple)")
	}
	t, err := auth.ParseToken(a.key, s)
	if err != nil {
		return t, webhdfs.Exception("InvalidToken", err.Error())
	}
	if t.Kind != auth.KindDelegation {
		return t, webhdfs.Exception("InvalidToken", fmt.Sprintf("token %d is a %s token, not a delegation token", t.Seq, t.Kind))
	}
	return t, nil
}

func (a *webAuth) Renew(s, caller string) (int64, error) {
	t, err := a.delegation(s)
	if err != nil {
		return 0, err
	}
	if caller != t.Renewer {
		return 0, webhdfs.Exception("AccessControlException", fmt.Sprintf("%s tries to renew a token (%d) with non-matching renewer %s", caller, t.Seq, t.Renewer))
	}
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.issued[t.Seq]
	if ok && cur < 0 {
		return 0, webhdfs.Exception("InvalidToken", fmt.Sprintf("delegation token %d was cancelled", t.Seq))
	}
	if !ok {
		cur = t.Expires
	}
	if now.UnixMilli() > cur {
		return 0, webhdfs.Exception("InvalidToken", fmt.Sprintf("delegation token %d expired", t.Seq))
	}
	exp := min(now.Add(delegationRenewInterval).UnixMilli(), t.MaxDate)
	a.issued[t.Seq] = exp
	if err := a.save(); err != nil {
		return 0, err
	}
	return exp, nil
}

func (a *webAuth) Cancel(s, caller string) error {
	t, err := a.delegation(s)
	if err != nil {
		return err
	}
	if caller != t.User && caller != t.Renewer {
		return webhdfs.Exception("AccessControlException", fmt.Sprintf("%s is not authorized to cancel the token %d", caller, t.Seq))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issued[t.Seq] = -t.MaxDate
	return a.save()
}

// verify checks a credential or token presented on an RPC (an identity
// built without WebHDFS, as the fuzz tests make, knows credentials only).
func (id *identity) verify(cred string) (string, error) {
	if id.web != nil {
		return id.web.Verify(cred)
	}
	if e, ok := id.creds.get(cred); ok && e.tok == nil {
		return e.user, nil
	}
	u, err := auth.VerifyUser(id.secret, cred)
	if err == nil {
		id.creds.put(cred, credEntry{user: u}, time.Now())
	}
	return u, err
}
