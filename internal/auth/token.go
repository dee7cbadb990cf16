package auth

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Token kinds.
const (
	// KindDelegation is a WebHDFS delegation token (GETDELEGATIONTOKEN): a
	// day-long proof of its user, renewable up to its max date, that the
	// namenode can cancel.
	KindDelegation = "WEBHDFS delegation"
	// KindRedirect rides in the URL a namenode redirects a WebHDFS
	// CREATE/APPEND/OPEN to: the datanode hands it to the namenode as the
	// credential of the calls it makes for the user, so a datanode can
	// only act for the user the namenode authenticated.
	KindRedirect = "redirect"
)

// tokenTag marks a token inside a credential ("user:" + tokenTag + ...),
// so one credential field carries either a user credential or a token.
const tokenTag = "tok."

// maxTokenLen bounds what ParseToken decodes (a token is ~300 bytes).
const maxTokenLen = 4096

// Token is a signed, expiring proof of a user, issued by the namenode
// under its identity secret. The encoding is "user:tok.<base64url JSON>.
// <hex HMAC>"; the user prefix makes a token usable wherever a credential
// is (its user is the credential's user).
type Token struct {
	Kind    string `json:"k"`
	User    string `json:"u"`
	Renewer string `json:"r,omitempty"`
	Issued  int64  `json:"i"`           // unix ms
	Expires int64  `json:"e"`           // unix ms: not valid after (a renewal extends it)
	MaxDate int64  `json:"m,omitempty"` // unix ms: no renewal past it
	Seq     uint64 `json:"s"`           // unique per issuer: renewals and cancellations name it

	// A redirect token's scope: the one WebHDFS operation and path it
	// was issued for and the datanode (its id) whose calls may carry it;
	// and the delegation token the request came with, if any (its seq,
	// and its expiry then): the redirect token dies with it.
	Op            string `json:"o,omitempty"`
	Path          string `json:"p,omitempty"`
	Datanode      string `json:"d,omitempty"`
	Parent        uint64 `json:"ps,omitempty"`
	ParentExpires int64  `json:"pe,omitempty"`
}

// IsToken says whether cred is a token (not a plain user credential):
// smarth's form or a Hadoop delegation token's URL string.
func IsToken(cred string) bool {
	_, rest, ok := strings.Cut(cred, ":")
	return ok && strings.HasPrefix(rest, tokenTag) || IsHadoopToken(cred)
}

// Encode signs t under key.
func (t Token) Encode(key []byte) string {
	b, _ := json.Marshal(t) // a struct of strings and ints cannot fail
	payload := base64.RawURLEncoding.EncodeToString(b)
	return t.User + ":" + tokenTag + payload + "." + mac(key, "token", payload)
}

// ParseToken checks s's signature under key and decodes it. Expiry is the
// caller's business (now is theirs; renewals may have moved it).
func ParseToken(key []byte, s string) (Token, error) {
	return parseToken(key, s)
}

// PeekToken decodes s without checking its signature: for a datanode,
// which holds no key, to refuse at once a redirect token sent for another
// operation or path than the request's. Nothing it says may be trusted;
// the namenode checks the signature and scope on every call.
func PeekToken(s string) (Token, error) {
	return parseToken(nil, s)
}

func parseToken(key []byte, s string) (Token, error) {
	var t Token
	if len(s) > maxTokenLen {
		return t, fmt.Errorf("%w: token longer than %d bytes", ErrUnauthenticated, maxTokenLen)
	}
	user, rest, ok := strings.Cut(s, ":")
	if !ok || !strings.HasPrefix(rest, tokenTag) {
		return t, fmt.Errorf("%w: not a token", ErrUnauthenticated)
	}
	payload, sum, ok := strings.Cut(rest[len(tokenTag):], ".")
	if !ok || key != nil && !hmac.Equal([]byte(sum), []byte(mac(key, "token", payload))) {
		return t, fmt.Errorf("%w: the token was not issued by this namenode", ErrUnauthenticated)
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return t, fmt.Errorf("%w: token: %v", ErrUnauthenticated, err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("%w: token: %v", ErrUnauthenticated, err)
	}
	if t.User == "" || t.User != user {
		return t, fmt.Errorf("%w: token names no user", ErrUnauthenticated)
	}
	return t, nil
}

// ErrTokenExpired is wrapped by CheckExpiry.
var ErrTokenExpired = errors.New("token expired")

// CheckExpiry refuses a token past expires (unix ms) at now.
func (t Token) CheckExpiry(expires int64, now time.Time) error {
	if now.UnixMilli() > expires {
		return fmt.Errorf("%w: %w: %s token %d of %s expired at %s", ErrUnauthenticated, ErrTokenExpired, t.Kind, t.Seq, t.User,
			time.UnixMilli(expires).UTC().Format(time.RFC3339))
	}
	return nil
}
