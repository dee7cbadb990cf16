package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"github.com/spf13/cobra"

	"smarth/internal/auth"
	"smarth/internal/cluster"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newLoginCmd()} })

// newLoginCmd mints a user's credential for a secure namenode. Only who
// can read the namenode's identity secret (0600: the cluster's owner, or
// root) can run it, as only a KDC admin can mint Kerberos tickets; a user
// of someone else's cluster gets a token file from its owner.
func newLoginCmd() *cobra.Command {
	var home, secretFile, name, tokenFile string
	c := &cobra.Command{
		Use:   "login",
		Short: "Write a token file that proves a user to a secure namenode (needs the namenode's identity secret)",
		Long: `Signs a credential for a user with a secure namenode's identity secret and writes
it to a token file readable by its owner only (0600): whoever can read it is that
user to the namenode, as with a Kerberos ticket cache.

The secret is --secret-file (the namenode's auth_secret_file, default
meta_dir/auth.key), else the local cluster's (HOME/keys/auth.key, made by
'smarth cluster up'). For a local cluster the token goes to HOME/tokens/USER.token,
where clients of that cluster find it (by --namenode, $SMARTH_NAMENODE or
$SMARTH_HOME, as they find the cluster); for --secret-file it goes to
$SMARTH_TOKEN_FILE, else ~/.smarth/token. $SMARTH_TOKEN_FILE, when set, is what
every client reads first. The secret is readable by the cluster's owner only, so
only the owner (or root) can log in; for another user, pass --user and hand the
file over (chown USER, keep mode 0600).`,
		Example: `  smarth login
  smarth login --home /tmp/c1
  smarth login --secret-file /var/lib/smarth/nn/auth.key --user alice --token-file /home/alice/.smarth/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			local := secretFile == ""
			if local {
				if home == "" {
					home = cluster.Home()
				}
				secretFile = cluster.IdentitySecretFile(home)
			}
			secret, err := auth.LoadKey(secretFile)
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no identity secret at %s: is the cluster secure (smarth cluster up without --auth simple)? else pass --secret-file, the namenode's auth_secret_file", secretFile)
			}
			if err != nil {
				return fmt.Errorf("identity secret: %w", err)
			}
			if name == "" {
				u, err := user.Current()
				if err != nil {
					return fmt.Errorf("current user: %w (pass --user)", err)
				}
				name = u.Username
			}
			if tokenFile == "" && local {
				// Where clients of this cluster look (cluster.ClientSecurity).
				tokenFile = cluster.TokenFile(home, name)
				if err := os.MkdirAll(filepath.Dir(tokenFile), 0o711); err != nil {
					return err
				}
			}
			if tokenFile == "" {
				if tokenFile = auth.DefaultTokenFile(); tokenFile == "" {
					return usageErr("no default token file ($SMARTH_TOKEN_FILE or a home directory): pass --token-file")
				}
			}
			if err := auth.WriteTokenFile(tokenFile, auth.UserCredential(secret, name)); err != nil {
				return fmt.Errorf("writing the token file: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "token for %s written to %s (mode 0600)\n", name, tokenFile)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&home, "home", "", "local cluster home whose identity secret to use (default $SMARTH_HOME, else ./.smarth)")
	f.StringVar(&secretFile, "secret-file", "", "the namenode's identity secret (auth_secret_file)")
	f.StringVar(&name, "user", "", "user to log in (default: the current OS user)")
	f.StringVar(&tokenFile, "token-file", "", "where to write the token (default HOME/tokens/USER.token for a local cluster, else $SMARTH_TOKEN_FILE, else ~/.smarth/token)")
	return c
}
