package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/testcluster"
)

// TestFsGetmerge: fs getmerge (and hdfs dfs's -getmerge) as Hadoop's Merge:
// a directory's files in name order, its subdirectories skipped, -nl a
// newline after each file and -skip-empty-file none after an empty one;
// a missing source fails with HDFS's words and writes nothing; a local
// directory as the destination is "Is a directory"; too few arguments exit 2.
func TestFsGetmerge(t *testing.T) {
	fsc := rootFs(t)
	dir := t.TempDir()
	if _, code, msg := fsc("mkdir", "/m"); code != 0 {
		t.Fatal(msg)
	}
	for name, data := range map[string]string{"b": "B", "a": "A", "c": "", "d": "D"} {
		local := filepath.Join(dir, name)
		if err := os.WriteFile(local, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, code, msg := fsc("put", local, "/m/"+name); code != 0 {
			t.Fatalf("put %s: %d %s", name, code, msg)
		}
	}
	if _, code, msg := fsc("mkdir", "/m/sub"); code != 0 {
		t.Fatal(msg)
	}
	if _, code, msg := fsc("put", filepath.Join(dir, "a"), "/m/sub/x"); code != 0 {
		t.Fatal(msg)
	}
	out := filepath.Join(dir, "out", "merged") // a missing parent is made
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"getmerge", "/m", out}, "ABD"},
		{[]string{"-getmerge", "-nl", "/m", out}, "A\nB\n\nD\n"},
		{[]string{"getmerge", "-nl", "-skip-empty-file", "/m", out}, "A\nB\nD\n"},
		{[]string{"getmerge", "/m/d", "/m/[ab]", out}, "DAB"},
	} {
		if _, code, msg := fsc(tc.args...); code != 0 {
			t.Fatalf("%v: exit %d %s", tc.args, code, msg)
		}
		if got := read(); got != tc.want {
			t.Fatalf("%v wrote %q, want %q", tc.args, got, tc.want)
		}
	}
	// A missing source: HDFS's message, exit 1, the old file untouched.
	_, code, msg := fsc("getmerge", "/m/nope", out)
	if code != 1 || msg != "getmerge: `/m/nope': No such file or directory" {
		t.Fatalf("missing source: exit %d %q", code, msg)
	}
	_, code, _ = fsc("getmerge", "/m/a", "/m/nope", "/m/none*", out)
	if code != 1 || read() != "DAB" {
		t.Fatalf("two missing sources: exit %d, the destination now %q (want DAB kept)", code, read())
	}
	_, code, msg = fsc("getmerge", "/m", dir)
	if code != 1 || msg != "getmerge: `"+dir+"': Is a directory" {
		t.Fatalf("a directory as destination: exit %d %q", code, msg)
	}
	_, code, msg = fsc("getmerge", "/m")
	if code != 2 || !strings.Contains(msg, "getmerge: needs at least 2 argument(s)") {
		t.Fatalf("one argument: exit %d %q", code, msg)
	}
}

// TestFsFsckHadoopOptions: fsck takes hdfs fsck's single-dash word options
// after the path (they were "unknown shorthand flag: 'f' in -files"), in
// both spellings of the command; a generic -Dk=v before the command
// reaches put (it was an unknown command); -list-corruptfileblocks with -files is a
// usage error (exit 2), as is -move with it, and an unknown option.
func TestFsFsckHadoopOptions(t *testing.T) {
	fsc := rootFs(t)
	local := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(local, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code, msg := fsc("put", local, "/x"); code != 0 {
		t.Fatal(msg)
	}
	for _, args := range [][]string{{"fsck", "/", "-files", "-blocks", "-locations"}, {"-fsck", "/", "-files", "-blocks", "-racks"}} {
		out, code, msg := fsc(args...)
		if code != 0 || !strings.Contains(out, "/x 5 bytes, replicated: replication=1, 1 block(s):  OK\n0. blk_") ||
			!strings.Contains(out, "The filesystem under path '/' is HEALTHY") {
			t.Fatalf("%v: exit %d %q\n%s", args, code, msg, out)
		}
	}
	// Hadoop's generic -D before the command reaches put.
	if _, code, msg := fsc("-Ddfs.replication=2", "-put", local, "/y"); code != 0 {
		t.Fatalf("-Ddfs.replication=2 -put: exit %d %q", code, msg)
	}
	if out, code, msg := fsc("-stat", "%r", "/y"); code != 0 || out != "2\n" {
		t.Fatalf("replication of the file put with -Ddfs.replication=2: %q %d %q", out, code, msg)
	}
	if out, code, _ := fsc("fsck", "/", "-list-corruptfileblocks"); code != 0 || out != "The filesystem under path '/' has 0 CORRUPT files\n" {
		t.Fatalf("-list-corruptfileblocks: exit %d %q", code, out)
	}
	if _, code, msg := fsc("fsck", "/", "-list-corruptfileblocks", "-files"); code != 2 {
		t.Fatalf("-list-corruptfileblocks -files: exit %d %q, want 2", code, msg)
	}
	if _, code, msg := fsc("fsck", "/", "-list-corruptfileblocks", "-move"); code != 2 {
		t.Fatalf("-list-corruptfileblocks -move: exit %d %q, want 2", code, msg)
	}
	if _, code, msg := fsc("fsck", "/", "-nosuch"); code != 2 {
		t.Fatalf("-nosuch: exit %d %q, want 2", code, msg)
	}
}

// rootFs starts a one-datanode cluster and returns a runner of `smarth fs
// args...` against it as root, routed as main routes a line (hdfs dfs's
// spelling included); it returns stdout, the exit status and the error.
func rootFs(t *testing.T) func(args ...string) (string, int, string) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	t.Setenv("SMARTH_TOKEN_FILE", c.TokenFile(t, "root"))
	nn := c.NameNodeAddr()
	return func(args ...string) (string, int, string) {
		line := append([]string{"fs", "--namenode", nn, "--user", "root"}, args...)
		return cliRun("", hadoopArgs(newRootCmd(), line)...)
	}
}
