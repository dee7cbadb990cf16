package shuffle

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// Shuffle requests are authenticated as Hadoop's ShuffleHandler does
// them: the resource manager makes a random secret per job and gives it
// to the job's tasks only; a reduce signs each request with it
// (HashHeader, an HMAC over the request), the node serving the map
// output checks the signature against the job's secret before it sends
// a byte, and signs its reply (ReplyHeader, an HMAC over the request's
// signature) so the reduce knows it talks to a holder of the secret.
// Knowing a job and attempt id is then not enough to read map output.
// The secret travels in the resource manager's heartbeat replies, which
// are only as private as that connection (TLS on the control plane is
// the cluster's switch, not this package's).

// Headers of an authenticated fetch and of the segment's checksum.
const (
	HashHeader  = "X-Smarth-Shuffle-Hash"
	ReplyHeader = "X-Smarth-Shuffle-Reply"
	CRCHeader   = "X-Smarth-Segment-Crc32c"
)

// SecretBytes is the length of a job's shuffle secret.
const SecretBytes = 32

// NewSecret returns a fresh random job secret.
func NewSecret() ([]byte, error) {
	b := make([]byte, SecretBytes)
	_, err := rand.Read(b)
	return b, err
}

// sign is the HMAC-SHA256 of msg under secret, base64.
func sign(secret []byte, msg string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// verify compares a signature in constant time.
func verify(secret []byte, msg, sig string) bool {
	return hmac.Equal([]byte(sign(secret, msg)), []byte(sig))
}

// canonical is what a request's signature covers: every field that
// chooses the bytes served, so a signature for one partition does not
// fetch another.
func (r Request) canonical() string {
	return "smarth-shuffle\x00" + r.JobID + "\x00" + r.Attempt + "\x00" + strconv.Itoa(r.Reduce)
}

// Sign is the request's signature under the job's secret.
func (r Request) Sign(secret []byte) string { return sign(secret, r.canonical()) }
