package webhdfs_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// The comparison suite of issue 25: the same FsShell command lines run
// through Hadoop's own FsShell (what `hadoop fs` runs, over webhdfs://) and
// through `smarth fs` in its dash form (over the namenode's RPC port), each
// side on the same cluster from the same starting tree, and their stdout,
// stderr and exit code must agree line for line.
//
// What is normalised, the same way on both sides (normalise):
//   - the file system's URI: webhdfs://HTTPADDR (Hadoop's) and
//     hdfs://RPCADDR (smarth's) both become FS://;
//   - dates: "2006-01-02 15:04" (ls) and "2006-01-02 15:04:05" (stat %y)
//     become DATE, and the trash checkpoint's "Current" stays as is;
//   - on Hadoop's stderr, the prefix log4j puts before a log line (the
//     layout `hadoop fs` uses, "%d{ISO8601} %p %c{2}: %m": time, level
//     and logger, e.g. "INFO fs.TrashPolicyDefault: ") is cut, leaving the
//     message (rm's "Moved: ... to trash at: ..." is such a line), and the
//     one-time "Unable to load native-hadoop library" warning is dropped
//     (it speaks of the JVM, not of the file system).
//
// The local files each side leaves are compared too (moveFromLocal's
// deletes, get's and getmerge's copies), but for the .NAME.crc side files
// Hadoop's LocalFileSystem writes beside getmerge's output: checksums only
// Hadoop's own local file system reads, which smarth does not write.
//
// Calls whose Hadoop output cannot or should not be matched are listed
// with an exception saying why and what is compared instead; none is
// skipped.

// shellCall is one FsShell command line of the suite.
type shellCall struct {
	args []string
	// exception, when set, is why Hadoop's output is not matched
	// exactly; compare then checks what it can (see exceptionCheck).
	exception string
	// check compares what the exception leaves comparable.
	check func(h, s callResult) string
}

type callResult struct {
	out, err string
	rc       int
}

func call(args ...string) shellCall { return shellCall{args: args} }

// badUsage is the exception for bad usage (an unknown command, a bad
// mode or owner): Hadoop's FsShell returns -1 (`hadoop fs` exits 255) and
// prints its message, then the usage of every command it has; smarth's
// CLI has one exit-code rule for every command, 2 for bad usage
// (docs/cli.md), and lists its own commands, not Hadoop's. So: exit codes
// -1 and 2, nothing on stdout, and stderr's first line (the message) the
// same.
func badUsage(line ...string) shellCall {
	return shellCall{args: line,
		exception: "bad usage: Hadoop exits 255 and lists its own commands' usage; smarth exits 2 (its one rule for bad usage) and names its own",
		check: func(h, s callResult) string {
			first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
			switch {
			case h.rc != -1 || s.rc != 2:
				return fmt.Sprintf("exit codes %d (Hadoop) and %d (smarth), want -1 and 2", h.rc, s.rc)
			case h.out != "" || s.out != "":
				return fmt.Sprintf("stdout %q (Hadoop) and %q (smarth), want none", h.out, s.out)
			case first(h.err) != first(s.err):
				return fmt.Sprintf("message %q (Hadoop), %q (smarth)", first(h.err), first(s.err))
			}
			return ""
		}}
}

// helpOf is the exception for -help and -usage of a command: smarth's
// help describes smarth's options of the command (not all of Hadoop's are
// there, some are smarth's own), so the texts differ by design. Both must
// exit 0, print to stdout only, and name the command.
func helpOf(line ...string) shellCall {
	cmd := line[len(line)-1]
	return shellCall{args: line,
		exception: "help text: each describes its own options of the command",
		check: func(h, s callResult) string {
			for _, r := range []callResult{h, s} {
				if r.rc != 0 || r.err != "" || !strings.Contains(r.out, cmd) {
					return fmt.Sprintf("Hadoop rc %d %q %q, smarth rc %d %q %q: want exit 0 and the help of %s on stdout", h.rc, h.out, h.err, s.rc, s.out, s.err, cmd)
				}
			}
			return ""
		}}
}

