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
	"strings"
	"sync"
	"time"

	"smarth/internal/atomicfile"
	"smarth/internal/auth"
	"smarth/internal/namenode/fsstate"
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
	// redirectLifetime bounds the token in a WebHDFS redirect: the client
	// follows the redirect at once, and the datanode presents the token on
	// every namenode call of the one read or write it serves (its last,
	// complete, at the end of the upload). A URL that leaks is good for
	// this long, for that operation on that path from that datanode only.
	// A transfer longer than this fails at its next namenode call; Hadoop
	// clients then retry from the namenode.
	redirectLifetime = 10 * time.Minute
)

func (nn *NameNode) webhdfsRoutes(mux *http.ServeMux) {
	h := webhdfs.New(webhdfs.Config{
		RPC: &clientRPC{nn: nn}, Auth: nn.ident.web, CheckAccess: nn.checkAccess, TrashRoot: trash.Root,
		NameNodeRPC: nn.Addr(), Logger: nn.logger.With("component", "webhdfs"),
	})
	var hh http.Handler = h
	if nn.ha != nil {
		hh = nn.ha.webhdfsGate(h)
	}
	mux.Handle(webhdfs.Prefix+"/", hh)
	mux.Handle(webhdfs.Prefix, hh)
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
	return statusOf(nn.state.Tree().CheckAccess(callerOf(ctx), p, want))
}

// webAuth is the namenode's webhdfs.Authority: proofs are checked with
// the identity secret (secure mode), tokens signed with it; renewals and
// cancellations of delegation tokens are namespace records (store), so
// neither a restart nor a failover brings a cancelled token back.
type webAuth struct {
	id    *identity
	key   []byte // signs tokens: the identity secret, or a per-process key in simple mode
	file  string // meta_dir/webhdfs-tokens.json
	clock func() time.Time

	// datanodeIPs gives the addresses a datanode's calls come from (the
	// one it advertises and the one it registered from); nil: none known.
	datanodeIPs func(id string) []string

	mu sync.Mutex // guards issued, file writes
	// issued maps a delegation token's seq to its renewed expiry (unix
	// ms), or to minus its max date once cancelled: an entry is dropped
	// when the token could not be used any more anyway. With store set
	// (a namenode) it holds only what a build before the log held them
	// saved in file: read, never written again.
	issued map[uint64]int64
	// store keeps renewals and cancellations in the namespace log
	// (fsstate's RenewToken and CancelToken), so every member of an HA
	// group and every restart has them; nil (tests of the identity
	// alone): the file.
	store tokenStore
}

// tokenStore is where a namenode keeps delegation tokens' renewals and
// cancellations: its namespace state, changed through its log.
type tokenStore interface {
	delegationToken(seq uint64) (entry int64, ok bool)
	logToken(r fsstate.Record) error
}

// entry is token seq's renewed expiry, or minus its max date once
// cancelled (ok false: neither). A cancellation in the file of an older
// build still counts.
func (a *webAuth) entry(seq uint64) (int64, bool) {
	a.mu.Lock()
	old, inFile := a.issued[seq]
	a.mu.Unlock()
	if a.store == nil || (inFile && old < 0) {
		return old, inFile
	}
	if e, ok := a.store.delegationToken(seq); ok {
		return e, true
	}
	return old, inFile
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
	if err := os.MkdirAll(filepath.Dir(a.file), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(a.file, b, 0o600)
}

func (a *webAuth) Secure() bool { return a.id.mode == auth.Secure }

func (a *webAuth) MayProxy(real string) bool { return slices.Contains(a.id.proxyUsers, real) }

func (a *webAuth) Caller(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, callerKey{}, namespace.Caller{User: user, Groups: a.id.groupsOf(user)})
}

// Verify accepts, at the namenode's WebHDFS door, a user credential or a
// live delegation token. A redirect token is refused here: it is the
// datanode's to present on the calls of the one operation it was issued
// for (verifyRPC), and must not mint, renew or redirect anything.
func (a *webAuth) Verify(cred string) (string, error) {
	u, t, err := a.check(cred)
	if err != nil {
		return "", err
	}
	if t != nil && t.Kind == auth.KindRedirect {
		return "", fmt.Errorf("%w: %s token %d is good only for the datanode calls of the %s it was issued for", auth.ErrUnauthenticated, t.Kind, t.Seq, t.Op)
	}
	return u, nil
}

