package configdoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/daemonconf"
)

var update = flag.Bool("update", false, "rewrite "+Path+" from the typed configs")

func generate(t *testing.T) ([]byte, string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	page, err := Generate(root)
	if err != nil {
		t.Fatalf("generating %s: %v", Path, err)
	}
	return page, root
}

// TestConfigDocIsCurrent: docs/config.md is what the typed configs, their
// comments and the daemons' defaults say now (CI runs it, so a key added,
// a default changed or a comment reworded without regenerating fails).
func TestConfigDocIsCurrent(t *testing.T) {
	page, root := generate(t)
	path := filepath.Join(root, Path)
	if *update {
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; create it with: %s", err, Regenerate)
	}
	if !bytes.Equal(onDisk, page) {
		t.Fatalf("%s is not current with the typed configs (first difference at line %d); regenerate it with: %s",
			Path, firstDiff(onDisk, page), Regenerate)
	}
}

func firstDiff(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// TestConfigDocListsEveryKey: every key a daemon accepts (daemonconf.Known,
// what Load checks files against) has its row under its daemon, with a
// meaning, and a few defaults read as the daemons set them.
func TestConfigDocListsEveryKey(t *testing.T) {
	page, _ := generate(t)
	sections := map[string]string{}
	for _, s := range strings.Split(string(page), "\n## ")[1:] {
		role, body, _ := strings.Cut(s, "\n")
		sections[role] = body
	}
	for _, role := range daemonconf.Roles() {
		body, ok := sections[role]
		if !ok {
			t.Errorf("no section for %s", role)
			continue
		}
		for _, k := range daemonconf.Known(role) {
			if !strings.Contains(body, "| `"+k+"` |") {
				t.Errorf("%s: key %s has no row", role, k)
			}
		}
	}
	for role, row := range map[string]string{
		daemonconf.NameNode:        "| `replication` | integer | `3` |",
		daemonconf.DataNode:        "| `data_dir_perm` | octal mode | `\"700\"` |",
		daemonconf.ResourceManager: "| `node_timeout` | duration | `10s` |",
		daemonconf.NodeManager:     "| `banned_users` | list of string | `[hdfs, yarn, mapred, bin, root]` |",
	} {
		if !strings.Contains(sections[role], row) {
			t.Errorf("%s: want a row starting %q", role, row)
		}
	}
	if !strings.Contains(sections[daemonconf.NameNode], "| `superuser` | string | *the OS user running the namenode* |") {
		t.Errorf("namenode: superuser's default should say how it is chosen, not this host's user")
	}
}
