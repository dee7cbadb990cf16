package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// fsExit runs `smarth fs args...` and returns the exit status main would
// use and the error text.
func fsExit(args ...string) (int, string) {
	root := newRootCmd()
	root.SetArgs(append([]string{"fs"}, args...))
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	err := root.Execute()
	if err == nil {
		return 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, err.Error()
	}
	return 1, err.Error()
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
		{[]string{"--write-mode", "fast", "ls", "/"}, 2, "--write-mode must be one of classic, multipipeline, multipipeline-paper"},
		{[]string{"put", "--block-size", "lots", "a", "/b"}, 2, "--block-size"},
		{[]string{"--namenode", "127.0.0.1:1", "ls", "/"}, 1, "ls: `/': cannot reach the namenode at 127.0.0.1:1"},
		{[]string{"nosuch", "/"}, 2, `fs: unknown command "nosuch"`},
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
