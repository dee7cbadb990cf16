// Package scripttest runs the scripted cases that the pure decision
// packages (placement, cache, sched) are tested with: a file of cases,
// each a command line with key=value arguments, optional input lines, a
// "----" line and the expected output, ended by a blank line:
//
//	choose policy=rackaware replicas=3 writer=dn1
//	----
//	dn1 dn4 dn5
//
// The package only parses, compares and rewrites; what a command means is
// the calling test's business. It is test support: only _test.go files
// import it.
package scripttest

import (
	"os"
	"strings"
	"testing"
)

// Case is one scripted case.
type Case struct {
	Line   int               // line of the command in the file
	Cmd    string            // the command's first word
	Args   map[string]string // its key=value arguments (a bare key maps to "")
	Input  []string          // lines between the command and "----", trimmed
	Want   []string          // expected output lines
	outPos [2]int            // line range of the expected output, for Rewrite
}

// Parse reads the cases of the script at path, with the file's lines.
func Parse(t testing.TB, path string) ([]string, []Case) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var cases []Case
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := Case{Line: i + 1, Args: map[string]string{}}
		f := strings.Fields(l)
		c.Cmd = f[0]
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			c.Args[k] = v
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "----"; i++ {
			c.Input = append(c.Input, strings.TrimSpace(lines[i]))
		}
		if i >= len(lines) {
			t.Fatalf("%s:%d: case has no ---- line", path, c.Line)
		}
		c.outPos[0] = i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			c.Want = append(c.Want, lines[i])
		}
		c.outPos[1] = i
		cases = append(cases, c)
	}
	return lines, cases
}

// Run runs every case of the script at path through run and compares its
// output with the expected one; with rewrite it writes the outputs into
// the file instead (review the diff before committing it).
func Run(t *testing.T, path string, rewrite bool, run func(t *testing.T, c Case) string) {
	t.Helper()
	lines, cases := Parse(t, path)
	var out []string
	prev := 0
	for _, c := range cases {
		got := strings.TrimRight(run(t, c), "\n")
		if rewrite {
			out = append(out, lines[prev:c.outPos[0]]...)
			if got != "" {
				out = append(out, strings.Split(got, "\n")...)
			}
			prev = c.outPos[1]
			continue
		}
		if want := strings.Join(c.Want, "\n"); got != want {
			t.Errorf("%s:%d: %s %v\ngot:\n%s\nwant:\n%s", path, c.Line, c.Cmd, c.Args, got, want)
		}
	}
	if rewrite {
		out = append(out, lines[prev:]...)
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
