package layering

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckCatches feeds check a small graph that keeps the rules, then
// breaks it one way at a time: each break must be reported, so a rule
// that stops working fails here rather than passing the real graph.
func TestCheckCatches(t *testing.T) {
	top := slices.Clone(layers)
	slices.Reverse(top)
	base := func() (map[string]row, []pkg) {
		rows := map[string]row{
			"cmd/smarth":                {layer: "cmd"},
			"internal/cluster":          {layer: "harness"},
			"internal/namenode":         {layer: "engine", same: []string{"internal/namenode/journal"}},
			"internal/namenode/journal": {layer: "engine"},
			"internal/datanode":         {layer: "engine"},
			"internal/client":           {layer: "engine"},
			"internal/client/fakedfs":   {layer: "harness"}, // a test double beside what it fakes: only tests import it
			"internal/rpc/dfspb":        {layer: "wire"},
			"internal/ipc":              {layer: "wire"},
			"internal/placement":        {layer: "pure"},
			"internal/topology":         {layer: "vocabulary"},
		}
		pkgs := []pkg{
			{path: "cmd/smarth", imports: []string{"internal/cluster", "internal/namenode"}},
			{path: "internal/cluster", imports: []string{"internal/rpc/dfspb"}, deps: []string{"internal/rpc/dfspb"}},
			{path: "internal/namenode", imports: []string{"internal/namenode/journal", "internal/placement", "internal/rpc/dfspb"},
				deps: []string{"internal/namenode/journal", "internal/placement", "internal/rpc/dfspb", "internal/topology"}},
			{path: "internal/namenode/journal"},
			{path: "internal/datanode", imports: []string{"internal/rpc/dfspb"}, deps: []string{"internal/rpc/dfspb"}},
			{path: "internal/client", imports: []string{"internal/rpc/dfspb"}, deps: []string{"internal/rpc/dfspb"}},
			{path: "internal/client/fakedfs", imports: []string{"internal/rpc/dfspb"}, deps: []string{"internal/rpc/dfspb"}},
			{path: "internal/rpc/dfspb"},
			{path: "internal/ipc"},
			{path: "internal/placement", imports: []string{"internal/topology"}, deps: []string{"internal/topology"}},
			{path: "internal/topology"},
		}
		return rows, pkgs
	}
	find := func(pkgs []pkg, path string) *pkg {
		for i := range pkgs {
			if pkgs[i].path == path {
				return &pkgs[i]
			}
		}
		t.Fatalf("no package %s in the test graph", path)
		return nil
	}
	allow := func(rows map[string]row, from, to string) {
		r := rows[from]
		r.same = append(r.same, to)
		rows[from] = r
	}
	imports := func(pkgs []pkg, from string, to ...string) {
		p := find(pkgs, from)
		p.imports = append(p.imports, to...)
		p.deps = append(p.deps, to...)
	}

	rows, pkgs := base()
	if errs := check(top, rows, pkgs); len(errs) != 0 {
		t.Fatalf("the unbroken graph was refused: %v", errs)
	}

	for _, c := range []struct {
		name   string
		mutate func(rows map[string]row, pkgs []pkg) ([]string, []pkg)
		want   string
	}{
		{"an engine imports a harness", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			imports(pkgs, "internal/namenode", "internal/cluster")
			return top, pkgs
		}, "internal/namenode (engine) imports internal/cluster (harness), a layer above it"},
		{"a pure package imports the wire", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			imports(pkgs, "internal/placement", "internal/rpc/dfspb")
			return top, pkgs
		}, "internal/placement (pure) imports internal/rpc/dfspb (wire), a layer above it"},
		{"a same-layer import no row allows", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			imports(pkgs, "internal/ipc", "internal/rpc/dfspb")
			return top, pkgs
		}, "internal/ipc imports internal/rpc/dfspb of its own layer (wire), which its row"},
		{"a package without a row", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			return top, append(pkgs, pkg{path: "internal/newthing"})
		}, "internal/newthing is missing from docs/architecture.md's package table"},
		{"a row without a package", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			rows["internal/gone"] = row{layer: "vocabulary", line: 7}
			return top, pkgs
		}, "docs/architecture.md:7: row for internal/gone, which `go list ./...` does not name"},
		{"a row in no layer", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			rows["internal/topology"] = row{layer: "utility", line: 9}
			return top, pkgs
		}, `internal/topology is in layer "utility"`},
		{"a listed same-layer import the code does not make", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			p := find(pkgs, "internal/namenode")
			p.imports = slices.DeleteFunc(p.imports, func(s string) bool { return s == "internal/namenode/journal" })
			return top, pkgs
		}, "internal/namenode lists internal/namenode/journal as an import, but does not import it"},
		{"a listed same-layer import of another layer", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			allow(rows, "internal/namenode", "internal/placement")
			return top, pkgs
		}, "internal/namenode lists internal/placement as of its own layer, but it is in pure"},
		{"a daemon imports another, though its row allows it", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			allow(rows, "internal/namenode", "internal/datanode")
			imports(pkgs, "internal/namenode", "internal/datanode")
			return top, pkgs
		}, "internal/namenode depends on internal/datanode (through its imports), but must never depend on internal/datanode"},
		{"a daemon's subpackage depends on another daemon indirectly", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			find(pkgs, "internal/namenode/journal").deps = []string{"internal/client", "internal/resourcemanager"}
			return top, pkgs
		}, "internal/namenode/journal depends on internal/resourcemanager (through its imports), but must never depend on internal/resourcemanager"},
		{"the namenode depends on the client", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			allow(rows, "internal/namenode", "internal/client")
			imports(pkgs, "internal/namenode", "internal/client")
			return top, pkgs
		}, "internal/namenode depends on internal/client (through its imports), but must never depend on internal/client"},
		{"the launcher links a daemon in", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			imports(pkgs, "internal/cluster", "internal/datanode")
			return top, pkgs
		}, "internal/cluster depends on internal/datanode (through its imports), but must never depend on internal/datanode"},
		{"a harness in an engine's folder", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			rows["internal/namenode/journal/measure"] = row{layer: "harness"}
			imports(pkgs, "cmd/smarth", "internal/namenode/journal/measure")
			return top, append(pkgs, pkg{path: "internal/namenode/journal/measure"})
		}, "internal/namenode/journal/measure (harness) sits in the folder of internal/namenode/journal (engine), a lower layer"},
		{"the doc's layers differ from the test's", func(rows map[string]row, pkgs []pkg) ([]string, []pkg) {
			return slices.DeleteFunc(slices.Clone(top), func(l string) bool { return l == "wire" }), pkgs
		}, "docs/architecture.md's layer table lists"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, pkgs := base()
			docLayers, pkgs := c.mutate(rows, pkgs)
			errs := check(docLayers, rows, pkgs)
			for _, err := range errs {
				if strings.Contains(err.Error(), c.want) {
					return
				}
			}
			t.Errorf("check did not report %q; it reported %v", c.want, errs)
		})
	}
}