// check accepts a user credential or a live token of any kind. A
// signature once checked is remembered (credCache); liveness is checked on
// every call.
func (a *webAuth) check(cred string) (string, *auth.Token, error) {
	if e, ok := a.id.creds.get(cred); ok {
		if e.tok == nil {
			return e.user, nil, nil
		}
		u, err := a.live(e.tok)
		return u, e.tok, err
	}
	if !auth.IsToken(cred) {
		u, err := auth.VerifyUser(a.id.secret, cred)
		if err == nil {
			a.id.creds.put(cred, credEntry{user: u}, a.clock())
		}
		return u, nil, err
	}
	t, err := a.parseToken(cred)
	if err != nil {
		return "", nil, err
	}
	u, err := a.live(&t)
	if err == nil {
		a.id.creds.put(cred, credEntry{user: u, tok: &t}, a.clock())
	}
	return u, &t, err
}

// verifyRPC accepts a credential on an RPC: a user credential, a live
// delegation token, or a live redirect token on a call its operation
// makes, naming its path (when the call names one), from its datanode.
func (a *webAuth) verifyRPC(ctx context.Context, cred, method string, req any) (string, error) {
	u, t, err := a.check(cred)
	if err != nil || t == nil || t.Kind != auth.KindRedirect {
		return u, err
	}
	name := method[strings.LastIndexByte(method, '/')+1:]
	switch {
	case !strings.HasPrefix(method, "/smarth.dfs.ClientProtocol/") || !redirectCalls[t.Op][name]:
		return "", fmt.Errorf("%w: %s token %d was issued for a WebHDFS %s, which makes no %s call", auth.ErrUnauthenticated, t.Kind, t.Seq, t.Op, name)
	case t.Datanode != "" && !a.fromDatanode(t.Datanode, peerHost(ctx)):
		return "", fmt.Errorf("%w: %s token %d was issued for datanode %s; a call from %s may not carry it", auth.ErrUnauthenticated, t.Kind, t.Seq, t.Datanode, peerHost(ctx))
	}
	if r, ok := req.(interface{ GetPath() string }); ok && r.GetPath() != "" && r.GetPath() != t.Path {
		return "", fmt.Errorf("%w: %s token %d was issued for %s %s, not %s", auth.ErrUnauthenticated, t.Kind, t.Seq, t.Op, t.Path, r.GetPath())
	}
	return u, nil
}

// fromDatanode says whether a call from peer comes from datanode id.
func (a *webAuth) fromDatanode(id, peer string) bool {
	return a.datanodeIPs != nil && peer != "" && slices.Contains(a.datanodeIPs(id), peer)
}

// redirectCalls are the ClientProtocol calls the datanode's client makes
// for each redirected operation (internal/datanode/webhdfs). Calls naming
// a block or a lease rather than a path are bound to the writer's user by
// fileForWriteLocked.
var redirectCalls = func() map[string]map[string]bool {
	read := []string{"GetServerDefaults", "GetFileInfo", "GetBlockLocations", "ReportBadBlocks", "ClientHeartbeat"}
	write := append([]string{"AddBlock", "Complete", "AbandonBlock", "GetAdditionalDatanode", "UpdateBlockForPipeline",
		"UpdatePipeline", "RenewLease", "GetDatanodeReport"}, read...)
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	return map[string]map[string]bool{
		"OPEN": set(read...), "GETFILECHECKSUM": set(read...),
		"CREATE": set(append(write, "Create")...), "APPEND": set(append(write, "Append")...),
	}
}()

