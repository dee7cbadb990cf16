package layering

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers are the architecture's layers from the bottom up. A package may
// import any package of a lower layer, and a package of its own layer
// only where its row in the doc names that edge; never one above. The doc's
// layer table must list exactly these, in this order (top first), so the
// test and the page cannot tell two stories.
var layers = []string{"vocabulary", "pure", "wire", "engine", "harness", "cmd"}

// daemons never depend on each other, directly or not, whatever the doc's
// rows allow: they meet only through internal/rpc and
// internal/datatransfer. A path names a tree: the package and its
// subpackages.
var daemons = []string{"internal/namenode", "internal/datanode", "internal/resourcemanager", "internal/nodemanager"}

// apart adds the other trees that must never link a daemon in, and what
// the namenode must not depend on besides the other daemons, again
// whatever the rows say. The client and MapReduce run in users' processes
// and tasks; the launchers start daemons as processes of the binary and
// reach them by RPC. The namenode is what the client calls, so a
// namenode depending on the client would call itself through the network
// (its console and WebHDFS call its own handlers in process instead).
var apart = map[string][]string{
	"internal/client":    daemons,
	"internal/mapreduce": daemons,
	"internal/cluster":   daemons,
	"internal/testbed":   daemons,
	"internal/namenode":  {"internal/client"},
}

const (
	module  = "smarth/"
	docPath = "docs/architecture.md"
)

// row is one package of the doc's package table.
type row struct {
	layer string
	same  []string // packages of its own layer it may import
	line  int
}

// pkg is one package as `go list` sees it (module prefix removed).
type pkg struct {
	path    string
	imports []string // module packages its non-test files import
	deps    []string // module packages it depends on, transitively
}

func TestLayering(t *testing.T) {
	root := moduleRoot(t)
	docLayers, rows := readDoc(t, filepath.Join(root, docPath))
	pkgs := listPackages(t, root)
	for _, err := range check(docLayers, rows, pkgs) {
		t.Error(err)
	}
}

// check returns every way the package graph and the doc disagree with the
// layering; none when they agree.
func check(docLayers []string, rows map[string]row, pkgs []pkg) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	top := slices.Clone(layers)
	slices.Reverse(top)
	if !slices.Equal(docLayers, top) {
		fail("%s's layer table lists %v; the layering test knows %v (top first): change both together", docPath, docLayers, top)
	}
	rank := map[string]int{}
	for i, l := range layers {
		rank[l] = i
	}
	for path, r := range rows {
		if _, ok := rank[r.layer]; !ok {
			fail("%s:%d: %s is in layer %q, which is not one of %v", docPath, r.line, path, r.layer, layers)
		}
	}

	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[p.path] = true
	}
	for path, r := range rows {
		if !listed[path] {
			fail("%s:%d: row for %s, which `go list ./...` does not name: remove the row or create the package", docPath, r.line, path)
		}
	}

	for _, p := range pkgs {
		r, ok := rows[p.path]
		if !ok {
			fail("%s is missing from %s's package table: add a row with its layer", p.path, docPath)
			continue
		}
		for _, q := range p.imports {
			rq, ok := rows[q]
			if !ok {
				continue // reported as missing above
			}
			switch {
			case rank[rq.layer] > rank[r.layer]:
				fail("%s (%s) imports %s (%s), a layer above it", p.path, r.layer, q, rq.layer)
			case rank[rq.layer] == rank[r.layer] && !slices.Contains(r.same, q):
				fail("%s imports %s of its own layer (%s), which its row in %s (line %d) does not allow", p.path, q, r.layer, docPath, r.line)
			}
		}
		// The doc's sideways arrows must be real, or the page draws a
		// graph the code does not have.
		for _, q := range r.same {
			rq, ok := rows[q]
			switch {
			case !ok:
				fail("%s:%d: %s may import %s, which has no row", docPath, r.line, p.path, q)
			case rq.layer != r.layer:
				fail("%s:%d: %s lists %s as of its own layer, but it is in %s, not %s", docPath, r.line, p.path, q, rq.layer, r.layer)
			case !slices.Contains(p.imports, q):
				fail("%s:%d: %s lists %s as an import, but does not import it", docPath, r.line, p.path, q)
			}
		}
	}

	// Folders show layers: a package sits in the folder of a package of
	// its own layer or a higher one, never under a lower one, so that a
	// folder read as a unit (internal/tune, imported by the datanode)
	// does not hold a harness. A test double or fault injector that only
	// tests import may stay beside what it fakes.
	imported := map[string]bool{}
	for _, p := range pkgs {
		for _, q := range p.imports {
			imported[q] = true
		}
	}
	for _, p := range pkgs {
		r, ok := rows[p.path]
		if !ok || !imported[p.path] {
			continue
		}
		for dir := path.Dir(p.path); dir != "."; dir = path.Dir(dir) {
			if rd, ok := rows[dir]; ok {
				if rank[r.layer] > rank[rd.layer] {
					fail("%s (%s) sits in the folder of %s (%s), a lower layer: move it under a folder of its own layer", p.path, r.layer, dir, rd.layer)
				}
				break
			}
		}
	}

	roots := slices.Compact(slices.Sorted(maps.Keys(apart)))
	roots = slices.Compact(slices.Sorted(slices.Values(append(roots, daemons...))))
	for _, p := range pkgs {
		var never []string
		for _, r := range roots {
			if !under(p.path, r) {
				continue
			}
			if slices.Contains(daemons, r) {
				never = append(never, slices.DeleteFunc(slices.Clone(daemons), func(d string) bool { return d == r })...)
			}
			never = append(never, apart[r]...)
		}
		reported := map[string]bool{} // one line per forbidden tree is enough
		for _, dep := range p.deps {
			if bad := tree(dep, never); bad != "" && !reported[bad] {
				reported[bad] = true
				fail("%s depends on %s (through its imports), but must never depend on %s", p.path, dep, bad)
			}
		}
	}
	return errs
}

