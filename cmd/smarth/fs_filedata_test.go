package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/testcluster"
)

// fsRunIn is fsRun with stdin.
func fsRunIn(stdin string, args ...string) (string, int, string) {
	return cliRun(stdin, append([]string{"fs"}, args...)...)
}

func TestFsAppendTruncateConcatUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"appendToFile", "only-one"}, "appendToFile: needs at least 2 argument(s)"},
		{[]string{"truncate", "10"}, "truncate: needs at least 2 argument(s)"},
		{[]string{"truncate", "-5", "/x"}, "truncate: unknown shorthand flag: '5'"},
		{[]string{"truncate", "ten", "/x"}, `truncate: Illegal length "ten", a non-negative integer expected`},
		{[]string{"truncate", "-x", "1", "/x"}, "unknown shorthand flag"},
		{[]string{"concat", "/only-target"}, "concat: needs at least 2 argument(s)"},
	} {
		code, msg := fsExit(c.args...)
		if code != 2 || !strings.Contains(msg, c.msg) {
			t.Errorf("fs %v: exit %d %q; want 2 with %q", c.args, code, msg, c.msg)
		}
	}
}

func TestFsAppendTruncateConcat(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 64 << 10})
	nn := c.NameNodeAddr()
	// A secure cluster hands out token files; the command reads the one
	// SMARTH_TOKEN_FILE names (a cluster without them takes --user).
	if tf, ok := any(c).(interface {
		TokenFile(testing.TB, string) string
	}); ok {
		t.Setenv("SMARTH_TOKEN_FILE", tf.TokenFile(t, "root"))
	}
	fs := func(stdin string, args ...string) (string, int, string) {
		return fsRunIn(stdin, append([]string{"--namenode", nn, "--user", "root"}, args...)...)
	}
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.txt")
	big := bytes.Repeat([]byte("0123456789abcdef"), 8192) // two full 64 KiB blocks
	bigFile := filepath.Join(dir, "big")
	for p, s := range map[string][]byte{a: []byte("alpha\n"), b: []byte("beta\n"), bigFile: big} {
		if err := os.WriteFile(p, s, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []string{"classic", "multipipeline"} {
		log := "/logs/" + mode + ".log"
		steps := []struct {
			stdin string
			args  []string
			code  int
			out   string // substring of stdout, or of the error
		}{
			{"", []string{"--write-mode", mode, "appendToFile", a, log}, 0, ""}, // creates it
			{"", []string{"--write-mode", mode, "appendToFile", b, a, log}, 0, ""},
			{"gamma\n", []string{"--write-mode", mode, "appendToFile", "-", log}, 0, ""},
			{"", []string{"cat", log}, 0, "alpha\nbeta\nalpha\ngamma\n"},
			{"", []string{"appendToFile", filepath.Join(dir, "nope"), log}, 1, "appendToFile: `" + filepath.Join(dir, "nope") + "': No such file or directory"},
			{"", []string{"appendToFile", "-", a, log}, 1, "stdin (-) can only be the only source"},
			{"", []string{"appendToFile", a, "/logs"}, 1, "appendToFile: `/logs': Is a directory"},
			{"", []string{"truncate", "-w", "100", log}, 1, "truncate: `" + log + "': Cannot truncate to a larger file size. Current size: 23, truncate size: 100."},
			{"", []string{"truncate", "6", log}, 0, "Truncating " + log + " to length: 6. Wait for block recovery"},
		}
		for _, s := range steps {
			out, code, msg := fs(s.stdin, s.args...)
			got := out
			if s.code != 0 {
				got = msg
			}
			if code != s.code || !strings.Contains(got, s.out) {
				t.Fatalf("fs %v: exit %d, out %q, err %q; want exit %d with %q", s.args, code, out, msg, s.code, s.out)
			}
		}
	}
	// -w waits for the recovery: the file is closed and cut when it returns.
	if out, code, msg := fs("", "put", bigFile, "/big"); code != 0 {
		t.Fatal(out, msg)
	}
	out, code, msg := fs("", "truncate", "-w", "70000", "/big")
	if code != 0 || !strings.Contains(out, "Waiting for /big ...\nTruncated /big to length: 70000") {
		t.Fatalf("truncate -w: exit %d %q %q", code, out, msg)
	}
	if out, _, _ := fs("", "stat", "%b", "/big"); strings.TrimSpace(out) != "70000" {
		t.Fatalf("stat after truncate -w: %q", out)
	}
	if out, code, _ := fs("", "truncate", "65536", "/big"); code != 0 || !strings.Contains(out, "Truncated /big to length: 65536") {
		t.Fatalf("truncate on a block boundary: %q", out)
	}
	if _, code, msg := fs("", "truncate", "1", "/nope"); code != 1 || !strings.Contains(msg, "truncate: `/nope': No such file or directory") {
		t.Fatalf("truncate of a missing file: %d %q", code, msg)
	}
	// concat: the target keeps its blocks, the sources' follow.
	if out, code, msg := fs("", "mkdir", "/c"); code != 0 {
		t.Fatal(out, msg)
	}
	for _, p := range []string{"/c/t", "/c/s1"} {
		if out, code, msg := fs("", "put", bigFile, p); code != 0 {
			t.Fatal(out, msg)
		}
	}
	if out, code, msg := fs("", "put", a, "/c/s2"); code != 0 {
		t.Fatal(out, msg)
	}
	if out, code, msg := fs("", "concat", "/c/t", "/c/s*"); code != 0 {
		t.Fatal(out, msg)
	}
	if out, _, _ := fs("", "stat", "%b", "/c/t"); strings.TrimSpace(out) != "262150" {
		t.Fatalf("concat length: %q", out)
	}
	if _, code, msg := fs("", "concat", "/c/t", "/logs/classic.log"); code != 1 || !strings.Contains(msg, "concat: `/logs/classic.log': Sources and target are not in the same directory") {
		t.Fatalf("concat across directories: %d %q", code, msg)
	}
	if _, code, msg := fs("", "concat", "/c/t", "/c/none"); code != 1 || !strings.Contains(msg, "concat: `/c/none': No such file or directory") {
		t.Fatalf("concat of a missing source: %d %q", code, msg)
	}
}
