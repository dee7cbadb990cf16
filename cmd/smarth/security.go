package main

import (
	"crypto/tls"
	"fmt"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/cluster"
)

// Every command that talks to a cluster finds its credential and CA the
// way it finds the namenode: $SMARTH_TOKEN_FILE / $SMARTH_TLS_CA_FILE,
// else the local cluster's (its home's tokens/USER.token and tls/ca.pem)
// when the namenode is that cluster's, else ~/.smarth/token and
// plaintext (cluster.ClientSecurity, docs/security.md).

// secured sets cfg's token file and TLS for its namenode.
func secured(cfg client.Config) (client.Config, error) {
	sec, err := cluster.ClientSecurity(cfg.NameNode)
	if err != nil {
		return cfg, err
	}
	if cfg.TokenFile == "" {
		cfg.TokenFile = sec.TokenFile
	}
	if cfg.TLS == nil {
		cfg.TLS = sec.TLS
	}
	// Short-circuit reads where the local cluster has datanode sockets.
	if cfg.DomainSocketPath == "" && !cfg.NoShortCircuitReads {
		cfg.DomainSocketPath = cluster.ClientDomainSocket(cfg.NameNode)
	}
	return cfg, nil
}

// newClient is client.New for the CLI: the config secured.
func newClient(cfg client.Config) (*client.FileSystem, error) {
	cfg, err := secured(cfg)
	if err != nil {
		return nil, err
	}
	return client.New(cfg)
}

// jobSecurity is the token file and TLS of a job client whose cluster's
// namenode is nn (the resource manager belongs to the same cluster).
func jobSecurity(nn string) (tokenFile string, t *tls.Config, err error) {
	sec, err := cluster.ClientSecurity(nn)
	return sec.TokenFile, sec.TLS, err
}

// adminCredential is the credential `smarth admin` sends ("" when there
// is none: a simple namenode).
func adminCredential(nn string) (string, *tls.Config, error) {
	sec, err := cluster.ClientSecurity(nn)
	if err != nil {
		return "", nil, err
	}
	cred, err := auth.LoadCredential(sec.TokenFile)
	if err != nil {
		return "", nil, fmt.Errorf("namenode %s: %w", nn, err)
	}
	return cred, sec.TLS, nil
}
