package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/testcluster"
)

// fsExit runs `smarth fs args...` and returns the exit status main would
// use and the error text.
func fsExit(args ...string) (int, string) {
	_, code, msg := fsRun(args...)
	return code, msg
}

func TestFsExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"put", "only-one"}, 2, "put: needs at least 2 argument(s)"},
		{[]string{"setrep", "zero", "/x"}, 2, `setrep: replication "zero" must be a positive number`},
		{[]string{"--progress", "sometimes", "ls", "/"}, 2, "--progress must be auto, always or never"},
		{[]string{"--write-mode", "fast", "ls", "/"}, 2, "--write-mode must be one of classic, multipipeline, multipipeline-concurrent, multipipeline-paper"},
		{[]string{"put", "--block-size", "lots", "a", "/b"}, 2, "--block-size"},
		{[]string{"--namenode", "127.0.0.1:1", "ls", "/"}, 1, "ls: `/': cannot reach the namenode at 127.0.0.1:1"},
		{[]string{"nosuch", "/"}, 2, "nosuch: Unknown command\nUsage: smarth fs"},
		{[]string{"lss", "/"}, 2, "did you mean ls?"},
		{[]string{"ls", "--bogus", "/"}, 2, "ls: unknown flag: --bogus"},
		{[]string{"put", "-r", "2", "a", "/b"}, 2, "-r is not a flag of hdfs dfs -put; for replication use --replication N or -D dfs.replication=N"},
		{[]string{"put", "-D", "dfs.replication=zero", "a", "/b"}, 2, "-D dfs.replication=zero: want a positive number"},
		{[]string{"put", "-D", "fs.trash.interval=1", "a", "/b"}, 2, "unknown key"},
		{[]string{"chmod", "u+q", "/x"}, 2, `chmod: invalid argument: mode "u+q"`},
		{[]string{"chown", ":", "/x"}, 2, "want OWNER[:GROUP] or :GROUP"},
		{[]string{"test", "/x"}, 2, "test: give one of -e, -d, -f, -s, -z"},
		{[]string{"test", "-e", "-d", "/x"}, 2, "test: give one of"},
		{[]string{"find", "/", "-type", "l"}, 2, `find: -type "l": want f or d`},
		{[]string{"rm", "-bogus", "/x"}, 2, "rm: unknown shorthand flag"},
		{[]string{"rm"}, 2, "rm: needs at least 1 argument"},
		{[]string{"ls", "a", "hdfs://h1:1/a", "smarth://h2:1/b"}, 2, "paths name two namenodes, h1:1 and h2:1"},
		{[]string{"ls", "hdfs://127.0.0.1:1/x"}, 1, "cannot reach the namenode at 127.0.0.1:1"},
	}
	for _, c := range cases {
		code, msg := fsExit(c.args...)
		if code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("smarth fs %s: exit %d %q, want %d containing %q", strings.Join(c.args, " "), code, msg, c.code, c.msg)
		}
	}
}

// fsRun runs `smarth fs args...` and returns stdout, the exit status and
// the error text.
func fsRun(args ...string) (string, int, string) {
	return cliRun("", append([]string{"fs"}, args...)...)
}

// cliRun runs smarth with args, stdin as its input; it returns what it
// printed on stdout, its exit code and the error's text.
func cliRun(stdin string, args ...string) (string, int, string) {
	root := newRootCmd()
	root.SetArgs(args)
	out := &bytes.Buffer{}
	root.SetOut(out)
	root.SetErr(&bytes.Buffer{})
	root.SetIn(strings.NewReader(stdin))
	err := root.Execute()
	if err == nil {
		return out.String(), 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return out.String(), ee.code, err.Error()
	}
	return out.String(), 1, err.Error()
}

func TestFsCommandsHaveExamples(t *testing.T) {
	for _, c := range newFsCmd().Commands() {
		if c.Example == "" || c.Short == "" {
			t.Errorf("fs %s: no Example or Short help", c.Name())
		}
	}
}

func TestFsAgainstCluster(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	nn := c.NameNodeAddr()
	// The cluster is secure: each user is whoever's token file the
	// command reads, as `smarth login` hands them out.
	tokens := map[string]string{}
	as := func(user string, args ...string) (string, int, string) {
		if tokens[user] == "" {
			tokens[user] = c.TokenFile(t, user)
		}
		t.Setenv("SMARTH_TOKEN_FILE", tokens[user])
		return fsRun(append([]string{"--namenode", nn, "--user", user}, args...)...)
	}
	local := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(local, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		user string
		args []string
		code int
		out  string // substring of stdout, or of the error when code != 0
	}{
		{"root", []string{"mkdir", "-p", "/user/alice"}, 0, ""},
		{"root", []string{"chown", "alice", "/user/alice"}, 0, ""},
		{"alice", []string{"put", "-p", local, "x.txt"}, 0, ""}, // relative: /user/alice/x.txt
		{"alice", []string{"ls", "-h"}, 0, "-rw-------   1 alice"},
		{"alice", []string{"ls", "--help"}, 0, "-h, --human"},
		{"alice", []string{"stat", "%n %a %b", "hdfs://" + nn + "/user/alice/x.txt"}, 0, "x.txt 600 5"},
		{"bob", []string{"cat", "smarth://" + nn + "/user/alice/*.txt"}, 1, "cat: `/user/alice/x.txt': Permission denied"},
		{"alice", []string{"chmod", "o+r", "x.txt"}, 0, ""},
		{"bob", []string{"cat", "/user/alice/x.txt"}, 0, "hello"},
		{"alice", []string{"test", "-f", "x.txt"}, 0, ""},
		{"alice", []string{"test", "-d", "x.txt"}, 1, "test: false"},
		{"alice", []string{"test", "-e", "nope"}, 1, "test: false"},
		{"alice", []string{"find", ".", "-name", "*.txt"}, 0, "x.txt\n"}, // relative as given, as hdfs dfs
		{"alice", []string{"count", "-q", "-v", "."}, 0, "        none             inf"},
		{"alice", []string{"mv", "x.txt", "no/such/dir/"}, 1, "mv: `no/such/dir/': No such file or directory"},
		{"alice", []string{"rm", "-skipTrash", "x.txt"}, 0, "Deleted x.txt"},
		{"alice", []string{"rm", "-r", "-f", "nothing*"}, 0, ""},
		{"alice", []string{"ls", "nope", "."}, 1, ""},
	}
	for _, s := range steps {
		out, code, msg := as(s.user, s.args...)
		got := out
		if s.code != 0 {
			got = msg
		}
		if code != s.code || !strings.Contains(got, s.out) {
			t.Fatalf("%s: smarth fs %s: exit %d, out %q, err %q; want %d with %q", s.user, strings.Join(s.args, " "), code, out, msg, s.code, s.out)
		}
	}
}
