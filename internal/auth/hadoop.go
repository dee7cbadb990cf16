package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Hadoop's delegation tokens, byte for byte, so that Hadoop's own clients
// (WebHdfsFileSystem, `hadoop fs`, HdfsCLI's TokenClient, Spark) can carry
// a token this namenode issued: org.apache.hadoop.security.token.Token in
// its Writable form and URL string, HDFS's DelegationTokenIdentifier, and
// the password Hadoop's AbstractDelegationTokenSecretManager computes
// (HMAC-SHA1 of the identifier under a master key).

// Kinds of Hadoop delegation tokens this namenode accepts. WebHDFS hands
// out WEBHDFS (over http) or SWEBHDFS (over https) tokens; the identifier
// is HDFS's in all three, and HDFS's WebHDFS accepts any of them.
const (
	KindWebHDFS  = "WEBHDFS delegation"
	KindSWebHDFS = "SWEBHDFS delegation"
	KindHDFS     = "HDFS_DELEGATION_TOKEN"
)

// Bounds on what is decoded, checked before anything is allocated: a
// token's URL string (maxTokenLen) decodes to at most ~3 KiB, so every
// field fits it; user names longer than maxNameLen are refused (Hadoop
// allows a megabyte; no user of ours is named that long).
const maxNameLen = 256

// ErrNotHadoopToken is wrapped by a string that is no Hadoop token.
var ErrNotHadoopToken = errors.New("not a Hadoop delegation token")

// HadoopToken is Hadoop's Token: an identifier, its password, the kind
// (which says how to read the identifier) and the service (the address
// the token is for: clients pick a token by it).
type HadoopToken struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// Writable is the token as Token.write writes it: the identifier and
// password each behind a vint length, then kind and service as Text.
func (t HadoopToken) Writable() []byte {
	var b []byte
	b = appendBytes(b, t.Identifier)
	b = appendBytes(b, t.Password)
	b = appendBytes(b, []byte(t.Kind))
	return appendBytes(b, []byte(t.Service))
}

// URLString is Token.encodeToUrlString: the Writable form in URL-safe
// base64 without padding (what WebHDFS's delegation= and token= carry).
func (t HadoopToken) URLString() string {
	return base64.RawURLEncoding.EncodeToString(t.Writable())
}

