package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"smarth/internal/auth"
	"smarth/internal/pki"
)

// A client finds its credential and the CA to trust the way it finds its
// namenode (DefaultNameNode): what the environment names, else what the
// local cluster in Home() holds for the namenode it is about to call.
// A local cluster's credential is sent only to that cluster's namenode:
// a credential is a bearer secret, and another cluster's namenode that
// got it could act as its user here.

// Environment variables a client reads (docs/security.md).
const (
	EnvTokenFile = "SMARTH_TOKEN_FILE"  // the user's token file for any namenode
	EnvCAFile    = "SMARTH_TLS_CA_FILE" // the CA of a TLS cluster: TLS on, verified against it
)

// TokenFile is user's token file in a local cluster's home:
// home/tokens/USER.token, 0600, owned by the user.
func TokenFile(home, user string) string {
	return filepath.Join(home, "tokens", user+".token")
}

// CAFile is a TLS local cluster's CA certificate.
func CAFile(home string) string {
	ca, _ := pki.CAFiles(filepath.Join(home, "tls"))
	return ca
}

// Security is what a client of one namenode uses to prove its user and
// check the servers: the token file ("" leaves it to the client
// library's default, ~/.smarth/token) and the TLS config (nil:
// plaintext).
type Security struct {
	TokenFile string
	TLS       *tls.Config
}

// ClientSecurity is the Security for a client of the namenode at nn:
// $SMARTH_TOKEN_FILE and $SMARTH_TLS_CA_FILE when set, else the local
// cluster's token file for the current OS user and CA when nn is that
// cluster's namenode.
func ClientSecurity(nn string) (Security, error) {
	var st *State
	if loaded, err := LoadState(Home()); err == nil && sameAddr(loaded.NameNode, nn) {
		st = loaded
	}
	return st.ClientSecurity()
}

// ClientSecurity is ClientSecurity's answer for a client of the cluster in
// st, whatever $SMARTH_HOME names (a tool given --home): the environment's
// token file and CA when set, else st's. A nil st has only the
// environment's.
func (st *State) ClientSecurity() (Security, error) {
	var s Security
	s.TokenFile = os.Getenv(EnvTokenFile)
	if s.TokenFile == "" && st != nil && st.Home != "" {
		if u, err := user.Current(); err == nil {
			if p := TokenFile(st.Home, u.Username); fileExists(p) {
				s.TokenFile = p
			}
		}
	}
	ca := os.Getenv(EnvCAFile)
	if ca == "" && st != nil && st.TLS && st.Home != "" {
		ca = CAFile(st.Home)
	}
	if ca != "" {
		t, err := pki.ClientConfig(ca)
		if err != nil {
			return s, fmt.Errorf("%w (the CA comes from $%s or the local cluster's home)", err, EnvCAFile)
		}
		s.TLS = t
	}
	return s, nil
}

// Security is what the cluster's owner's tools (Up's waits, status, the
// demo, the workload runner) use with the cluster in st: the owner's
// token file in the home and the cluster's CA.
func (st *State) Security() (Security, error) {
	if st.Home == "" {
		// A cluster known only from the environment (a testbed's, whose
		// tools get $SMARTH_TOKEN_FILE and $SMARTH_TLS_CA_FILE): its
		// owner's files are the ones the environment names.
		return st.ClientSecurity()
	}
	var s Security
	if u, err := user.Current(); err == nil {
		if p := TokenFile(st.Home, u.Username); fileExists(p) {
			s.TokenFile = p
		}
	}
	if st.TLS {
		t, err := pki.ClientConfig(CAFile(st.Home))
		if err != nil {
			return s, err
		}
		s.TLS = t
	}
	return s, nil
}

// credential reads the token file ("" when there is none).
func (s Security) credential() string {
	path := s.TokenFile
	if path == "" {
		path = auth.DefaultTokenFile()
	}
	cred, err := auth.ReadTokenFile(path)
	if err != nil {
		return ""
	}
	return cred
}

// sameAddr reports whether two namenode addresses name the same endpoint:
// equal, or the same port on loopback names (127.0.0.1, localhost, ::1).
func sameAddr(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	// An HA group's namenodes, as a comma list on either side: the same
	// cluster when they share a namenode.
	if strings.Contains(a, ",") || strings.Contains(b, ",") {
		for _, x := range strings.Split(a, ",") {
			for _, y := range strings.Split(b, ",") {
				if sameAddr(strings.TrimSpace(x), strings.TrimSpace(y)) {
					return true
				}
			}
		}
		return false
	}
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	return err1 == nil && err2 == nil && pa == pb && loopback(ha) && loopback(hb)
}

func loopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return !errors.Is(err, os.ErrNotExist)
}

// WebScheme is the scheme of the cluster's web servers: https with TLS.
func (s *State) WebScheme() string {
	if s.TLS {
		return "https"
	}
	return "http"
}
