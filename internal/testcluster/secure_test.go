package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

func putGet(t *testing.T, fs *client.FileSystem, path string, data []byte) {
	t.Helper()
	ctx := context.Background()
	w, err := fs.Create(ctx, path, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d of %d bytes, err %v", len(got), len(data), err)
	}
}

func isUnauthenticated(err error) bool {
	return status.Code(errors.Unwrap(err)) == codes.Unauthenticated || status.Code(err) == codes.Unauthenticated ||
		(err != nil && strings.Contains(err.Error(), "not authenticated"))
}

// The default test cluster is secure: datanodes register with the
// datanode key, the harness's client (credential minted for its user)
// writes and reads through block tokens; a user without a token file is
// refused, and so is one claiming another user in metadata.
func TestSecureByDefault(t *testing.T) {
	c := Start(t, Options{DataNodes: 3})
	putGet(t, c.Client(t), "/s", bytes.Repeat([]byte("secure"), 100_000))
	ctx := context.Background()

	// No token file at all (the default location is empty).
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(t.TempDir(), "none"))
	anon, err := client.New(client.Config{NameNode: c.NameNodeAddr()})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.Stat(ctx, "/s"); !isUnauthenticated(err) {
		t.Fatalf("a client without a token file: %v, want not authenticated", err)
	}
	// A named token file that is missing is an error at once.
	if _, err := client.New(client.Config{NameNode: c.NameNodeAddr(), TokenFile: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("a missing named token file was accepted")
	}
	// A made-up credential.
	forged, err := client.New(client.Config{NameNode: c.NameNodeAddr(), Credential: "nobody:00"})
	if err != nil {
		t.Fatal(err)
	}
	defer forged.Close()
	if _, err := forged.Stat(ctx, "/s"); !isUnauthenticated(err) {
		t.Fatalf("a made-up credential: %v, want not authenticated", err)
	}

	// Claiming the superuser (the OS user running the namenode) and the
	// supergroup in metadata, without a credential, gives nothing; with
	// mallory's credential, asking to be the superuser is a proxy request
	// mallory may not make.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(c.NameNodeAddr(), pki.DialOption(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	nn := dfspb.NewClientProtocolClient(conn)
	claim := metadata.AppendToOutgoingContext(ctx, auth.MDUser, me.Username, "smarth-groups", "supergroup")
	if _, err := nn.Delete(claim, &dfspb.DeleteRequest{Path: "/s"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("delete claiming %s in metadata: %v, want Unauthenticated", me.Username, err)
	}
	mallory := metadata.AppendToOutgoingContext(ctx, auth.MDCredential, c.Credential("mallory"), auth.MDProxyUser, me.Username)
	if _, err := nn.Delete(mallory, &dfspb.DeleteRequest{Path: "/s"}); err == nil {
		t.Fatal("mallory acting for the superuser deleted /s")
	}
	if _, err := c.Client(t).Stat(ctx, "/s"); err != nil {
		t.Fatalf("/s after the refused deletes: %v", err)
	}
}

// Simple mode, opt-in: the asserted name is trusted.
func TestSimpleModeTrustsAssertedName(t *testing.T) {
	c := Start(t, Options{DataNodes: 1, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/home/bob", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/home/bob", "bob", ""); err != nil {
		t.Fatal(err)
	}
	fs := c.Client(t, WithUser("bob"))
	if err := fs.Mkdir(ctx, "/home/bob/d", 0o755, true); err != nil {
		t.Fatal(err)
	}
	fi, err := fs.Stat(ctx, "/home/bob/d")
	if err != nil || fi.Owner != "bob" {
		t.Fatalf("owner %q, err %v; want bob", fi.Owner, err)
	}
}

// With TLS on, the whole cluster speaks TLS: a client trusting the CA
// writes and reads (RPC and data transfer, a 3-node pipeline, so datanode
// to datanode too); a plaintext client and one trusting another CA are
// refused by the namenode and the datanodes; the web server answers
// HTTPS only.
func TestTLSCluster(t *testing.T) {
	c := Start(t, Options{DataNodes: 3, TLS: true})
	putGet(t, c.Client(t), "/t", bytes.Repeat([]byte("tls!"), 300_000)) // > 1 block
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	cred := c.Credential(osUser())
	plain, err := client.New(client.Config{NameNode: c.NameNodeAddr(), Credential: cred, RPCTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Stat(ctx, "/t"); err == nil {
		t.Fatal("a plaintext client was served by a TLS namenode")
	}

	other, err := pki.LoadOrCreateCA(t.TempDir(), "another cluster")
	if err != nil {
		t.Fatal(err)
	}
	otherTLS := &tls.Config{RootCAs: poolOf(t, other), MinVersion: tls.VersionTLS13}
	stranger, err := client.New(client.Config{NameNode: c.NameNodeAddr(), Credential: cred, TLS: otherTLS, RPCTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	if _, err := stranger.Stat(ctx, "/t"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client trusting another CA: %v, want a certificate error", err)
	}

	// The data port: a plaintext op request gets no op response, and a
	// handshake trusting another CA fails.
	dn := c.DataNode(0).DataAddr()
	raw, err := net.DialTimeout("tcp", dn, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	raw.Write([]byte{0, 28, 81, 0, 0, 0, 0}) // version 28, READ_BLOCK, empty op
	b, _ := io.ReadAll(bufio.NewReader(raw))
	raw.Close()
	if len(b) > 0 && b[0] != 0x15 { // anything but a TLS alert record
		t.Fatalf("a plaintext op on a TLS data port got %d bytes back (%x...)", len(b), b[:min(8, len(b))])
	}
	if _, err := pki.Dialer(otherTLS, func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	})(ctx, dn); err == nil {
		t.Fatal("a data connection trusting another CA was made")
	}

	web := c.NameNodeHTTPAddr()
	if resp, err := http.Get("http://" + web + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte("smarth_")) {
			t.Fatal("the namenode's web server answered plain HTTP")
		}
	}
	// A client that offers HTTP/2 first, as browsers and curl do, is
	// served too (over HTTP/1.1: the port offers only that).
	for _, h2 := range []bool{false, true} {
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: c.ClientTLS().Clone(), ForceAttemptHTTP2: h2}, Timeout: 10 * time.Second}
		for _, addr := range []string{web, c.DataNode(0).HTTPAddr()} {
			resp, err := hc.Get("https://" + addr + "/metrics")
			if err != nil {
				t.Fatalf("https to %s (client offering HTTP/2: %v): %v", addr, h2, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("https %s/metrics (client offering HTTP/2: %v): %s", addr, h2, resp.Status)
			}
		}
	}
}

func poolOf(t *testing.T, ca *pki.CA) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}
