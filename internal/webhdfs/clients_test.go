package webhdfs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"smarth/internal/testenv"
	"strings"
	"testing"
	"time"

	"smarth/internal/testcluster"
)

// Real WebHDFS clients against a local cluster: Hadoop's Java
// WebHdfsFileSystem (and FsShell, as `hadoop fs`) and Python's HdfsCLI.
// They need java and mvn, or python3 with venv; without them the tests
// skip, except under CI (CI=true), where .ci/run installs them and a
// missing tool is a failure.

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s not found: the real-client test needs it (.ci/run installs it)", tool)
		}
	}
	if testing.Short() {
		t.Skip("real WebHDFS clients: skipped in -short mode")
	}
}

// cacheDir is where built clients are kept between runs.
func cacheDir(t *testing.T) string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	d = filepath.Join(d, "smarth")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// clientCluster is a simple-auth cluster whose root is world-writable
// (sticky, like /tmp), so the clients run as an ordinary user.
func clientCluster(t *testing.T) (*testcluster.Cluster, string) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Simple: true})
	if err := c.Client(t).SetPermission(context.Background(), "/", 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return c, "alice"
}

// checkChecksums compares every "CHECKSUM path algorithm hex" line of a
// client's output with the native client's checksum of that file.
func checkChecksums(t *testing.T, c *testcluster.Cluster, out string) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "CHECKSUM" {
			continue
		}
		sum, err := c.Client(t).FileChecksum(context.Background(), f[1])
		if err != nil {
			t.Fatal(err)
		}
		if f[2] != sum.Algorithm() || !strings.EqualFold(f[3], sum.String()) {
			t.Fatalf("%s: the client saw checksum %s %s, the native client %s %s", f[1], f[2], f[3], sum.Algorithm(), sum)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no CHECKSUM line in the client's output:\n%s", out)
	}
}

// treeHash names a build by its sources, so a changed source rebuilds.
func treeHash(t *testing.T, root string) string {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		h.Write([]byte(p))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func run(t *testing.T, timeout time.Duration, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// javaClasspath builds the Maven project in javaclient (cached by its
// sources' hash) and returns the class path that runs it and Hadoop's
// own classes (FsShell, as `hadoop fs`).
func javaClasspath(t *testing.T) string {
	need(t, "java", "mvn")
	src, err := filepath.Abs("javaclient")
	if err != nil {
		t.Fatal(err)
	}
	build := filepath.Join(cacheDir(t), "webhdfs-javaclient-"+treeHash(t, src))
	if _, err := os.Stat(filepath.Join(build, "target", "webhdfs-javaclient-1.0.jar")); err != nil {
		tmp := build + ".tmp"
		os.RemoveAll(tmp)
		if err := os.CopyFS(tmp, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		// Offline first: the jars are usually in ~/.m2 already.
		if out, err := exec.CommandContext(ctx, "mvn", "-q", "-o", "-f", filepath.Join(tmp, "pom.xml"), "package").CombinedOutput(); err != nil {
			t.Logf("offline maven build failed, fetching dependencies: %v\n%s", err, out)
			run(t, 15*time.Minute, tmp, "mvn", "-q", "-f", filepath.Join(tmp, "pom.xml"), "package")
		}
		os.RemoveAll(build)
		if err := os.Rename(tmp, build); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(build, "target", "classes") + string(os.PathListSeparator) + filepath.Join(build, "target", "lib", "*")
}

func TestHadoopJavaClient(t *testing.T) {
	cp := javaClasspath(t)
	c, user := clientCluster(t)
	out := run(t, 3*time.Minute, t.TempDir(), "java", "-cp", cp, "smarth.WebHdfsCheck", "webhdfs://"+c.NameNodeHTTPAddr(), user, t.TempDir())
	t.Logf("WebHdfsCheck:\n%s", out)
	checkChecksums(t, c, out)
	st, err := c.Client(t).Stat(context.Background(), "/javakeep/g")
	if err != nil || st.Owner != user || st.Size != 3<<20+4321+int64(len("appended by WebHdfsFileSystem\n")) {
		t.Fatalf("the Java client's file as the native client sees it: %+v %v", st, err)
	}
}

// hdfsCLIPython is a python with HdfsCLI (the `hdfs` package) and its
// Avro extension installed, in a venv kept between runs.
func hdfsCLIPython(t *testing.T) string {
	need(t, "python3")
	venv := filepath.Join(cacheDir(t), "pyvenv")
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		run(t, 5*time.Minute, "", "python3", "-m", "venv", venv)
	}
	if out, err := exec.Command(py, "-c", "import hdfs, fastavro").CombinedOutput(); err != nil {
		t.Logf("installing HdfsCLI with its Avro extension into %s (%v: %s)", venv, err, out)
		run(t, 10*time.Minute, "", filepath.Join(venv, "bin", "pip"), "install", "-q", "hdfs[avro]==2.7.3")
	}
	return py
}

func TestPythonHdfsCLI(t *testing.T) {
	py := hdfsCLIPython(t)
	c, user := clientCluster(t)
	script, err := filepath.Abs(filepath.Join("testdata", "pyclient.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, 3*time.Minute, t.TempDir(), py, script, "http://"+c.NameNodeHTTPAddr(), user)
	t.Logf("pyclient.py:\n%s", out)
	checkChecksums(t, c, out)
	if st, err := c.Client(t).Stat(context.Background(), "/pykeep/g"); err != nil || st.Owner != user || st.Mode.Perm() != 0o640 {
		t.Fatalf("the Python client's file as the native client sees it: %+v %v", st, err)
	}
}