// TestParseDoc reads a section shaped as docs/architecture.md's.
func TestParseDoc(t *testing.T) {
	doc := "# x\n\n## Packages and layers\n\ntext\n\n" +
		"| layer | may import | holds |\n|---|---|---|\n| `engine` | wire | daemons |\n| `wire` | nothing | formats |\n\n" +
		"| package | layer | may import from its own layer | what it holds |\n|---|---|---|---|\n" +
		"| `internal/namenode` | `engine` | `internal/namenode/journal`, `internal/tune` | the daemon |\n" +
		"| `internal/ipc` | `wire` | — | framing |\n\n## Processes\n\n| package | layer | x | y |\n|---|---|---|---|\n| `internal/after` | `wire` | — | ignored |\n"
	layers, rows, err := parseDoc(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(layers, []string{"engine", "wire"}) {
		t.Errorf("layers %v, want [engine wire]", layers)
	}
	if len(rows) != 2 {
		t.Errorf("rows %v, want internal/namenode and internal/ipc only (the table after the section is not read)", rows)
	}
	nn := rows["internal/namenode"]
	if nn.layer != "engine" || !slices.Equal(nn.same, []string{"internal/namenode/journal", "internal/tune"}) || nn.line != 14 {
		t.Errorf("internal/namenode's row read as %+v", nn)
	}
	if ipc := rows["internal/ipc"]; ipc.layer != "wire" || len(ipc.same) != 0 {
		t.Errorf("internal/ipc's row read as %+v", ipc)
	}
	dup := strings.Replace(doc, "| `internal/ipc` |", "| `internal/namenode` |", 1)
	if _, _, err := parseDoc(strings.NewReader(dup)); err == nil || !strings.Contains(err.Error(), "second row for internal/namenode") {
		t.Errorf("a second row for one package gave %v", err)
	}
}
