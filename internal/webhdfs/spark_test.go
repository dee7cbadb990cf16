package webhdfs_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// Spark (pyspark from the package registry, with the Hadoop 3.3 client
// it bundles) over webhdfs://, as docs/security.md tells a user to run
// it: on the default secure cluster with HADOOP_TOKEN_FILE_LOCATION naming
// a file from `smarth fs fetchdt`, on an --auth simple one as
// HADOOP_USER_NAME. testdata/sparkclient.py does the Spark side; these
// tests check what it printed and what it left, with smarth's own client.

// sparkVersion runs on Java 17 (what .ci/run installs) and bundles Hadoop
// 3.3.4's client (3.4.1's is the one javaclient's FsShell tests).
const sparkVersion = "3.5.9"

// sparkPython is a python with pyspark installed, in a venv kept between
// runs (about 370 MB: pyspark carries Spark's jars).
func sparkPython(t *testing.T) string {
	need(t, "java", "python3")
	venv := filepath.Join(cacheDir(t), "pyspark-"+sparkVersion+"-venv")
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		run(t, 5*time.Minute, "", "python3", "-m", "venv", venv)
	}
	check := "import pyspark, sys; sys.exit(pyspark.__version__ != '" + sparkVersion + "')"
	if out, err := exec.Command(py, "-c", check).CombinedOutput(); err != nil {
		t.Logf("installing pyspark %s into %s (%v: %s)", sparkVersion, venv, err, out)
		start := time.Now()
		run(t, 15*time.Minute, "", filepath.Join(venv, "bin", "pip"), "install", "-q", "pyspark=="+sparkVersion)
		t.Logf("pyspark installed in %v", time.Since(start).Round(time.Second))
	}
	return py
}

// runSpark runs sparkclient.py with env added to a copy of this
// process's environment without Hadoop's user and token variables (so
// only what the test names counts). When the script prints CANCEL_NOW,
// onCancel runs and the script is told to go on. It returns the output
// (stdout and stderr interleaved) and fails the test if the script fails.
func runSpark(t *testing.T, py string, env []string, onCancel func(), args ...string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "sparkclient.py"))
	if err != nil {
		t.Fatal(err)
	}
	// Spark gets what is left of the test's time less a minute, so a
	// stuck run is killed and its output logged before the test binary's
	// own timeout panics without it.
	limit := 15 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d)-time.Minute < limit {
		limit = time.Until(d) - time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
	// pyspark starts Spark's JVM as its child: kill the whole process
	// group, and stop waiting for output a JVM that outlived it holds.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = t.TempDir() // Spark's spark-warehouse and the like
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HADOOP_TOKEN_FILE_LOCATION" && k != "HADOOP_USER_NAME" && k != "SPARK_HOME" && k != "PYSPARK_SUBMIT_ARGS" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		// Spark binds and connects to loopback only.
		"SPARK_LOCAL_IP=127.0.0.1",
		"SPARK_LOCAL_DIRS="+t.TempDir(),
		"PYSPARK_PYTHON="+py,
		// A short run: the JVM's C1 compiler alone and the serial
		// collector cut it by a quarter to a half on a loaded machine
		// here; nothing the file system sees changes.
		"PYSPARK_SUBMIT_ARGS=--driver-java-options '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' pyspark-shell")
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { err := cmd.Wait(); pw.Close(); waited <- err }()
	var out strings.Builder
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if line == "CANCEL_NOW" && onCancel != nil {
			onCancel()
			fmt.Fprintln(stdin, "go on")
		}
	}
	io.Copy(io.Discard, pr) // a line too long for the scanner: drain, so Wait ends
	err = <-waited
	t.Logf("sparkclient.py (%v):\n%s", time.Since(start).Round(time.Second), out.String())
	if ctx.Err() != nil {
		t.Fatalf("sparkclient.py did not finish in %v (output above): %v", limit, err)
	}
	if err != nil {
		t.Fatalf("sparkclient.py: %v (output above)", err)
	}
	return out.String()
}

// sparkLines is what sparkclient.py writes as text, one line each.
func sparkLines() string {
	var b strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&b, "%06d %s\n", i, strings.Repeat("spark over webhdfs ", 4))
	}
	return b.String()
}

// sparkInput writes the file the script reads with smarth's own client
// and returns the line sparkclient.py must print for it.
func sparkInput(t *testing.T, fs *client.FileSystem, p string) string {
	t.Helper()
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "written by smarth's client %d\n", i)
	}
	w, err := fs.Create(context.Background(), p, client.CreateOptions{Perm: 0o644})
	if err == nil {
		_, err = io.WriteString(w, b.String())
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("writing %s: %v", p, err)
	}
	sum := sha256.Sum256([]byte(strings.TrimSuffix(b.String(), "\n"))) // spark.read.text drops line ends
	return "INPUT 1000 lines sha256 " + hex.EncodeToString(sum[:])
}

