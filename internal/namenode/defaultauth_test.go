package namenode

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"gopkg.in/yaml.v3"

	"smarth/internal/auth"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// startFromYAML starts a namenode from a hand-written config file's
// text, decoded over DefaultConfig as `smarth namenode --config` does,
// and returns it with its log.
func startFromYAML(t *testing.T, text string) (*NameNode, Config, *syncbuf.Buffer) {
	t.Helper()
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	nn, err := New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	return nn, cfg, &logs
}

// minimalConfig is the smallest hand-written namenode config, naming no
// auth (as bench/nn-restart.sh and the docs' examples do).
func minimalConfig(t *testing.T) string {
	return "rpc_addr: 127.0.0.1:0\nhttp_addr: 127.0.0.1:0\nmeta_dir: " + t.TempDir() + "\nsuperuser: hdfs\n"
}

// A config that names no auth is secure: a caller with no credential, or
// one that only asserts a name (even the superuser's), is refused; the
// identity secret and datanode key are made under meta_dir, private.
func TestConfigWithoutAuthIsSecure(t *testing.T) {
	nn, cfg, logs := startFromYAML(t, minimalConfig(t))
	if cfg.Auth != auth.Secure {
		t.Fatalf("auth = %q for a config naming none, want secure", cfg.Auth)
	}
	c := dial(t, nn.Addr(), "")
	_, err := c.cp.Mkdirs(callAs(), &dfspb.MkdirsRequest{Path: "/a"})
	wantErr(t, err, codes.Unauthenticated, "no credential")
	_, err = c.cp.Mkdirs(callAs(auth.MDUser, "hdfs"), &dfspb.MkdirsRequest{Path: "/a"})
	wantErr(t, err, codes.Unauthenticated, "no credential")
	_, err = c.cp.GetFileInfo(callAs(auth.MDUser, "alice"), &dfspb.GetFileInfoRequest{Path: "/"})
	wantErr(t, err, codes.Unauthenticated, "no credential")

	for _, name := range []string{"auth.key", "datanode.key"} {
		st, err := os.Stat(filepath.Join(cfg.MetaDir, name))
		if err != nil {
			t.Fatalf("secure namenode did not create %s: %v", name, err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", name, st.Mode().Perm())
		}
	}
	secret, err := auth.LoadKey(filepath.Join(cfg.MetaDir, "auth.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.Mkdirs(callAs(auth.MDCredential, auth.UserCredential(secret, "hdfs")), &dfspb.MkdirsRequest{Path: "/a", Permission: 0o755}); err != nil {
		t.Fatalf("a credential from meta_dir/auth.key was refused: %v", err)
	}
	if strings.Contains(logs.String(), "auth is simple") {
		t.Errorf("a secure namenode warned about simple mode:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "datanode_key_file="+filepath.Join(cfg.MetaDir, "datanode.key")) {
		t.Errorf("the start-up log does not say where the datanode key is:\n%s", logs)
	}
}

// A Config built in code with Auth unset is secure too.
func TestZeroAuthIsSecure(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = ""
	nn := startNN(t, cfg)
	_, err := dial(t, nn.Addr(), "hdfs").cp.Mkdirs(callAs(auth.MDUser, "hdfs"), &dfspb.MkdirsRequest{Path: "/a"})
	wantErr(t, err, codes.Unauthenticated, "no credential")
}

// Simple mode is opt-in and warned about: the asserted name is trusted,
// and the log says so at start.
func TestSimpleModeWarns(t *testing.T) {
	nn, _, logs := startFromYAML(t, minimalConfig(t)+"auth: simple\n")
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "auth is simple") {
		t.Fatalf("no warning for auth: simple in the start-up log:\n%s", logs)
	}
	if _, err := dial(t, nn.Addr(), "").cp.Mkdirs(callAs(auth.MDUser, "hdfs"), &dfspb.MkdirsRequest{Path: "/a", Permission: 0o755}); err != nil {
		t.Fatalf("simple mode refused an asserted superuser: %v", err)
	}
}
