package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"smarth/internal/doctor"
)

// On a testbed host, the ports of the host's own daemons are passed down
// (--own-port) and reported as theirs, not as "another program"; the fake
// tree has a listener on 8080.
func TestDoctorOwnPorts(t *testing.T) {
	run := func(args ...string) (string, error) {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetArgs(append([]string{"doctor", "--root", "../../internal/doctor/testdata/good", "--check", "ports", "--json"}, args...))
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		err := root.Execute()
		return out.String(), err
	}
	value := func(out string, id string) string {
		var rs []doctor.Report
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("doctor JSON: %v\n%s", err, out)
		}
		for _, r := range rs[0].Results {
			if r.ID == id {
				return string(r.Status) + " " + r.Value
			}
		}
		t.Fatalf("no %s in %s", id, out)
		return ""
	}
	out, err := run("--port", "8080")
	if err != nil {
		t.Fatal(err)
	}
	if v := value(out, "port:8080"); !strings.Contains(v, "another program") {
		t.Fatalf("without --own-port: %q", v)
	}
	out, err = run("--own-port", "8080=namenode@master")
	if err != nil {
		t.Fatal(err)
	}
	if v := value(out, "port:8080"); !strings.Contains(v, "in use by namenode@master") {
		t.Fatalf("with --own-port: %q", v)
	}
	if v := value(out, "port:8020"); !strings.Contains(v, "free") {
		t.Fatalf("default ports dropped when own ports were added: 8020 %q", v)
	}
	_, err = run("--own-port", "http")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("--own-port http: %v, want a usage error", err)
	}
}
