package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"smarth/internal/atomicfile"
	"strings"
)

// Metadata keys on control-plane calls.
const (
	MDUser       = "smarth-user"       // asserted user: trusted only in simple mode
	MDCredential = "smarth-auth"       // user credential (secure mode)
	MDProxyUser  = "smarth-proxy-user" // act for this user (proxy users only)
	MDDatanode   = "smarth-dn-auth"    // datanode credential: "id:mac"
)

// Modes of the namenode's auth key.
const (
	Simple = "simple" // trust the asserted name (Hadoop simple auth)
	Secure = "secure" // verify a credential
)

// ErrUnauthenticated is wrapped by every failed proof.
var ErrUnauthenticated = errors.New("not authenticated")

// keyLen is the size of generated secrets.
const keyLen = 32

// LoadOrCreateKey reads a secret key file, creating it (0600, random)
// when missing. A key file others can read is refused: it would let them
// mint credentials.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := LoadKey(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	key = make([]byte, keyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) { // created meanwhile by another process
			return LoadKey(path)
		}
		return nil, err
	}
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("writing key %s: %w", path, err)
	}
	return key, nil
}

// LoadKey reads a hex key file written by LoadOrCreateKey.
func LoadKey(path string) ([]byte, error) {
	b, err := ReadPrivateFile(path, "key file")
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("key file %s: not a hex key of at least 16 bytes", path)
	}
	return key, nil
}

func mac(key []byte, kind, name string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return hex.EncodeToString(h.Sum(nil))
}

// UserCredential mints user's credential under the identity secret.
func UserCredential(secret []byte, user string) string {
	return user + ":" + mac(secret, "user", user)
}

// VerifyUser checks a user credential and returns the user it proves.
func VerifyUser(secret []byte, cred string) (string, error) {
	user, sum, ok := strings.Cut(cred, ":")
	if !ok || user == "" {
		return "", fmt.Errorf("%w: no credential (run `smarth login`, or point token_file / SMARTH_TOKEN_FILE at your token)", ErrUnauthenticated)
	}
	if !hmac.Equal([]byte(sum), []byte(mac(secret, "user", user))) {
		return "", fmt.Errorf("%w: the credential for user %s was not issued by this namenode", ErrUnauthenticated, user)
	}
	return user, nil
}

// DatanodeCredential proves a datanode id holds the cluster's datanode key.
func DatanodeCredential(key []byte, id string) string {
	return id + ":" + mac(key, "datanode", id)
}

// VerifyDatanode checks a datanode credential and returns the id it
// proves.
func VerifyDatanode(key []byte, cred string) (string, error) {
	id, sum, ok := strings.Cut(cred, ":")
	if !ok || id == "" || !hmac.Equal([]byte(sum), []byte(mac(key, "datanode", id))) {
		return "", fmt.Errorf("%w: the datanode protocol needs the cluster's datanode key (datanode_key_file)", ErrUnauthenticated)
	}
	return id, nil
}

// WriteTokenFile stores a user credential readable by its owner only.
func WriteTokenFile(path, cred string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(cred+"\n"), 0o600)
}

// ReadTokenFile reads a credential written by WriteTokenFile, or the
// first delegation token of a Hadoop token file (`smarth fs fetchdt`'s),
// refusing a file others can read (anyone who can read it can act as its
// user).
func ReadTokenFile(path string) (string, error) {
	b, err := ReadPrivateFile(path, "token file")
	if err != nil {
		return "", err
	}
	if bytes.HasPrefix(b, tokenStorageMagic) {
		toks, err := ParseTokenStorage(b)
		if err != nil {
			return "", fmt.Errorf("token file %s: %w", path, err)
		}
		for _, st := range toks {
			if IsDelegationKind(st.Token.Kind) {
				return st.Token.URLString(), nil
			}
		}
		return "", fmt.Errorf("token file %s: no delegation token in it", path)
	}
	return strings.TrimSpace(string(b)), nil
}

