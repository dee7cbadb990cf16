package webhdfs_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/testcluster"
)

// Hadoop's own clients on the default (secure) cluster, holding a token
// from `smarth fs fetchdt`: Hadoop's Java FsShell (`hadoop fs`) reads it
// from HADOOP_TOKEN_FILE_LOCATION, HdfsCLI's TokenClient takes its URL
// string. Without a token both are refused (no Kerberos here); with a
// cancelled, forged or edited one too.

// secureClientCluster is a secure cluster with /user/alice owned by alice,
// and a 0600 file holding alice's credential.
func secureClientCluster(t *testing.T) (*testcluster.Cluster, string) {
	return secureClientClusterWith(t, nil)
}

// secureClientClusterWith is secureClientCluster with namenode config
// keys set (nn may be nil).
func secureClientClusterWith(t *testing.T, nn map[string]any) (*testcluster.Cluster, string) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2, BlockSize: 1 << 20, NameNode: nn})
	ctx := context.Background()
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/user/alice", 0o700, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/user/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	cred := filepath.Join(t.TempDir(), "alice.token")
	if err := auth.WriteTokenFile(cred, c.Credential("alice")); err != nil {
		t.Fatal(err)
	}
	return c, cred
}

// smarthCmd runs the smarth CLI as the holder of credFile, away from any
// local cluster's state, and returns its output and exit error.
func smarthCmd(t *testing.T, credFile string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testcluster.Binary(t), args...)
	cmd.Env = append(os.Environ(), "SMARTH_TOKEN_FILE="+credFile, "SMARTH_HOME="+t.TempDir(), "SMARTH_NAMENODE=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// fetchdt runs `smarth fs fetchdt` into a new file and returns its path.
func fetchdt(t *testing.T, c *testcluster.Cluster, credFile string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "alice.dt")
	web := "http://" + c.NameNodeHTTPAddr()
	out, err := smarthCmd(t, credFile, "fs", "--namenode", c.NameNodeAddr(), "fetchdt", "--webservice", web, file)
	if want := "Fetched token via " + web + " for " + c.NameNodeHTTPAddr() + " into " + file; err != nil || strings.TrimSpace(out) != want {
		t.Fatalf("fetchdt: %v\n%s\nwant %q", err, out, want)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", st, err)
	}
	return file
}

// hadoopFs runs Hadoop's FsShell (what `hadoop fs` runs) on each command
// line in one JVM (javaclient's FsShells), with
// HADOOP_TOKEN_FILE_LOCATION=tokenFile; a line starting "--token FILE"
// runs as a user holding only FILE's tokens. It returns each line's
// output (stdout and stderr) and exit code.
func hadoopFs(t *testing.T, cp, tokenFile string, lines ...[]string) ([]string, []int) {
	t.Helper()
	return hadoopFsWith(t, cp, javaEnv{env: []string{"HADOOP_TOKEN_FILE_LOCATION=" + tokenFile}}, lines...)
}

// javaEnv is what a Hadoop client process gets besides its command lines:
// its core-site.xml properties, JVM flags and environment.
type javaEnv struct {
	props map[string]string
	jvm   []string
	env   []string
}

