package cluster

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/diskperm"
	"smarth/internal/pki"
)

// Identity and wire of a local cluster (docs/security.md). A cluster is
// secure unless Options.Auth says simple: the launcher creates the
// cluster's two secrets under home/keys — the namenode's identity secret,
// from which user credentials are minted, and the datanode key every
// datanode proves itself with — points the namenode and each datanode at
// them, and writes the launching user's credential to their token file in
// home/tokens (0600), as `smarth login` does, so the cluster's owner can
// use it at once and clients find it as they find the cluster
// (ClientSecurity). The resource manager checks job callers' credentials
// with the identity secret; it and the node managers reach the namenode
// with a service token (the owner's credential in home/keys/service.token:
// the owner is the namenode's superuser, so they may act for each job's
// submitter, as Hadoop's proxy users), and the resource manager takes
// heartbeats only from node managers proving the owner (nodemanager_users).
// The keys survive `cluster down` with the rest of the home, so token
// files stay valid.
//
// With Options.TLS the launcher also makes a CA in home/tls and a
// certificate per daemon (127.0.0.1, localhost and its hostname), and
// turns every daemon's tls switch on.

func (l layout) key(name string) string { return filepath.Join(l.home, "keys", name) }
func (l layout) tlsDir() string         { return filepath.Join(l.home, "tls") }

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

// checkAuth validates Options.Auth; "" is secure.
func (o *Options) checkAuth() error {
	switch o.Auth {
	case "":
		o.Auth = auth.Secure
		return nil
	case auth.Secure, auth.Simple:
		return nil
	}
	return fmt.Errorf("--auth must be %s or %s, not %q", auth.Secure, auth.Simple, o.Auth)
}

// The auth keys of each daemon kind for o.Auth. In simple mode every
// daemon is told: a config naming no auth is secure.

func (o *Options) nameNodeAuth(l layout, c *daemonconf.NameNodeConfig) {
	if o.Auth == auth.Simple {
		c.Auth = auth.Simple
		return
	}
	c.Auth, c.AuthSecretFile, c.DatanodeKeyFile = auth.Secure, l.key(identityKeyName), l.key(datanodeKeyName)
}

func (o *Options) dataNodeAuth(l layout, c *daemonconf.DataNodeConfig) {
	if o.Auth == auth.Simple {
		c.Auth = auth.Simple
		return
	}
	c.DatanodeKeyFile = l.key(datanodeKeyName)
}

func (o *Options) resourceManagerAuth(l layout, c *daemonconf.ResourceManagerConfig) {
	if o.Auth == auth.Simple {
		c.Auth = auth.Simple
		return
	}
	c.Auth, c.AuthSecretFile, c.TokenFile = auth.Secure, l.key(identityKeyName), l.key(serviceToken)
	// The node managers prove the owner (service.token); said here, not
	// left to the resource manager's default, so the config shows who
	// may heartbeat.
	if u, err := user.Current(); err == nil {
		c.NodeManagerUsers = []string{u.Username}
	}
}

func (o *Options) nodeManagerAuth(l layout, c *daemonconf.NodeManagerConfig) {
	if o.Auth == auth.Simple {
		c.Auth = auth.Simple
		return
	}
	c.TokenFile = l.key(serviceToken)
}

// wire is the TLS switch of the daemon called name (off without TLS):
// its certificate as prepareTLS issued it.
func (o *Options) wire(l layout, name string) pki.Config {
	if !o.TLS {
		return pki.Config{}
	}
	ca, _ := pki.CAFiles(l.tlsDir())
	return pki.Config{TLS: true, CAFile: ca,
		CertFile: filepath.Join(l.tlsDir(), name+".pem"), KeyFile: filepath.Join(l.tlsDir(), name+".key")}
}

// prepareTLS makes (or keeps) the cluster's CA and issues each daemon a
// certificate for 127.0.0.1, localhost and its hostname.
func (o *Options) prepareTLS(l layout) error {
	if !o.TLS {
		return nil
	}
	ca, err := pki.LoadOrCreateCA(l.tlsDir(), "smarth local cluster CA ("+l.home+")")
	if err != nil {
		return fmt.Errorf("TLS CA: %w", err)
	}
	issue := func(name, host string) error {
		hosts := []string{"127.0.0.1", "localhost"}
		if host != "" {
			hosts = append(hosts, host)
		}
		if _, _, err := ca.Issue(l.tlsDir(), name, hosts); err != nil {
			return fmt.Errorf("TLS certificate for %s: %w", name, err)
		}
		return nil
	}
	for i := range max(o.NameNodes, 1) {
		if err := issue(NameNodeName(i, o.NameNodes), ""); err != nil {
			return err
		}
	}
	if err := issue("resourcemanager", ""); err != nil {
		return err
	}
	for i := range o.DataNodes {
		if err := issue(Hostname(i), Hostname(i)); err != nil {
			return err
		}
		if err := issue(fmt.Sprintf("nm%d", i+1), Hostname(i)); err != nil {
			return err
		}
	}
	// Clients of other OS users read ca.pem by name; the directory, which
	// also holds the daemons' keys (0600), lists nothing to them.
	return diskperm.MkdirAll(l.tlsDir(), diskperm.Passage)
}

// prepareAuth creates a secure cluster's keys (kept if they exist) and
// writes the launching user's token file in home/tokens; it returns that
// file's path.
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
	// home/tokens is searchable by all (0711) but not listable: each user
	// reaches only the file named for them, whose 0600 mode and owner
	// keep it theirs (`smarth login --home H --user U` writes one for the
	// owner to chown).
	tokens := filepath.Dir(TokenFile(l.home, u.Username))
	if err := os.MkdirAll(tokens, 0o711); err != nil {
		return "", err
	}
	if err := os.Chmod(tokens, 0o711); err != nil {
		return "", err
	}
	path := TokenFile(l.home, u.Username)
	cred := auth.UserCredential(secret, u.Username)
	if err := auth.WriteTokenFile(path, cred); err != nil {
		return "", fmt.Errorf("writing %s's token file: %w", u.Username, err)
	}
	// A user who named their token file ($SMARTH_TOKEN_FILE) gets it
	// there too: their clients read that file first (ClientSecurity).
	if env := os.Getenv(EnvTokenFile); env != "" {
		if err := auth.WriteTokenFile(env, cred); err != nil {
			return "", fmt.Errorf("writing %s's token file %s ($%s): %w", u.Username, env, EnvTokenFile, err)
		}
	}
	// The daemons' own copy: the user's file may later be replaced (smarth
	// login as someone else), the service's must not change under them.
	if err := auth.WriteTokenFile(l.key(serviceToken), cred); err != nil {
		return "", fmt.Errorf("writing the service token: %w", err)
	}
	return path, nil
}
