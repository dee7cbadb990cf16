package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"smarth/internal/atomicfile"
	"smarth/internal/auth"
)

// Lifetimes: a local or testbed cluster's CA outlives any run of it; a
// daemon certificate is renewed by the next `cluster up` well before it
// expires (Issue renews one with less than a month left).
const (
	caLifetime   = 10 * 365 * 24 * time.Hour
	certLifetime = 397 * 24 * time.Hour
	renewBefore  = 30 * 24 * time.Hour
)

// CA is a certificate authority: its certificate and key.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// CAFiles are the CA's files in dir: ca.pem (public, what clients
// trust) and ca.key (0600).
func CAFiles(dir string) (cert, key string) {
	return filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
}

// LoadOrCreateCA loads the CA in dir, creating it (name in the subject)
// when there is none.
func LoadOrCreateCA(dir, name string) (*CA, error) {
	certFile, keyFile := CAFiles(dir)
	if _, err := os.Stat(certFile); err == nil {
		return LoadCA(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"smarth"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	// The key first: a ca.pem without its key would be taken for a CA
	// that exists.
	if err := writeKey(keyFile, key); err != nil {
		return nil, err
	}
	if err := writeFile(certFile, pemBlock("CERTIFICATE", der), 0o644); err != nil {
		return nil, err
	}
	return LoadCA(dir)
}

// LoadCA reads the CA in dir.
func LoadCA(dir string) (*CA, error) {
	certFile, keyFile := CAFiles(dir)
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("CA certificate %s: %w", certFile, err)
	}
	key, err := readKey(keyFile)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM}, nil
}

// Issue makes sure dir/name.pem and dir/name.key hold a certificate signed
// by ca for every host in hosts (IP addresses or DNS names), reusing the
// existing one when it is the CA's, covers them and is not about to
// expire. It returns the two paths.
func (ca *CA) Issue(dir, name string, hosts []string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if ca.current(certFile, keyFile, hosts) {
		return certFile, keyFile, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"smarth"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Servers, and clients of other daemons (a datanode dials
		// datanodes): both usages.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := writeKey(keyFile, key); err != nil {
		return "", "", err
	}
	return certFile, keyFile, writeFile(certFile, pemBlock("CERTIFICATE", der), 0o644)
}

// current reports whether certFile is ca's, covers hosts, has its key
// and lives on for a while.
func (ca *CA) current(certFile, keyFile string, hosts []string) bool {
	b, err := os.ReadFile(certFile)
	if err != nil {
		return false
	}
	cert, err := parseCert(b)
	if err != nil || cert.CheckSignatureFrom(ca.Cert) != nil || time.Until(cert.NotAfter) < renewBefore {
		return false
	}
	if _, err := readKey(keyFile); err != nil {
		return false
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
				return false
			}
		} else if h != "" && !slices.Contains(cert.DNSNames, h) {
			return false
		}
	}
	return true
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func parseCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writeFile(path, pemBlock("PRIVATE KEY", der), 0o600)
}

// readKey reads a PKCS#8 ECDSA key, refusing a file others can read.
func readKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := auth.ReadPrivateFile(path, "key file")
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an ECDSA key", path)
	}
	return ek, nil
}

// writeFile replaces path atomically with mode, making its directory.
func writeFile(path string, b []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b, mode)
}
