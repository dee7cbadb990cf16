package auth

import "testing"

// BenchmarkVerifyUser is the namenode's per-call cost of secure mode:
// one HMAC check of the caller's credential (docs/benchmarks.md, "Secure
// by default and TLS: cost", bounds the put path's security work by it).
func BenchmarkVerifyUser(b *testing.B) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	cred := UserCredential(secret, "alice")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := VerifyUser(secret, cred); err != nil {
			b.Fatal(err)
		}
	}
}
