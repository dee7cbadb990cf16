package apps

import (
	"bytes"
	"context"
	"io"
	"maps"
	"path"
	"sort"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
)

// testEnv is a local runner over a temporary directory with small blocks
// (several splits per file) and a small sort buffer (spills happen).
type testEnv struct {
	t   *testing.T
	fs  *mapreduce.LocalFS
	r   *mapreduce.LocalRunner
	out *bytes.Buffer // what drivers print
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lfs.BlockSize = 64 << 10
	out := &bytes.Buffer{}
	r := mapreduce.NewLocalRunner(lfs, mapreduce.LocalOptions{
		Registry:        mapreduce.NewRegistry(AllWith(Options{Out: out})...),
		WorkDir:         t.TempDir(),
		SortBufferBytes: 256 << 10,
		MaxAttempts:     1,
	})
	return &testEnv{t: t, fs: lfs, r: r, out: out}
}

func (e *testEnv) write(p string, data []byte) {
	e.t.Helper()
	w, err := e.fs.Create(context.Background(), p, mapreduce.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		e.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *testEnv) read(p string) []byte {
	e.t.Helper()
	f, err := e.fs.Open(context.Background(), p)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// parts lists the data files of an output directory in name order.
func (e *testEnv) parts(dir string) []string {
	e.t.Helper()
	ents, err := e.fs.List(context.Background(), dir)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, f := range ents {
		if !f.IsDir && !hidden(path.Base(f.Path)) {
			out = append(out, f.Path)
		}
	}
	sort.Strings(out)
	return out
}

func hidden(name string) bool { return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") }

// output concatenates an output directory's part files in name order.
func (e *testEnv) output(dir string) []byte {
	e.t.Helper()
	var b []byte
	for _, p := range e.parts(dir) {
		b = append(b, e.read(p)...)
	}
	return b
}

// lines splits text output into lines.
func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// run runs app and fails the test on error.
func (e *testEnv) run(app string, kv ...string) *mapreduce.Result {
	e.t.Helper()
	p := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	res, err := e.r.Run(context.Background(), app, p)
	if err != nil {
		e.t.Fatalf("run %s %v: %v", app, p, err)
	}
	if res.State != mapreduce.StateSucceeded {
		e.t.Fatalf("run %s: state %s: %s", app, res.State, res.Error)
	}
	return res
}

// kvLines parses "key\tvalue" lines into a map, failing on duplicates.
func kvLines(t *testing.T, b []byte) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range lines(b) {
		k, v, _ := strings.Cut(l, "\t")
		if _, dup := m[k]; dup {
			t.Fatalf("key %q twice in output", k)
		}
		m[k] = v
	}
	return m
}

func TestAllAppsHaveDistinctNamesAndBuildErrors(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range All() {
		if seen[a.Name()] {
			t.Fatalf("app %q twice", a.Name())
		}
		seen[a.Name()] = true
		if a.Description() == "" {
			t.Errorf("app %q has no description", a.Name())
		}
		// With no parameters at all every app must refuse clearly (no
		// output directory, at least), not panic; pi and testdfsio choose
		// their output themselves.
		optionalOutput := a.Name() == "pi" || a.Name() == "testdfsio"
		if _, err := a.Build(map[string]string{}); (err == nil) != optionalOutput {
			t.Errorf("app %q with no parameters: err = %v", a.Name(), err)
		}
	}
}

// TestGeneratorsRefuseBadMapsAndSeed: every generator that takes --maps
// and --seed refuses values out of range, naming the parameter.
func TestGeneratorsRefuseBadMapsAndSeed(t *testing.T) {
	gens := []mapreduce.App{HiveTable{}, KMeansGen{}, PageRankGen{}, RandomTextWriter{}}
	for _, g := range gens {
		for _, bad := range []map[string]string{{"maps": "0"}, {"maps": "x"}, {"seed": "1e400"}} {
			given := map[string]string{"output": "/out", "table": "rankings"}
			maps.Copy(given, bad)
			_, err := g.Build(given)
			if err == nil {
				t.Errorf("%s %v: built a job", g.Name(), bad)
				continue
			}
			for name := range bad {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("%s %v: error %q does not name %s", g.Name(), bad, err, name)
				}
			}
		}
	}
}
