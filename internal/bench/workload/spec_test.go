package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShippedWorkloadsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../../testbed/workloads/*.yaml")
	if len(files) != 8 {
		t.Fatalf("found %d workload files under testbed/workloads, want w1..w7 and dynamic", len(files))
	}
	const cache = 4 * 200 << 20 // the runner's default cluster
	for _, f := range files {
		w, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if r := float64(w.WorkingSet()) / cache; r < 0.9 || r > 1.5 {
			t.Errorf("%s: working set %.2fx the default total cache, want 0.9-1.5x", f, r)
		}
		if !w.Dynamic() && len(w.Apps) != 4 {
			t.Errorf("%s: %d apps, want 4 as in Table 3", f, len(w.Apps))
		}
	}
	dyn, err := Load("../../../testbed/workloads/dynamic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !dyn.Dynamic() || len(dyn.Users) != 4 || len(dyn.Users[3].Apps) != 2 {
		t.Errorf("dynamic: %d users, want 4 with one alternating two apps", len(dyn.Users))
	}
}

func TestParseFillsDefaults(t *testing.T) {
	w, err := Parse([]byte(`
name: x
inputs: {text: {kind: text, size: 64MiB}}
apps:
  - {app: grep, input: text}
  - {app: grep, input: text, affinity: 0.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Share != 0.25 || w.Apps[0].Label != "grep" || w.Apps[1].Label != "grep-2" {
		t.Errorf("share %v labels %q %q, want 0.25, grep, grep-2", w.Share, w.Apps[0].Label, w.Apps[1].Label)
	}
	if w.Apps[0].Affinity != 0.638 || w.Apps[1].Affinity != 0.5 {
		t.Errorf("affinities %v %v, want Table 1's 0.638 and the given 0.5", w.Apps[0].Affinity, w.Apps[1].Affinity)
	}
	if w.Inputs["text"].Size != 64<<20 {
		t.Errorf("size %d", w.Inputs["text"].Size)
	}
}

func TestParseErrors(t *testing.T) {
	in := "name: x\ninputs: {text: {kind: text, size: 64MiB}, hive: {kind: hive, size: 1GiB}}\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown key", in + "apps: [{app: grep, input: text, regexp: a}]", "field regexp not found"},
		{"no name", "inputs: {text: {kind: text, size: 1MiB}}\napps: [{app: grep, input: text}]", "name: missing"},
		{"unknown app", in + "apps: [{app: terasort, input: text}]", `apps[0]: unknown app "terasort" (workload apps: aggregation, grep, join, kmeans, pagerank, sort, wordcount)`},
		{"missing input", in + "apps: [{app: grep, input: logs}]", `input "logs" is not under inputs: (inputs: hive, text)`},
		{"wrong kind", in + "apps: [{app: join, input: text}]", "join reads hive input, but text is text"},
		{"bad kind", "name: x\ninputs: {t: {kind: csv, size: 1MiB}}\napps: [{app: grep, input: t}]", `unknown kind "csv"`},
		{"bad size", "name: x\ninputs: {t: {kind: text, size: lots}}\napps: [{app: grep, input: t}]", `size "lots"`},
		{"no apps", in, "no apps"},
		{"both", in + "apps: [{app: grep, input: text}]\nduration: 1m\nusers: [{name: u, every: 1s, apps: [{app: grep, input: text}]}]", "not both"},
		{"bad share", in + "share: 2\napps: [{app: grep, input: text}]", "share 2"},
		{"bad affinity", in + "apps: [{app: grep, input: text, affinity: 2}]", "affinity 2: want 0..1"},
		{"no duration", in + "users: [{name: u, every: 1s, apps: [{app: grep, input: text}]}]", "needs a positive duration"},
		{"bad every", in + "duration: 1m\nusers: [{name: u, every: often, apps: [{app: grep, input: text}]}]", `user u: every "often"`},
		{"same user", in + "duration: 1m\nusers: [{name: u, every: 1s, apps: [{app: grep, input: text}]}, {name: u, every: 1s, apps: [{app: grep, input: text}]}]", "distinct name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(filepath.Join(dir, "testbed", "workloads"), 0o755)
	os.MkdirAll(sub, 0o755)
	want := filepath.Join(dir, "testbed", "workloads", "w3.yaml")
	os.WriteFile(want, []byte("x"), 0o644)
	if got, err := Find("W3", sub); err != nil || got != want {
		t.Errorf("Find(W3) = %q, %v; want %q", got, err, want)
	}
	if _, err := Find("w9", sub); err == nil || !strings.Contains(err.Error(), "w1..w7, dynamic") {
		t.Errorf("Find(w9) = %v, want an error listing the shipped names", err)
	}
	if _, err := Find("missing.yaml", sub); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Find(missing.yaml) = %v", err)
	}
}
