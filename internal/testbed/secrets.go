package testbed

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"smarth/internal/atomicfile"
	"smarth/internal/auth"
	"smarth/internal/pki"
	"smarth/internal/testbed/daemonplan"
)

// The testbed's cluster is secure, as every generated config is
// (docs/security.md): the identity secret and datanode key are made once
// in WORKDIR/keys (0700; kept across down/up so token files stay good),
// the owner's credential is written there (OWNER.token) for tools and
// for the services (service.token), and each host gets a 0600 copy of
// only the secrets its daemons' configs name (daemonplan.Daemon.Secrets).
// With TLS (topology tls, or an HA group) the keys directory also holds
// the testbed's CA (ca.pem and its key, which no host gets) and each
// daemon's certificate, issued before the start (daemonplan.Daemon.Cert).

func (s *State) keyDir() string { return filepath.Join(s.WorkDir, "keys") }

// TokenFile is the testbed owner's token file: what tools on the hosts
// read ($SMARTH_TOKEN_FILE in Env).
func (s *State) TokenFile() string {
	name := "smarth"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return filepath.Join(s.keyDir(), name+".token")
}

// prepareSecrets makes the cluster's secrets and the owner's token, and
// with TLS the CA and the certificates the plan's daemons name.
func (s *State) prepareSecrets(plan []daemonplan.Daemon) error {
	if err := os.MkdirAll(s.keyDir(), 0o700); err != nil {
		return err
	}
	secret, err := auth.LoadOrCreateKey(filepath.Join(s.keyDir(), daemonplan.AuthKey))
	if err != nil {
		return fmt.Errorf("identity secret: %w", err)
	}
	if _, err := auth.LoadOrCreateKey(filepath.Join(s.keyDir(), daemonplan.DataNodeKey)); err != nil {
		return fmt.Errorf("datanode key: %w", err)
	}
	u, err := user.Current()
	if err != nil {
		return err
	}
	cred := auth.UserCredential(secret, u.Username)
	for _, p := range []string{s.TokenFile(), filepath.Join(s.keyDir(), daemonplan.ServiceToken)} {
		if err := auth.WriteTokenFile(p, cred); err != nil {
			return fmt.Errorf("token file %s: %w", p, err)
		}
	}
	if !s.Topology.TLS {
		return nil
	}
	ca, err := pki.LoadOrCreateCA(s.keyDir(), "smarth testbed CA ("+s.Name+")")
	if err != nil {
		return fmt.Errorf("TLS CA: %w", err)
	}
	for _, d := range plan {
		if d.Cert == nil {
			continue
		}
		if _, _, err := ca.Issue(s.keyDir(), d.Cert.Name, d.Cert.Hosts); err != nil {
			return fmt.Errorf("TLS certificate for %s: %w", d.Name(), err)
		}
	}
	return nil
}

// CAFile is the testbed CA's certificate, which tools on the hosts trust
// ($SMARTH_TLS_CA_FILE in Env); "" without TLS.
func (s *State) CAFile() string {
	if !s.Topology.TLS {
		return ""
	}
	ca, _ := pki.CAFiles(s.keyDir())
	return ca
}

// placeSecrets copies the secrets d needs into its host's keys directory.
func (s *State) placeSecrets(d daemonplan.Daemon) error {
	for _, name := range d.Secrets {
		b, err := os.ReadFile(filepath.Join(s.keyDir(), name))
		if err != nil {
			return fmt.Errorf("%s: secret %s: %w (was the testbed's keys directory removed?)", d.Name(), name, err)
		}
		dst := daemonplan.KeyFile(s.WorkDir, d.Host, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := atomicfile.Write(dst, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