// live says whether a token whose signature checked out may be used now:
// a redirect token until it expires and while the delegation token it
// was issued under lives, a delegation token until its (renewed) expiry
// unless cancelled.
func (a *webAuth) live(t *auth.Token) (string, error) {
	exp := t.Expires
	if t.Kind == auth.KindDelegation {
		if err := a.delegationLive(t.Seq, t.User, &exp); err != nil {
			return "", err
		}
	}
	if t.Kind == auth.KindRedirect && t.Parent != 0 {
		parentExp := t.ParentExpires
		if err := a.delegationLive(t.Parent, t.User, &parentExp); err != nil {
			return "", fmt.Errorf("%w (the %s token %d was issued under it)", err, t.Kind, t.Seq)
		}
		if err := t.CheckExpiry(parentExp, a.clock()); err != nil {
			return "", fmt.Errorf("%w: the delegation token %d it was issued under expired", err, t.Parent)
		}
	}
	if err := t.CheckExpiry(exp, a.clock()); err != nil {
		return "", err
	}
	return t.User, nil
}

// delegationLive refuses a cancelled delegation token and moves *exp to
// its renewed expiry.
func (a *webAuth) delegationLive(seq uint64, user string, exp *int64) error {
	e, ok := a.entry(seq)
	switch {
	case ok && e < 0:
		return fmt.Errorf("%w: delegation token %d of %s was cancelled", auth.ErrUnauthenticated, seq, user)
	case ok:
		*exp = e
	}
	return nil
}

func newSeq() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:]) >> 1
}

func (a *webAuth) IssueRedirect(user string, scope webhdfs.RedirectScope) string {
	now := a.clock()
	t := auth.Token{Kind: auth.KindRedirect, User: user, Issued: now.UnixMilli(),
		Expires: now.Add(redirectLifetime).UnixMilli(), Seq: newSeq(),
		Op: scope.Op, Path: scope.Path, Datanode: scope.Datanode}
	if auth.IsToken(scope.Via) {
		if d, err := a.parseToken(scope.Via); err == nil && d.Kind == auth.KindDelegation {
			t.Parent, t.ParentExpires = d.Seq, d.Expires
		}
	}
	return t.Encode(a.key)
}

// IssueDelegation mints a Hadoop delegation token (delegation.go); a
// simple-mode namenode issues none (Hadoop answers {"Token": null} there).
func (a *webAuth) IssueDelegation(user, renewer, kind, service string) (string, error) {
	if !a.Secure() {
		return "", nil
	}
	return a.issueHadoop(user, renewer, kind, service), nil
}

func (a *webAuth) delegation(s string) (auth.Token, error) {
	if !a.Secure() {
		return auth.Token{}, webhdfs.Exception("IOException", "Delegation tokens are issued only in secure mode (this namenode runs auth: simple)")
	}
	t, err := a.parseToken(s)
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
	cur, ok := a.entry(t.Seq)
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
	if a.store != nil {
		if exp <= now.UnixMilli() {
			return 0, webhdfs.Exception("InvalidToken", fmt.Sprintf("delegation token %d cannot be renewed past its max date", t.Seq))
		}
		// A cancellation logged between the check and this renewal
		// wins when applied (fsstate.RenewToken keeps it).
		if err := a.store.logToken(&fsstate.RenewToken{Seq: t.Seq, Expiry: exp}); err != nil {
			return 0, err
		}
		return exp, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur, ok := a.issued[t.Seq]; ok && cur < 0 {
		return 0, webhdfs.Exception("InvalidToken", fmt.Sprintf("delegation token %d was cancelled", t.Seq))
	}
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
	if a.store != nil {
		until := t.MaxDate
		if until <= 0 { // a token of smarth's older form carries none
			until = a.clock().Add(delegationMaxLifetime).UnixMilli()
		}
		return a.store.logToken(&fsstate.CancelToken{Seq: t.Seq, MaxDate: until})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issued[t.Seq] = -t.MaxDate
	return a.save()
}

// verify checks a credential or token presented on an RPC (an identity
// built without WebHDFS, as the fuzz tests make, knows credentials only).
func (id *identity) verify(ctx context.Context, cred, method string, req any) (string, error) {
	if id.web != nil {
		return id.web.verifyRPC(ctx, cred, method, req)
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