// hadoopFsWith is hadoopFs with e's configuration, flags and environment.
func hadoopFsWith(t *testing.T, cp string, e javaEnv, lines ...[]string) ([]string, []int) {
	t.Helper()
	// A conf directory, as the hadoop script puts HADOOP_CONF_DIR first
	// on the class path: Configuration insists on a core-site.xml.
	conf := t.TempDir()
	var site strings.Builder
	site.WriteString("<configuration>\n")
	for _, k := range slices.Sorted(maps.Keys(e.props)) {
		fmt.Fprintf(&site, "  <property><name>%s</name><value>%s</value></property>\n", k, e.props[k])
	}
	site.WriteString("</configuration>\n")
	if err := os.WriteFile(filepath.Join(conf, "core-site.xml"), []byte(site.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(e.jvm), "-cp", conf+string(os.PathListSeparator)+cp, "smarth.FsShells")
	for i, l := range lines {
		if i > 0 {
			args = append(args, "--")
		}
		args = append(args, l...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Env = append(os.Environ(), e.env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("java FsShells: %v\n%s", err, b)
	}
	var outs []string
	var codes []int
	rest := string(b)
	for range lines {
		i := strings.Index(rest, "== rc ")
		if i < 0 {
			t.Fatalf("FsShells ran %d of %d command lines:\n%s", len(codes), len(lines), b)
		}
		var rc int
		if _, err := fmt.Sscanf(rest[i:], "== rc %d", &rc); err != nil {
			t.Fatal(err)
		}
		outs, codes = append(outs, rest[:i]), append(codes, rc)
		if j := strings.IndexByte(rest[i:], '\n'); j >= 0 {
			rest = rest[i+j+1:]
		} else {
			rest = ""
		}
	}
	return outs, codes
}

// writeEdited writes a token file holding tok with its identifier or
// password changed by edit.
func writeEdited(t *testing.T, tok auth.HadoopToken, edit func(*auth.HadoopToken)) string {
	t.Helper()
	tok.Identifier = append([]byte(nil), tok.Identifier...)
	tok.Password = append([]byte(nil), tok.Password...)
	edit(&tok)
	f := filepath.Join(t.TempDir(), "edited.dt")
	if err := auth.WriteTokenStorageFile(f, []auth.StoredToken{{Alias: tok.Service, Token: tok}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestHadoopJavaClientSecureWithFetchedToken(t *testing.T) {
	cp := javaClasspath(t)
	// The trash is on, so -rm shows Hadoop's client moving to the trash
	// over webhdfs:// (rename with TO_TRASH) on the secure cluster.
	c, cred := secureClientClusterWith(t, map[string]any{"trash_interval": "1h"})
	file := fetchdt(t, c, cred)
	out, err := smarthCmd(t, cred, "fs", "fetchdt", "--print", file)
	if err != nil || !strings.HasPrefix(out, "Token (owner=alice, renewer=alice, realUser=, issueDate=") || !strings.HasSuffix(out, ") for "+c.NameNodeHTTPAddr()+"\n") {
		t.Fatalf("fetchdt --print: %v\n%s", err, out)
	}
	base := "webhdfs://" + c.NameNodeHTTPAddr()

	local := filepath.Join(t.TempDir(), "a.txt")
	data := strings.Repeat("written by hadoop fs with a smarth token\n", 40000) // > 1 block
	if err := os.WriteFile(local, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, codes := hadoopFs(t, cp, file,
		[]string{"-put", local, base + "/user/alice/a.txt"},
		[]string{"-ls", base + "/user/alice"},
		[]string{"-cat", base + "/user/alice/a.txt"},
		// No token: Hadoop has no way in (user.name counts for nothing).
		[]string{"--token", "", "-ls", base + "/user/alice"})
	if codes[0] != 0 {
		t.Fatalf("hadoop fs -put with the token: rc %d\n%s", codes[0], outs[0])
	}
	if codes[1] != 0 || !strings.Contains(outs[1], " alice ") || !strings.Contains(outs[1], "/user/alice/a.txt") {
		t.Fatalf("hadoop fs -ls with the token: rc %d\n%s", codes[1], outs[1])
	}
	if codes[2] != 0 || !strings.HasSuffix(outs[2], data) {
		t.Fatalf("hadoop fs -cat with the token: rc %d, %d bytes\n%.2000s", codes[2], len(outs[2]), outs[2])
	}
	if codes[3] == 0 || !strings.Contains(outs[3], "ls: Unauthorized") {
		t.Fatalf("hadoop fs -ls without a token: rc %d\n%s", codes[3], outs[3])
	}
	if st, err := c.Client(t).Stat(context.Background(), "/user/alice/a.txt"); err != nil || st.Owner != "alice" || st.Size != int64(len(data)) {
		t.Fatalf("the file hadoop fs wrote, as the native client sees it: %+v %v", st, err)
	}

	// The rest of what a user does daily, with the same token: mkdirs,
	// get, checksum, rm to the trash.
	got := filepath.Join(t.TempDir(), "got.txt")
	outs, codes = hadoopFs(t, cp, file,
		[]string{"-mkdir", "-p", base + "/user/alice/d/e"},
		[]string{"-get", base + "/user/alice/a.txt", got},
		[]string{"-checksum", base + "/user/alice/a.txt"},
		[]string{"-cp", base + "/user/alice/a.txt", base + "/user/alice/d/e/b.txt"},
		[]string{"-rm", base + "/user/alice/d/e/b.txt"})
	for i, what := range []string{"-mkdir -p", "-get", "-checksum", "-cp", "-rm"} {
		if codes[i] != 0 {
			t.Fatalf("hadoop fs %s with the token: rc %d\n%s", what, codes[i], outs[i])
		}
	}
	if st, err := c.Client(t).Stat(context.Background(), "/user/alice/d/e"); err != nil || !st.IsDir || st.Owner != "alice" {
		t.Fatalf("the directory hadoop fs -mkdir -p made: %+v %v", st, err)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != data {
		t.Fatalf("hadoop fs -get with the token: %d bytes, %v", len(b), err)
	}
	sum, err := c.Client(t).FileChecksum(context.Background(), "/user/alice/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(outs[2], "/user/alice/a.txt\t"+sum.Algorithm()+"\t") || !strings.Contains(strings.ToLower(outs[2]), strings.ToLower(sum.String())) {
		t.Fatalf("hadoop fs -checksum: %q, the native client's %s %s", outs[2], sum.Algorithm(), sum)
	}
	// (FsShell says "Moved: ... to trash" through log4j, which this
	// runner keeps quiet: the namespace shows where the file went.)
	if _, err := c.Client(t).Stat(context.Background(), "/user/alice/d/e/b.txt"); err == nil {
		t.Fatal("hadoop fs -rm left /user/alice/d/e/b.txt in place")
	}
	if st, err := c.Client(t).Stat(context.Background(), "/user/alice/.Trash/Current/user/alice/d/e/b.txt"); err != nil || st.Size != int64(len(data)) {
		t.Fatalf("the file hadoop fs -rm moved, in alice's trash: %+v %v", st, err)
	}

	// Edited tokens: another owner, a forged password.
	toks, err := auth.ReadTokenStorageFile(file)
	if err != nil || len(toks) != 1 {
		t.Fatalf("the fetched token file: %+v %v", toks, err)
	}
	id, err := auth.ParseDelegationIdentifier(toks[0].Token.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	owner := writeEdited(t, toks[0].Token, func(h *auth.HadoopToken) {
		d := id
		d.Owner = osUser(t) // the superuser
		h.Identifier = d.Marshal()
	})
	forged := writeEdited(t, toks[0].Token, func(h *auth.HadoopToken) { h.Password[3] ^= 0x40 })

	// Cancelled: refused at once.
	if out, err := smarthCmd(t, cred, "fs", "fetchdt", "--cancel", file); err != nil || strings.TrimSpace(out) != "Cancelled token for "+c.NameNodeHTTPAddr() {
		t.Fatalf("fetchdt --cancel: %v\n%s", err, out)
	}
	outs, codes = hadoopFs(t, cp, file,
		[]string{"-ls", base + "/user/alice"},
		[]string{"--token", owner, "-ls", base + "/user/alice"},
		[]string{"--token", forged, "-ls", base + "/user/alice"})
	wantMsg := []string{"delegation token ", "token (HDFS_DELEGATION_TOKEN token ", "token (HDFS_DELEGATION_TOKEN token "}
	for i, what := range []string{"a cancelled token", "a token whose owner was edited", "a token with a forged password"} {
		// HDFS's InvalidToken (403), whose message FsShell prints: it was
		// a 401 that Hadoop could only call "Unauthorized".
		if codes[i] == 0 || !strings.Contains(outs[i], "ls: "+wantMsg[i]) {
			t.Fatalf("hadoop fs -ls with %s: rc %d\n%s", what, codes[i], outs[i])
		}
	}
}

// TestHdfsCLITokenClientSecure: HdfsCLI's TokenClient with the URL string
// of a token from `smarth fs fetchdt` uploads, downloads, walks and reads
// and writes Avro on the secure cluster, and is refused once the token is
// cancelled.
func TestHdfsCLITokenClientSecure(t *testing.T) {
	py := hdfsCLIPython(t)
	c, cred := secureClientCluster(t)
	file := fetchdt(t, c, cred)
	toks, err := auth.ReadTokenStorageFile(file)
	if err != nil || len(toks) != 1 {
		t.Fatalf("the fetched token file: %+v %v", toks, err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "pytoken.py"))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + c.NameNodeHTTPAddr()
	out := run(t, 3*time.Minute, t.TempDir(), py, script, url, toks[0].Token.URLString(), "live")
	t.Logf("pytoken.py:\n%s", out)
	checkChecksums(t, c, out)
	if st, err := c.Client(t).Stat(context.Background(), "/user/alice/py/up.bin"); err != nil || st.Owner != "alice" {
		t.Fatalf("HdfsCLI's upload as the native client sees it: %+v %v", st, err)
	}
	// Renewed by its renewer (alice: fetchdt's default), then cancelled.
	if out, err := smarthCmd(t, cred, "fs", "fetchdt", "--renew", file); err != nil || !strings.HasPrefix(out, "Renewed token for "+c.NameNodeHTTPAddr()+" until: ") {
		t.Fatalf("fetchdt --renew: %v\n%s", err, out)
	}
	if out, err := smarthCmd(t, cred, "fs", "fetchdt", "--cancel", file); err != nil {
		t.Fatalf("fetchdt --cancel: %v\n%s", err, out)
	}
	out = run(t, 3*time.Minute, t.TempDir(), py, script, url, toks[0].Token.URLString(), "cancelled")
	t.Logf("pytoken.py after cancel:\n%s", out)
}