// checkSparkOutput checks what the script printed and, with smarth's
// client, what it left under dir (webhdfs base = base+dir): the text file
// byte for byte across more than one block, every file alice's, both
// jobs committed (_SUCCESS) with nothing left in _temporary.
func checkSparkOutput(t *testing.T, c *testcluster.Cluster, out, base, dir, inputLine string) {
	t.Helper()
	for _, want := range []string{
		"TEXT 30000 lines 2 splits\n",
		"PARQUET 714 rows\n",
		inputLine + "\n",
		"MISSING [PATH_NOT_FOUND] Path does not exist: " + base + dir + "/nosuch.\n",
		"LS " + dir + "/parquet alice d 0\nLS " + dir + "/text alice d 0\n",
		"DONE\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("sparkclient.py's output lacks %q", want)
		}
	}
	ctx := context.Background()
	fs := c.Client(t)
	r, err := fs.Open(ctx, dir+"/text/part-00000")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != sparkLines() {
		t.Fatalf("%s/text/part-00000 as smarth's client reads it: %d bytes (%v), want the %d Spark wrote", dir, len(got), err, len(sparkLines()))
	}
	var walk func(p string)
	seen := map[string]bool{}
	walk = func(p string) {
		list, err := fs.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range list {
			full := path.Join(p, st.Name)
			seen[strings.TrimPrefix(full, dir+"/")] = true
			if st.Owner != "alice" || strings.Contains(st.Name, "_temporary") {
				t.Fatalf("%s: owner %s; Spark's files must be alice's, with no _temporary left", full, st.Owner)
			}
			if st.Name == "part-00000" && (st.BlockSize != 2<<20 || st.Size <= st.BlockSize) {
				t.Fatalf("%s: %d bytes in blocks of %d: the text file must span blocks of the size Spark asked for (dfs.blocksize=2m; the cluster's default is 1 MiB)", full, st.Size, st.BlockSize)
			}
			if st.IsDir {
				walk(full)
			}
		}
	}
	walk(dir)
	for _, want := range []string{"text/_SUCCESS", "text/part-00000", "parquet/_SUCCESS"} {
		if !seen[want] {
			t.Fatalf("%s/%s missing; the tree Spark left: %v", dir, want, seen)
		}
	}
}

// TestSparkWebHDFSSecure: pyspark with the token file from `smarth fs
// fetchdt` in HADOOP_TOKEN_FILE_LOCATION writes text and Parquet, reads
// them back and reads smarth's own file on the default secure cluster;
// once the token is cancelled the same Spark is refused.
func TestSparkWebHDFSSecure(t *testing.T) {
	py := sparkPython(t)
	c, cred := secureClientCluster(t)
	file := fetchdt(t, c, cred)
	base := "webhdfs://" + c.NameNodeHTTPAddr()
	input := sparkInput(t, c.Client(t), "/user/alice/in.txt")
	out := runSpark(t, py, []string{"HADOOP_TOKEN_FILE_LOCATION=" + file}, func() {
		if out, err := smarthCmd(t, cred, "fs", "fetchdt", "--cancel", file); err != nil {
			t.Errorf("fetchdt --cancel: %v\n%s", err, out)
		}
	}, base+"/user/alice/spark", base+"/user/alice/in.txt", "--cancel-step")
	checkSparkOutput(t, c, out, base, "/user/alice/spark", input)
	// HDFS's answer to a cancelled token: 403 with InvalidToken, whose
	// message Hadoop's client passes on.
	if !regexp.MustCompile(`AFTER CANCEL refused: org\.apache\.hadoop\.security\.token\.SecretManager\$InvalidToken: delegation token \d+ of alice was cancelled\n`).MatchString(out) {
		t.Fatalf("Spark listed %s/user/alice/spark with a cancelled token", base)
	}
}

// TestSparkWebHDFSSimple: the same on an --auth simple cluster, where
// Spark names its user with HADOOP_USER_NAME and holds no token.
func TestSparkWebHDFSSimple(t *testing.T) {
	py := sparkPython(t)
	c, user := clientCluster(t)
	ctx := context.Background()
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/user/alice", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/user/alice", user, user); err != nil {
		t.Fatal(err)
	}
	base := "webhdfs://" + c.NameNodeHTTPAddr()
	input := sparkInput(t, admin, "/user/alice/in.txt")
	out := runSpark(t, py, []string{"HADOOP_USER_NAME=" + user}, nil, base+"/user/alice/spark", base+"/user/alice/in.txt")
	checkSparkOutput(t, c, out, base, "/user/alice/spark", input)
}
