package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// testbedRun runs `smarth testbed args...` with a throw-away state dir and
// returns the exit status main would use, stdout and the error text.
func testbedRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	root := newRootCmd()
	root.SetArgs(append([]string{"testbed", "--state-dir", t.TempDir(), "--work-dir", t.TempDir()}, args...))
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	err := root.Execute()
	if err == nil {
		return 0, out.String(), ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, out.String(), err.Error()
	}
	return 1, out.String(), err.Error()
}

func TestTestbedUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"up"}, 2, "want a topology file"},
		{[]string{"exec", "dn1", "ls"}, 2, "smarth testbed exec HOST -- CMD"},
		{[]string{"shape", "dn1"}, 2, "nothing to change"},
		{[]string{"shape"}, 2, "name a HOST"},
		{[]string{"shape", "dn1", "--rack", "a", "--uplink", "1gbit"}, 2, "either a HOST or --rack"},
		{[]string{"check", "--pair", "dn1"}, 2, `--pair "dn1": want SENDER:RECEIVER`},
		{[]string{"check", "--warmup", "5s"}, 2, "must be shorter than --duration"},
		{[]string{"status"}, 1, "no testbed is up"},
		{[]string{"up", "--dry-run", "no-such.yaml"}, 1, "no-such.yaml"},
	}
	for _, c := range cases {
		code, _, msg := testbedRun(t, c.args...)
		if code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("testbed %v: exit %d %q, want exit %d and %q", c.args, code, msg, c.code, c.msg)
		}
	}
}

func TestTestbedDryRun(t *testing.T) {
	code, out, msg := testbedRun(t, "up", "--dry-run", "../../testbed/two-rack-100.yaml")
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, msg)
	}
	for _, want := range []string{
		"ip netns add smarth.two-rack-100._core",
		"ip -n smarth.two-rack-100.dn9 route add 10.77.0.0/16 via 10.77.2.1",
		"tc -n smarth.two-rack-100.nn class add dev eth0 parent 1:1 classid 1:20 htb",
		"# start namenode@nn: smarth namenode --config",
		"# start datanode@dn9: smarth datanode --config",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q", want)
		}
	}
}

// `up --namenodes 3 --dry-run` plans an HA group spread over the racks;
// an even count is refused with the reason.
func TestTestbedDryRunHA(t *testing.T) {
	code, out, msg := testbedRun(t, "up", "--dry-run", "--namenodes", "3", "../../testbed/two-rack-3-6.yaml")
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, msg)
	}
	var members []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# start namenode@") {
			members = append(members, strings.TrimSuffix(strings.Fields(line)[2], ":"))
		}
	}
	// nn is rack-a's namenode; rack-b has none, so dn4 (its first host)
	// joins, then the racks are even and dn1 (rack-a's first other).
	if got := strings.Join(members, " "); got != "namenode@nn namenode@dn1 namenode@dn4" {
		t.Errorf("members %q, want nn, dn1 and dn4", got)
	}
	code, _, msg = testbedRun(t, "up", "--dry-run", "--namenodes", "2", "../../testbed/two-rack-3-6.yaml")
	if code == 0 || !strings.Contains(msg, "must be 1, 3 or 5") {
		t.Errorf("--namenodes 2: exit %d: %s", code, msg)
	}
}