// LoadCredential reads the credential in tokenFile, else in
// DefaultTokenFile(). A missing default file is no error (a simple-mode
// server needs no credential: it returns ""); a named file that cannot be
// read, or one others can read, is.
func LoadCredential(tokenFile string) (string, error) {
	path, named := tokenFile, tokenFile != ""
	if !named {
		path = DefaultTokenFile()
	}
	if path == "" {
		return "", nil
	}
	cred, err := ReadTokenFile(path)
	if errors.Is(err, os.ErrNotExist) && !named {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return cred, nil
}

// CredentialUser is the user a credential names (unverified): a Hadoop
// delegation token's owner, else what precedes the ':'.
func CredentialUser(cred string) string {
	if u := hadoopTokenOwner(cred); u != "" {
		return u
	}
	u, _, _ := strings.Cut(cred, ":")
	return u
}

// DefaultTokenFile is where a user's credential is looked for when none
// is configured: $SMARTH_TOKEN_FILE, else ~/.smarth/token.
func DefaultTokenFile() string {
	if p := os.Getenv("SMARTH_TOKEN_FILE"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".smarth", "token")
}

// DefaultMode is the mode of a daemon whose config names no auth: secure,
// as the issue and docs/security.md promise. Simple is opt-in only.
const DefaultMode = Secure

// ParseMode reads a daemon config's auth key: "" is DefaultMode.
func ParseMode(s string) (string, error) {
	switch s {
	case "":
		return DefaultMode, nil
	case Secure, Simple:
		return s, nil
	}
	return "", fmt.Errorf("auth: %q must be %q or %q", s, Secure, Simple)
}

// SimpleWarning is what every daemon logs at start in simple mode.
const SimpleWarning = "auth is simple: callers' asserted user names are trusted and nothing is authenticated; use only on a trusted network (remove `auth: simple` for the secure default)"

// Where a daemon of a secure cluster gets the secrets it needs, for the
// errors that say one is missing.
const (
	// DatanodeKeyHint: datanodes' datanode_key_file.
	DatanodeKeyHint = "copy the namenode's datanode key (its datanode_key_file, by default meta_dir/datanode.key, written 0600 at its first secure start; `smarth cluster up` keeps it in HOME/keys/datanode.key) to this host, chmod 600, and name it in datanode_key_file; or set auth: simple, on a trusted network only"
	// IdentitySecretHint: the resource manager's auth_secret_file.
	IdentitySecretHint = "name the namenode's identity secret (its auth_secret_file, by default meta_dir/auth.key, written 0600 at its first secure start; `smarth cluster up` keeps it in HOME/keys/auth.key) in auth_secret_file; or set auth: simple, on a trusted network only"
	// ServiceTokenHint: the resource manager's and node managers' token_file.
	ServiceTokenHint = "mint a credential for this daemon's user (the namenode's superuser or one of its proxy_users) with `smarth login --secret-file NAMENODE_AUTH_SECRET --user USER --token-file PATH`, and name PATH in token_file (or set SMARTH_TOKEN_FILE); or set auth: simple, on a trusted network only"
)

// RequireKeyFile checks at a daemon's start that the key file its config
// names under key is set, exists and is private, so that a secure daemon
// without one stops with an error naming the file and hint (where to get
// it) instead of failing later at registration.
func RequireKeyFile(key, path, hint string) error {
	if path == "" {
		return fmt.Errorf("%s: not set, and auth is secure (the default): %s", key, hint)
	}
	if _, err := LoadKey(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: %s does not exist: %s", key, path, hint)
		}
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// RequireCredential checks at a daemon's start that it has a credential
// to reach a secure namenode with: the token file its config names under
// key, else DefaultTokenFile().
func RequireCredential(key, tokenFile, hint string) error {
	cred, err := LoadCredential(tokenFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: %s does not exist: %s", key, tokenFile, hint)
		}
		return fmt.Errorf("%s: %w", key, err)
	}
	if cred == "" {
		where := DefaultTokenFile()
		if where == "" {
			where = "$SMARTH_TOKEN_FILE or ~/.smarth/token"
		}
		return fmt.Errorf("%s: not set and %s does not exist, and auth is secure (the default): %s", key, where, hint)
	}
	return nil
}