// fsshellCalls are the suite's command lines, run in this order on each
// side from the tree fsshellFixture makes.
func fsshellCalls() []shellCall {
	return []shellCall{
		// ls
		call("-ls", "/cmp/dir/a.txt"),
		call("-ls", "/cmp/dir"),
		call("-ls", "/cmp/missing"),
		call("-ls", "-d", "/cmp/dir"),
		call("-ls", "-R", "/cmp"),
		call("-ls", "-h", "/cmp"),
		call("-ls"),
		call("-ls", "rel"),
		call("-ls", "rel/r.txt", "/cmp/empty"),
		call("-ls", "-d"),
		call("-ls", "-R", "rel"),
		call("-ls", "r*"),
		call("-ls", "FSURI/cmp/dir"),
		call("-ls", "-C", "/cmp/dir"),
		call("-ls", "-S", "-r", "/cmp"),
		call("-ls", "/cmp/missing", "/cmp/empty"),
		// mkdir
		call("-mkdir", "/cmp/dir"),
		call("-mkdir", "/cmp/nop/x"),
		call("-mkdir", "-p", "/cmp/p/q/r"),
		call("-mkdir", "-p", "/cmp/dir"),
		call("-mkdir", "reldir"),
		call("-mkdir", "/cmp/full.txt"),
		{args: []string{"-mkdir", "/cmp/full.txt/x"},
			exception: "Hadoop prints the message of smarth's own WebHDFS server here (its stat of a path under a file fails), so matching it would match smarth with itself, not with HDFS",
			check: func(h, s callResult) string {
				if h.rc != 1 || s.rc != 1 || !strings.HasPrefix(h.err, "mkdir: ") || !strings.HasPrefix(s.err, "mkdir: ") {
					return fmt.Sprintf("Hadoop rc %d %q, smarth rc %d %q: want both 1 and a mkdir message", h.rc, h.err, s.rc, s.err)
				}
				return ""
			}},
		// put, copyFromLocal, moveFromLocal
		call("-put", "local.txt", "/cmp/newdir/"),
		call("-put", "local.txt", "/cmp/dir/"),
		call("-put", "local.txt", "/cmp/nop/x.txt"),
		call("-put", "local.txt", "/cmp/dir/a.txt"),
		call("-put", "-f", "local.txt", "/cmp/dir/a.txt"),
		call("-put", "nosuch.txt", "/cmp/ns.txt"),
		call("-put", "local.txt", "rel"),
		call("-put", "local.txt", "local2.txt", "/cmp/nd"),
		call("-put", "local.txt", "local2.txt", "/cmp/big"),
		call("-touchz", "/cmp/t1", "reldir/t2"),
		call("-copyFromLocal", "local2.txt", "/cmp/c.txt"),
		call("-copyFromLocal", "local2.txt", "/cmp/c.txt"),
		call("-moveFromLocal", "mv1.txt", "/cmp/dir/"),
		call("-moveFromLocal", "mv2.txt", "/cmp/nop/"),
		// get, copyToLocal, cat
		call("-get", "/cmp/dir/a.txt", "got.txt"),
		call("-get", "/cmp/dir/b.txt", "got.txt"),
		call("-copyToLocal", "/cmp/full.txt", "."),
		call("-get", "/cmp/missing", "x.txt"),
		call("-cat", "/cmp/missing"),
		call("-cat", "/cmp/dir/a.txt", "/cmp/full.txt"),
		call("-cat", "/cmp/dir"),
		call("-head", "/cmp/dir/b.txt"),
		call("-tail", "/cmp/missing"),
		call("-text", "/cmp/missing"),
		// cp, mv
		call("-cp", "/cmp/full.txt", "/cmp/dir"),
		call("-cp", "/cmp/full.txt", "/cmp/dir/b.txt"),
		call("-cp", "/cmp/missing", "/cmp/x"),
		call("-cp", "/cmp/full.txt", "/cmp/nop/"),
		call("-mv", "/cmp/c.txt", "/cmp/dir/sub"),
		call("-mv", "/cmp/full.txt", "/cmp/dir/b.txt"),
		call("-mv", "/cmp/missing", "/cmp/y"),
		call("-mv", "/cmp/full.txt", "/cmp/nop/"),
		call("-cp", "/cmp/big", "/cmp/x.gz", "/cmp/empty"),
		call("-cp", "/cmp/t1", "reldir/t2", "rel"),
		call("-mv", "rel/t1", "rel/t2", "/cmp/dir/sub"),
		// test
		call("-test", "-e", "/cmp/dir"),
		call("-test", "-e", "/cmp/missing"),
		call("-test", "-d", "/cmp/dir/a.txt"),
		call("-test", "-f", "/cmp/dir/a.txt"),
		call("-test", "-z", "/cmp/empty"),
		call("-test", "-z", "/cmp/dir/b.txt"),
		call("-test", "-s", "/cmp/empty"),
		call("-test", "-d", "rel"),
		// stat
		call("-stat", "/cmp/dir/a.txt"),
		call("-stat", "%n %b %r %o %F %u %g %a %A", "/cmp/dir/a.txt"),
		call("-stat", "%F %n", "/cmp/dir", "/cmp/empty"),
		call("-stat", "%n", "/cmp/missing"),
		// du, count
		call("-du", "/cmp/dir"),
		call("-du", "-s", "/cmp"),
		call("-du", "-s", "-h", "/cmp/big"),
		call("-count", "/cmp"),
		call("-count", "-q", "/cmp"),
		call("-count", "/cmp/missing"),
		call("-count", "-q", "-h", "-v", "/cmp"),
		call("-count", "rel"),
		call("-du", "rel"),
		call("-du", "-v", "/cmp/dir"),
		// chmod, chown: bad arguments
		badUsage("-chmod", "xyz", "/cmp/dir/a.txt"),
		badUsage("-chmod", "999", "/cmp/dir/a.txt"),
		badUsage("-chown", "a:b:c", "/cmp/dir/a.txt"),
		call("-chmod", "640", "/cmp/missing"),
		// setrep, touchz, checksum, text, tail, appendToFile, getmerge
		call("-setrep", "2", "/cmp/dir/a.txt"),
		call("-setrep", "2", "/cmp/missing"),
		call("-setrep", "1", "/cmp/dir/sub"),
		call("-touchz", "/cmp/dir/a.txt"),
		call("-touchz", "/cmp/empty"),
		call("-checksum", "/cmp/big"),
		call("-checksum", "/cmp/dir"),
		call("-checksum", "rel/r.txt"),
		call("-text", "/cmp/x.gz"),
		call("-tail", "/cmp/big"),
		call("-appendToFile", "local.txt", "/cmp/dir/b.txt"),
		call("-cat", "/cmp/dir/b.txt"),
		call("-getmerge", "/cmp/dir", "merged.txt"),
		call("-getmerge", "/cmp/missing", "merged2.txt"),
		// rm, rmdir
		call("-rmdir", "/cmp/dir"),
		call("-rmdir", "/cmp/big"),
		call("-rm", "-r", "reldir"),
		call("-rm", "-skipTrash", "/cmp/dir/l*"),
		call("-rm", "/cmp/missing"),
		call("-rm", "/cmp/dir"),
		call("-rm", "-f", "/cmp/missing"),
		call("-rm", "-r", "/cmp/p"),
		call("-rm", "-skipTrash", "/cmp/empty"),
		call("-rm", "-r", "-skipTrash", "/cmp/dir/sub"),
		// generic options
		call("-D", "dfs.replication=1", "-put", "local.txt", "/cmp/r1.txt"),
		call("-stat", "%r", "/cmp/r1.txt"),
		call("-D", "io.file.buffer.size=8192", "-put", "local2.txt", "/cmp/r2.txt"),
		call("-fs", "FSURI", "-ls", "/cmp/r1.txt"),
		// help, unknown command
		helpOf("-usage", "ls"),
		helpOf("-help", "rmdir"),
		badUsage("-nosuch", "/cmp"),
		// the tree both sides leave
		call("-ls", "-R", "/cmp"),
	}
}