// under reports whether path is root or a package under it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// tree returns the root of roots that path is under, or "".
func tree(path string, roots []string) string {
	for _, r := range roots {
		if under(path, r) {
			return r
		}
	}
	return ""
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// listPackages runs `go list` over the module: every package, what its
// non-test files import and everything it depends on. Tests are left out:
// an engine's tests may start a whole test cluster.
func listPackages(t *testing.T, root string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	own := func(paths string) []string {
		var r []string
		for _, p := range strings.Fields(paths) {
			if strings.HasPrefix(p, module) {
				r = append(r, strings.TrimPrefix(p, module))
			}
		}
		return r
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || !strings.HasPrefix(f[0], module) {
			t.Fatalf("go list printed %q", line)
		}
		pkgs = append(pkgs, pkg{path: strings.TrimPrefix(f[0], module), imports: own(f[1]), deps: own(f[2])})
	}
	return pkgs
}

// readDoc reads the two tables of the doc's "Packages and layers"
// section: the layers (first column `layer`) top first, and the packages
// (first column `package`, then the layer, then the packages of its own
// layer it may import, backquoted).
func readDoc(t *testing.T, path string) ([]string, map[string]row) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers, rows, err := parseDoc(f)
	if err != nil {
		t.Fatalf("%s: %v", docPath, err)
	}
	return layers, rows
}

func parseDoc(f io.Reader) ([]string, map[string]row, error) {
	var (
		layers  []string
		rows    = map[string]row{}
		table   string // header of the table being read: "layer", "package" or ""
		section bool
		n       int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			if section {
				break
			}
			section = line == "## Packages and layers"
			continue
		}
		if !section {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			table = ""
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case table == "" && (cells[0] == "layer" || cells[0] == "package"):
			table = cells[0]
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		name := strings.Trim(cells[0], "`")
		switch table {
		case "layer":
			layers = append(layers, name)
		case "package":
			if len(cells) < 3 {
				return nil, nil, fmt.Errorf("line %d: a package row needs package | layer | same-layer imports | ...", n)
			}
			if _, dup := rows[name]; dup {
				return nil, nil, fmt.Errorf("line %d: second row for %s", n, name)
			}
			r := row{layer: strings.Trim(cells[1], "`"), line: n}
			for _, s := range strings.Split(cells[2], ",") {
				if s = strings.Trim(strings.TrimSpace(s), "`"); s != "" && s != "—" {
					r.same = append(r.same, s)
				}
			}
			rows[name] = r
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if len(layers) == 0 || len(rows) == 0 {
		return nil, nil, fmt.Errorf(`no layer table or no package table under "## Packages and layers"`)
	}
	return layers, rows, nil
}
