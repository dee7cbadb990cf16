package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestToken(t *testing.T) {
	key, other := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	now := time.UnixMilli(1_700_000_000_000)
	tok := Token{Kind: KindDelegation, User: "alice", Renewer: "alice", Issued: now.UnixMilli(), Expires: now.Add(time.Hour).UnixMilli(), Seq: 42}
	s := tok.Encode(key)
	if !IsToken(s) || IsToken(UserCredential(key, "alice")) || CredentialUser(s) != "alice" {
		t.Fatalf("token %q not told apart from a credential", s)
	}
	got, err := ParseToken(key, s)
	if err != nil || got != tok {
		t.Fatalf("ParseToken = %+v, %v", got, err)
	}
	if err := got.CheckExpiry(got.Expires, now); err != nil {
		t.Fatal(err)
	}
	if err := got.CheckExpiry(got.Expires, now.Add(2*time.Hour)); !errors.Is(err, ErrTokenExpired) || !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("expired token: %v", err)
	}
	user, rest, _ := strings.Cut(s, ":")
	payload, sum, _ := strings.Cut(strings.TrimPrefix(rest, tokenTag), ".")
	forged := Token{Kind: KindDelegation, User: "root", Expires: tok.Expires, Seq: 42}.Encode(other)
	for name, bad := range map[string]string{
		"another user's prefix":   "root:" + rest,
		"signed with another key": forged,
		"payload changed":         user + ":" + tokenTag + payload[:len(payload)-2] + "AA." + sum,
		"no signature":            user + ":" + tokenTag + payload,
		"a plain credential":      UserCredential(key, "alice"),
		"too long":                s + strings.Repeat("x", maxTokenLen),
		"empty":                   "",
	} {
		if _, err := ParseToken(key, bad); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%s: ParseToken accepted it (%v)", name, err)
		}
	}
}
