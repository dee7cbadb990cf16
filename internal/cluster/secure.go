package cluster

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"smarth/internal/auth"
)

// Identity of a local cluster (docs/security.md). With Options.Auth
// "secure" the launcher creates the cluster's two secrets under
// home/keys — the namenode's identity secret, from which user credentials
// are minted, and the datanode key every datanode proves itself with —
// points the namenode and each datanode at them, and writes the
// launching user's credential to their token file, as `smarth login`
// does, so the cluster's owner can use it at once. The resource manager
// checks job callers' credentials with the identity secret; it and the
// node managers reach the namenode with a service token (the owner's
// credential in home/keys/service.token: the owner is the namenode's
// superuser, so they may act for each job's submitter, as Hadoop's
// proxy users). The keys survive `cluster down` with the rest of the home,
// so token files stay valid.

func (l layout) key(name string) string { return filepath.Join(l.home, "keys", name) }

// Key files of a local cluster, relative to nothing: the names under
// home/keys.
const (
	identityKeyName = "auth.key"
	datanodeKeyName = "datanode.key"
	serviceToken    = "service.token"
)

// IdentitySecretFile is the identity secret of the secure local cluster in
// home (what `smarth login --home` signs credentials with).
func IdentitySecretFile(home string) string { return layout{home}.key(identityKeyName) }

// checkAuth validates Options.Auth.
func (o *Options) checkAuth() error {
	switch o.Auth {
	case "", auth.Simple:
		return nil
	case auth.Secure:
		return nil
	}
	return fmt.Errorf("--auth must be %s or %s, not %q", auth.Secure, auth.Simple, o.Auth)
}

// authKeys are each daemon kind's config keys for o.Auth.
func (o *Options) authKeys(l layout) (namenode, datanode, resourceManager, nodeManager map[string]any) {
	switch o.Auth {
	case auth.Secure:
		return map[string]any{"auth": auth.Secure, "auth_secret_file": l.key(identityKeyName), "datanode_key_file": l.key(datanodeKeyName)},
			map[string]any{"datanode_key_file": l.key(datanodeKeyName)},
			map[string]any{"auth": auth.Secure, "auth_secret_file": l.key(identityKeyName), "token_file": l.key(serviceToken)},
			map[string]any{"token_file": l.key(serviceToken)}
	case auth.Simple:
		return map[string]any{"auth": auth.Simple}, nil, nil, nil
	}
	return nil, nil, nil, nil
}

// prepareAuth creates a secure cluster's keys (kept if they exist) and
// writes the launching user's token file; it returns that file's path.
func (o *Options) prepareAuth(l layout) (string, error) {
	if o.Auth != auth.Secure {
		return "", nil
	}
	if err := os.MkdirAll(filepath.Dir(l.key(identityKeyName)), 0o700); err != nil {
		return "", err
	}
	secret, err := auth.LoadOrCreateKey(l.key(identityKeyName))
	if err != nil {
		return "", fmt.Errorf("identity secret: %w", err)
	}
	if _, err := auth.LoadOrCreateKey(l.key(datanodeKeyName)); err != nil {
		return "", fmt.Errorf("datanode key: %w", err)
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("who is launching the cluster: %w", err)
	}
	path := auth.DefaultTokenFile()
	if path == "" {
		return "", fmt.Errorf("no token file: set SMARTH_TOKEN_FILE or HOME")
	}
	cred := auth.UserCredential(secret, u.Username)
	if err := auth.WriteTokenFile(path, cred); err != nil {
		return "", fmt.Errorf("writing %s's token file: %w", u.Username, err)
	}
	// The daemons' own copy: the user's file may later be replaced (smarth
	// login as someone else), the service's must not change under them.
	if err := auth.WriteTokenFile(l.key(serviceToken), cred); err != nil {
		return "", fmt.Errorf("writing the service token: %w", err)
	}
	return path, nil
}