// fsshellFixture makes the starting tree: alice's home with rel/r.txt,
// and /cmp, both owned by alice; and the local files in dir.
func fsshellFixture(t *testing.T, c *testcluster.Cluster, dir string) {
	t.Helper()
	ctx := context.Background()
	root := c.Client(t)
	for _, p := range []string{"/cmp", "/user/alice"} {
		if err := root.Delete(ctx, p, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
	if err := root.Mkdir(ctx, "/user/alice", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := root.SetOwner(ctx, "/user/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}
	alice := c.Client(t, testcluster.WithUser("alice"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("unzipped by -text\n"))
	zw.Close()
	files := map[string][]byte{
		"/cmp/dir/a.txt":        []byte("hello\n"),
		"/cmp/dir/b.txt":        []byte("world\n"),
		"/cmp/full.txt":         []byte("full file\n"),
		"/cmp/empty":            nil,
		"/cmp/x.gz":             gz.Bytes(),
		"/cmp/big":              bytes.Repeat([]byte("0123456789abcdef\n"), 300),
		"/user/alice/rel/r.txt": []byte("relative\n"),
	}
	for _, d := range []string{"/cmp/dir/sub", "/user/alice/rel"} {
		if err := alice.Mkdir(ctx, d, 0o755, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range slices.Sorted(mapsKeys(files)) {
		w, err := alice.Create(ctx, p, client.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[p]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"local.txt": "local\n", "local2.txt": "local two\n", "mv1.txt": "moved one\n", "mv2.txt": "moved two\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// localState lists dir's files with their contents, to compare what each
// side left on the local disk (moveFromLocal's deletes, get's copies).
func localState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if n := d.Name(); strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".crc") {
			// Hadoop's LocalFileSystem writes a checksum side file
			// (.NAME.crc) beside what getmerge writes, which only it
			// reads; smarth writes none (a documented exception).
			return nil
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %q\n", rel, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// splitMarked cuts a stream at FsShells' "== rc N" lines into n parts.
func splitMarked(t *testing.T, stream string, n int) ([]string, []int) {
	t.Helper()
	var parts []string
	var codes []int
	rest := stream
	for range n {
		i := strings.Index(rest, "== rc ")
		if i < 0 || (i > 0 && rest[i-1] != '\n') {
			t.Fatalf("FsShells' stream has %d of %d parts:\n%s", len(parts), n, stream)
		}
		var rc int
		if _, err := fmt.Sscanf(rest[i:], "== rc %d", &rc); err != nil {
			t.Fatal(err)
		}
		parts, codes = append(parts, rest[:i]), append(codes, rc)
		rest = rest[i:]
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[j+1:]
		} else {
			rest = ""
		}
	}
	return parts, codes
}

// log4jConf is the console logging of Hadoop's own log4j.properties (what
// `hadoop fs` prints to stderr), so Hadoop's INFO lines (rm's "Moved: ...
// to trash") are seen as a user of `hadoop fs` sees them.
const log4jConf = `log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
`

// runHadoopShells runs each call through Hadoop's FsShell in one JVM, as
// alice (HADOOP_USER_NAME, simple auth), with fs.defaultFS the cluster's
// webhdfs:// URI and dir as the working directory.
func runHadoopShells(t *testing.T, cp, fsURI string, blockSize int64, dir string, calls []shellCall) []callResult {
	t.Helper()
	conf := t.TempDir()
	// fs.defaultFS is the cluster; dfs.blocksize is the cluster's block
	// size, as a site's client config says it: Hadoop's client asks for
	// its own configured block size on create (128 MiB unset), smarth's
	// takes the namenode's, so -put -f then -stat %o differed only by
	// configuration.
	site := fmt.Sprintf(`<configuration>
<property><name>fs.defaultFS</name><value>%s</value></property>
<property><name>dfs.blocksize</name><value>%d</value></property>
</configuration>
`, fsURI, blockSize)
	if err := os.WriteFile(filepath.Join(conf, "core-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "log4j.properties"), []byte(log4jConf), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-Dsmarth.fsshells.mark=true", "-cp", conf + string(os.PathListSeparator) + cp, "smarth.FsShells"}
	for i, c := range calls {
		if i > 0 {
			args = append(args, "--")
		}
		args = append(args, withFSURI(c.args, fsURI)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HADOOP_USER_NAME=alice", "HADOOP_TOKEN_FILE_LOCATION=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("java FsShells: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	outs, codes := splitMarked(t, stdout.String(), len(calls))
	errs, codes2 := splitMarked(t, stderr.String(), len(calls))
	if !slices.Equal(codes, codes2) {
		t.Fatalf("FsShells' exit codes on stdout %v and stderr %v differ", codes, codes2)
	}
	res := make([]callResult, len(calls))
	for i := range calls {
		res[i] = callResult{out: outs[i], err: errs[i], rc: codes[i]}
	}
	return res
}

// runSmarthShells runs each call as `smarth fs --user alice ARGS...`
// against the cluster's namenode, in dir.
func runSmarthShells(t *testing.T, nn, fsURI, dir string, calls []shellCall) []callResult {
	t.Helper()
	home := t.TempDir()
	res := make([]callResult, len(calls))
	for i, c := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, testcluster.Binary(t), append([]string{"fs", "--user", "alice"}, withFSURI(c.args, fsURI)...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SMARTH_NAMENODE="+nn, "SMARTH_HOME="+home, "SMARTH_TOKEN_FILE=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		rc := 0
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("smarth fs %s: %v", strings.Join(c.args, " "), err)
		}
		res[i] = callResult{out: stdout.String(), err: stderr.String(), rc: rc}
	}
	return res
}

func withFSURI(args []string, uri string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "FSURI" {
			out[i] = uri
		}
	}
	return out
}

var (
	nativeWarn = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} WARN util\.NativeCodeLoader: Unable to load native-hadoop library.*\n`)
	log4jStamp = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [\w.$]+: `)
	dateTime   = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?`)
)

// normalise applies the suite's normalisations (see the top of the file).
func normalise(s string, uris ...string) string {
	for _, u := range uris {
		s = strings.ReplaceAll(s, u, "FS://")
	}
	s = nativeWarn.ReplaceAllString(s, "")
	s = log4jStamp.ReplaceAllString(s, "")
	return dateTime.ReplaceAllString(s, "DATE")
}

const cmpBlockSize = 1 << 20

func TestFsShellAgainstHadoop(t *testing.T) {
	cp := javaClasspath(t)
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: cmpBlockSize, Simple: true,
		NameNode: map[string]any{"trash_interval": "1h"}})
	if err := c.Client(t).SetPermission(context.Background(), "/", 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	webURI := "webhdfs://" + c.NameNodeHTTPAddr()
	rpcURI := "hdfs://" + c.NameNodeAddr()
	calls := fsshellCalls()

	hDir, sDir := t.TempDir(), t.TempDir()
	fsshellFixture(t, c, hDir)
	start := time.Now()
	h := runHadoopShells(t, cp, webURI, cmpBlockSize, hDir, calls)
	hLocal := localState(t, hDir)
	t.Logf("%d calls through Hadoop's FsShell (one JVM): %v", len(calls), time.Since(start).Round(time.Millisecond))
	fsshellFixture(t, c, sDir)
	start = time.Now()
	s := runSmarthShells(t, c.NameNodeAddr(), rpcURI, sDir, calls)
	sLocal := localState(t, sDir)
	t.Logf("%d calls through smarth fs: %v", len(calls), time.Since(start).Round(time.Millisecond))

	var diffs []string
	for i, call := range calls {
		hr := callResult{normalise(h[i].out, webURI, rpcURI), normalise(h[i].err, webURI, rpcURI), h[i].rc}
		sr := callResult{normalise(s[i].out, webURI, rpcURI), normalise(s[i].err, webURI, rpcURI), s[i].rc}
		line := strings.Join(call.args, " ")
		if call.check != nil {
			if d := call.check(hr, sr); d != "" {
				diffs = append(diffs, fmt.Sprintf("%s (exception: %s): %s", line, call.exception, d))
			}
			continue
		}
		if hr != sr {
			diffs = append(diffs, fmt.Sprintf("%s:\n  hadoop rc %d\n    out %q\n    err %q\n  smarth rc %d\n    out %q\n    err %q",
				line, hr.rc, hr.out, hr.err, sr.rc, sr.out, sr.err))
		}
	}
	if hLocal != sLocal {
		diffs = append(diffs, fmt.Sprintf("local files left:\n  hadoop:\n%s  smarth:\n%s", hLocal, sLocal))
	}
	if len(diffs) > 0 {
		t.Errorf("%d of %d calls differ between hadoop fs and smarth fs:\n%s", len(diffs), len(calls), strings.Join(diffs, "\n"))
	}
}