// DecodeHadoopToken reads a URL string. The length is bounded before it
// is decoded, and every length inside is checked against what is left, so
// no input makes it allocate more than the input's size.
func DecodeHadoopToken(s string) (HadoopToken, error) {
	var t HadoopToken
	if len(s) > maxTokenLen {
		return t, fmt.Errorf("%w: %w: longer than %d bytes", ErrUnauthenticated, ErrNotHadoopToken, maxTokenLen)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err == nil && strings.ContainsAny(s, "\r\n") { // the decoder skips them
		err = errors.New("line break in the token")
	}
	if err != nil {
		return t, fmt.Errorf("%w: %w: %v", ErrUnauthenticated, ErrNotHadoopToken, err)
	}
	r := &writableReader{b: b}
	t = readHadoopToken(r)
	if err := r.done(); err != nil {
		return HadoopToken{}, fmt.Errorf("%w: %w: %v", ErrUnauthenticated, ErrNotHadoopToken, err)
	}
	return t, nil
}

func readHadoopToken(r *writableReader) HadoopToken {
	return HadoopToken{Identifier: r.bytes(maxTokenLen), Password: r.bytes(maxTokenLen),
		Kind: string(r.bytes(maxNameLen)), Service: string(r.bytes(maxNameLen))}
}

// IsDelegationKind says whether kind is one of the delegation kinds above.
func IsDelegationKind(kind string) bool {
	return kind == KindWebHDFS || kind == KindSWebHDFS || kind == KindHDFS
}

// IsHadoopToken says whether cred is a Hadoop delegation token (its
// signature unchecked). Such a token has no ':' (base64url has none),
// unlike a credential or smarth's own token form.
func IsHadoopToken(cred string) bool {
	if cred == "" || strings.Contains(cred, ":") {
		return false
	}
	t, err := DecodeHadoopToken(cred)
	return err == nil && IsDelegationKind(t.Kind)
}

// hadoopTokenOwner is the owner a Hadoop delegation token names
// (unverified), "" if cred is none.
func hadoopTokenOwner(cred string) string {
	if !IsHadoopToken(cred) {
		return ""
	}
	t, _ := DecodeHadoopToken(cred)
	id, err := ParseDelegationIdentifier(t.Identifier)
	if err != nil {
		return ""
	}
	return id.Owner
}

// DelegationIdentifier is HDFS's DelegationTokenIdentifier (Hadoop's
// AbstractDelegationTokenIdentifier): who the token is for (owner), who
// may renew it, the real user behind a proxy, when it was issued and the
// date past which no renewal reaches, a sequence number and the id of the
// master key its password was made with.
type DelegationIdentifier struct {
	Owner, Renewer, RealUser string
	IssueDate, MaxDate       int64 // unix ms
	Seq                      int32
	MasterKeyID              int32
}

// delegationVersion is AbstractDelegationTokenIdentifier.VERSION.
const delegationVersion = 0

// Marshal is the identifier's Writable form: the version byte, owner,
// renewer and real user as Text, issue and max date as vlongs, sequence
// number and master key id as vints.
func (id DelegationIdentifier) Marshal() []byte {
	b := []byte{delegationVersion}
	b = appendBytes(b, []byte(id.Owner))
	b = appendBytes(b, []byte(id.Renewer))
	b = appendBytes(b, []byte(id.RealUser))
	b = AppendVLong(b, id.IssueDate)
	b = AppendVLong(b, id.MaxDate)
	b = AppendVLong(b, int64(id.Seq))
	return AppendVLong(b, int64(id.MasterKeyID))
}

// ParseDelegationIdentifier reads what Marshal wrote; anything after it,
// another version, or a name longer than maxNameLen is refused.
func ParseDelegationIdentifier(b []byte) (DelegationIdentifier, error) {
	var id DelegationIdentifier
	if len(b) == 0 || b[0] != delegationVersion {
		return id, fmt.Errorf("%w: unknown version of delegation token", ErrUnauthenticated)
	}
	r := &writableReader{b: b, off: 1}
	id.Owner = string(r.bytes(maxNameLen))
	id.Renewer = string(r.bytes(maxNameLen))
	id.RealUser = string(r.bytes(maxNameLen))
	id.IssueDate = r.vlong()
	id.MaxDate = r.vlong()
	id.Seq = r.vint()
	id.MasterKeyID = r.vint()
	if err := r.done(); err != nil {
		return DelegationIdentifier{}, fmt.Errorf("%w: delegation token identifier: %v", ErrUnauthenticated, err)
	}
	if id.Owner == "" {
		return DelegationIdentifier{}, fmt.Errorf("%w: delegation token identifier names no owner", ErrUnauthenticated)
	}
	return id, nil
}

// String is DelegationTokenIdentifier.toString, as HDFS logs and names a
// token in its errors.
func (id DelegationIdentifier) String() string {
	return fmt.Sprintf("%s token %d for %s with renewer %s", KindHDFS, id.Seq, id.Owner, id.Renewer)
}

// Stable is toStringStable, what `hdfs fetchdt --print` shows.
func (id DelegationIdentifier) Stable() string {
	return fmt.Sprintf("owner=%s, renewer=%s, realUser=%s, issueDate=%d, maxDate=%d, sequenceNumber=%d, masterKeyId=%d",
		id.Owner, id.Renewer, id.RealUser, id.IssueDate, id.MaxDate, id.Seq, id.MasterKeyID)
}

// DelegationPassword is a token's password: HMAC-SHA1 of the identifier's
// bytes under the master key (Hadoop's SecretManager.createPassword).
func DelegationPassword(masterKey, identifier []byte) []byte {
	h := hmac.New(sha1.New, masterKey)
	h.Write(identifier)
	return h.Sum(nil)
}

// DelegationMasterKey is master key id's bytes, derived from the identity
// secret: the keys roll (a new id each interval) yet need no store of
// their own, survive a restart, and are the same on every namenode that
// holds the secret. Whoever holds the secret can already mint any user's
// credential, so deriving from it gives nobody anything new.
func DelegationMasterKey(secret []byte, id int32) []byte {
	return []byte(mac(secret, "delegation-key", strconv.Itoa(int(id))))
}

// HadoopTokenKey names a token in the namenode's table of renewals and
// cancellations: the first 63 bits of the SHA-256 of its identifier
// (which its password binds, so no two live tokens share it by chance).
func HadoopTokenKey(identifier []byte) uint64 {
	s := sha256.Sum256(identifier)
	return binary.BigEndian.Uint64(s[:8]) >> 1
}

// ---------------------------------------------------------------- Writable encodings

// AppendVLong is WritableUtils.writeVLong (and writeVInt): one byte for
// -112..127, else a length byte then the big-endian bytes.
func AppendVLong(b []byte, i int64) []byte {
	if i >= -112 && i <= 127 {
		return append(b, byte(i))
	}
	n := int64(-112)
	if i < 0 {
		i ^= -1
		n = -120
	}
	for t := i; t != 0; t >>= 8 {
		n--
	}
	b = append(b, byte(n))
	size := -(n + 112)
	if n < -120 {
		size = -(n + 120)
	}
	for idx := size; idx != 0; idx-- {
		b = append(b, byte(i>>((idx-1)*8)))
	}
	return b
}

// appendBytes is a vint length then the bytes (Text.write and the byte
// arrays of Token.write).
func appendBytes(b, v []byte) []byte {
	return append(AppendVLong(b, int64(len(v))), v...)
}

// writableReader reads Writable fields from a byte slice; the first error
// sticks and later reads return zero values.
type writableReader struct {
	b   []byte
	off int
	err error
}

func (r *writableReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// vlong is WritableUtils.readVLong.
func (r *writableReader) vlong() int64 {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("truncated at byte %d", r.off)
		return 0
	}
	first := int8(r.b[r.off])
	r.off++
	if first >= -112 {
		return int64(first)
	}
	n, neg := int(-112-int(first)), false
	if first < -120 {
		n, neg = int(-120-int(first)), true
	}
	if n > len(r.b)-r.off {
		r.fail("truncated at byte %d", r.off)
		return 0
	}
	var v int64
	for _, c := range r.b[r.off : r.off+n] {
		v = v<<8 | int64(c)
	}
	r.off += n
	if neg {
		v ^= -1
	}
	// Only the shortest form, as Java writes it: one value, one spelling,
	// so no two strings carry the same token.
	if len(AppendVLong(nil, v)) != n+1 {
		r.fail("overlong number at byte %d", r.off-n-1)
		return 0
	}
	return v
}

// vint is WritableUtils.readVInt: a vlong that must fit 32 bits.
func (r *writableReader) vint() int32 {
	v := r.vlong()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("value too long to fit in integer")
		return 0
	}
	return int32(v)
}

// bytes reads a vint length and that many bytes, refusing a length below
// zero, above max, or beyond what is left: nothing is allocated for a
// length the input does not hold.
func (r *writableReader) bytes(max int) []byte {
	n := r.vlong()
	if r.err != nil {
		return nil
	}
	if n < 0 || n > int64(max) || n > int64(len(r.b)-r.off) {
		r.fail("field of %d bytes at byte %d (at most %d, %d left)", n, r.off, max, len(r.b)-r.off)
		return nil
	}
	v := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return v
}

// done reports the first error, or bytes left over.
func (r *writableReader) done() error {
	if r.err == nil && r.off != len(r.b) {
		r.fail("%d bytes after the end", len(r.b)-r.off)
	}
	return r.err
}
