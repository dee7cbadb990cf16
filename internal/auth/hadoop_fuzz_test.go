package auth

import (
	"bytes"
	"testing"
)

// FuzzHadoopToken feeds arbitrary URL strings to the token decoder and
// arbitrary bytes to the identifier and token-file decoders: none may
// panic, and what they accept is exactly what the encoders write, so no
// slack (padding, overlong numbers, trailing bytes) lets one token be
// spelled two ways.
func FuzzHadoopToken(f *testing.F) {
	id := DelegationIdentifier{Owner: "alice", Renewer: "yarn", IssueDate: 1764072000000, MaxDate: 1764676800000, Seq: 12345, MasterKeyID: 20417}
	tok := HadoopToken{Identifier: id.Marshal(), Password: DelegationPassword([]byte("k"), id.Marshal()), Kind: KindWebHDFS, Service: "127.0.0.1:9870"}
	// Seeds: a real token, trailing bytes, truncations, a negative length,
	// a length beyond what is left ("fw": 127 and nothing after).
	for _, s := range []string{tok.URLString(), tok.URLString() + "A", "", "AAAA", "_w", "gP____8", "fw"} {
		f.Add(s, []byte(s))
	}
	f.Add("", tok.Identifier)
	f.Add("", []byte{0, 0x8f, 0x01, 'a', 0, 0, 0, 0, 0, 0}) // owner's length spelled in two bytes
	f.Add("", MarshalTokenStorage([]StoredToken{{Alias: "a", Token: tok}}))
	f.Add("", append([]byte("HDTS\x00\x01\x01a"), tok.Writable()...))
	f.Fuzz(func(t *testing.T, s string, b []byte) {
		if got, err := DecodeHadoopToken(s); err == nil && got.URLString() != s {
			t.Fatalf("%q decoded to a token spelled %q", s, got.URLString())
		}
		if got, err := ParseDelegationIdentifier(b); err == nil && !bytes.Equal(got.Marshal(), b) {
			t.Fatalf("identifier % x read as %+v, written % x", b, got, got.Marshal())
		}
		if toks, err := ParseTokenStorage(b); err == nil {
			again, err := ParseTokenStorage(MarshalTokenStorage(toks))
			if err != nil || len(again) != len(toks) {
				t.Fatalf("token file read as %d tokens, rewritten: %d, %v", len(toks), len(again), err)
			}
		}
		_ = IsToken(s)
		_ = CredentialUser(s)
	})
}

// TestTokenStorageRoundTrip: a file written is read back, in both the
// version Hadoop 3.4 writes (1) and the legacy one (0) it still reads.
func TestTokenStorageRoundTrip(t *testing.T) {
	id := DelegationIdentifier{Owner: "alice", Renewer: "alice", IssueDate: 1, MaxDate: 2, Seq: 3, MasterKeyID: 4}
	tok := HadoopToken{Identifier: id.Marshal(), Password: []byte("pw"), Kind: KindWebHDFS, Service: "127.0.0.1:9870"}
	b := MarshalTokenStorage([]StoredToken{{Alias: tok.Service, Token: tok}})
	if string(b[:5]) != "HDTS\x01" {
		t.Fatalf("header % x", b[:5])
	}
	legacy := append([]byte("HDTS\x00\x01"), appendBytes(nil, []byte(tok.Service))...)
	legacy = append(append(legacy, tok.Writable()...), 0)
	for name, file := range map[string][]byte{"version 1": b, "version 0": legacy} {
		toks, err := ParseTokenStorage(file)
		if err != nil || len(toks) != 1 || toks[0].Alias != tok.Service || toks[0].Token.URLString() != tok.URLString() {
			t.Fatalf("%s: %+v %v", name, toks, err)
		}
	}
	if _, err := ParseTokenStorage([]byte("HDTS\x02")); err == nil || err.Error() != "Unknown version 2 in token storage." {
		t.Fatalf("version 2: %v", err)
	}
	if _, err := ParseTokenStorage([]byte("HDTX\x01")); err == nil || err.Error() != "Bad header found in token storage." {
		t.Fatalf("bad magic: %v", err)
	}
}
