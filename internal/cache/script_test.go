package cache

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// A script is a list of cases: a command line with key=value arguments,
// optional input lines, a "----" line and the expected output, as in
// internal/placement.
type scriptCase struct {
	line   int
	cmd    string
	args   map[string]string
	input  []string
	want   []string
	outPos [2]int
}

func parseScript(t *testing.T, path string) ([]string, []scriptCase) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var cases []scriptCase
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := scriptCase{line: i + 1, args: map[string]string{}}
		f := strings.Fields(l)
		c.cmd = f[0]
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			c.args[k] = v
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "----"; i++ {
			c.input = append(c.input, strings.TrimSpace(lines[i]))
		}
		if i >= len(lines) {
			t.Fatalf("%s:%d: case has no ---- line", path, c.line)
		}
		c.outPos[0] = i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			c.want = append(c.want, lines[i])
		}
		c.outPos[1] = i
		cases = append(cases, c)
	}
	return lines, cases
}

func runScript(t *testing.T, path string, run func(c scriptCase) string) {
	lines, cases := parseScript(t, path)
	var out []string
	prev := 0
	for _, c := range cases {
		got := strings.TrimRight(run(c), "\n")
		if *rewrite {
			out = append(out, lines[prev:c.outPos[0]]...)
			if got != "" {
				out = append(out, strings.Split(got, "\n")...)
			}
			prev = c.outPos[1]
			continue
		}
		if want := strings.Join(c.want, "\n"); got != want {
			t.Errorf("%s:%d: %s %v\ngot:\n%s\nwant:\n%s", path, c.line, c.cmd, c.args, got, want)
		}
	}
	if *rewrite {
		out = append(out, lines[prev:]...)
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// base is time zero of the scripts; t=5m is five minutes after it.
var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc := &script{t: t}
			runScript(t, f, sc.run)
		})
	}
}

type script struct {
	t    *testing.T
	plan *Plan
	line int
}

func (sc *script) fatalf(format string, a ...any) {
	sc.t.Helper()
	sc.t.Fatalf("line %d: "+format, append([]any{sc.line}, a...)...)
}

func (sc *script) num(c scriptCase, key string) int64 {
	v, ok := c.args[key]
	if !ok {
		sc.fatalf("%s needs %s=", c.cmd, key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		sc.fatalf("%s=%q: %v", key, v, err)
	}
	return n
}

func (sc *script) at(c scriptCase) time.Time {
	d, err := time.ParseDuration(c.args["t"])
	if c.args["t"] == "" {
		d, err = 0, nil
	}
	if err != nil {
		sc.fatalf("t=%q: %v", c.args["t"], err)
	}
	return base.Add(d)
}

func (sc *script) run(c scriptCase) string {
	sc.line = c.line
	if c.cmd != "plan" && sc.plan == nil {
		sc.fatalf("%s before plan", c.cmd)
	}
	var changes []Change
	switch c.cmd {
	case "plan":
		var o Options
		o.Window, _ = time.ParseDuration(c.args["window"])
		o.TTL, _ = time.ParseDuration(c.args["ttl"])
		p, err := New(c.args["policy"], o)
		if err != nil {
			return err.Error()
		}
		sc.plan = p
		return ""
	case "node":
		changes = sc.plan.State().SetNode(c.args["id"], sc.num(c, "cap"))
	case "access":
		r := Request{Block: uint64(sc.num(c, "block")), Node: c.args["node"], App: c.args["app"]}
		r.Size, _ = strconv.ParseInt(c.args["size"], 10, 64)
		r.Affinity, _ = strconv.ParseFloat(c.args["ca"], 64)
		changes = sc.plan.Access(r, sc.at(c))
	case "tick":
		changes = sc.plan.Tick(sc.at(c))
	case "pins":
		sc.plan.State().SetPins(sc.pins(c))
		return ""
	case "forget":
		changes = sc.plan.State().Forget(uint64(sc.num(c, "block")))
	case "drop":
		return fmt.Sprint(sc.plan.State().Drop(c.args["node"], uint64(sc.num(c, "block"))))
	case "remove":
		sc.plan.State().RemoveNode(c.args["node"])
		return ""
	case "adopt":
		return fmt.Sprint(sc.plan.Adopt(c.args["node"], uint64(sc.num(c, "block")), sc.num(c, "size")))
	case "bg":
		return fmt.Sprintf("%.3f", sc.plan.State().Goodness(uint64(sc.num(c, "block")), sc.at(c)))
	case "state":
		return sc.dump()
	default:
		sc.fatalf("unknown command %q", c.cmd)
	}
	checkState(sc.t, sc.plan)
	return formatChanges(changes)
}

// pins reads "block=5 size=100 rep=2 nodes=dn1,dn2" lines.
func (sc *script) pins(c scriptCase) []Pin {
	var out []Pin
	for _, l := range c.input {
		p := Pin{}
		for _, kv := range strings.Fields(l) {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "block":
				p.Block, _ = strconv.ParseUint(v, 10, 64)
			case "size":
				p.Size, _ = strconv.ParseInt(v, 10, 64)
			case "rep":
				p.Replication, _ = strconv.Atoi(v)
			case "nodes":
				p.Nodes = strings.Split(v, ",")
			}
		}
		out = append(out, p)
	}
	return out
}

func formatChanges(cs []Change) string {
	if len(cs) == 0 {
		return "(nothing)"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

// dump prints every node: "dn1 200/300: 1 2".
func (sc *script) dump() string {
	st := sc.plan.State()
	var b strings.Builder
	for _, n := range st.Nodes() {
		fmt.Fprintf(&b, "%s %d/%d:", n, st.Used(n), st.Capacity(n))
		for _, id := range st.Resident(n) {
			fmt.Fprintf(&b, " %d", id)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkState verifies the invariants every policy keeps.
func checkState(t *testing.T, p *Plan) {
	t.Helper()
	st := p.State()
	for _, n := range st.Nodes() {
		var sum int64
		for _, id := range st.Resident(n) {
			sum += st.Size(id)
			if !contains(st.On(id), n) {
				t.Fatalf("block %d resident on %s but its node set is %v", id, n, st.On(id))
			}
		}
		if sum != st.Used(n) || sum > st.Capacity(n) {
			t.Fatalf("%s: used %d, resident bytes %d, capacity %d", n, st.Used(n), sum, st.Capacity(n))
		}
	}
	if p.Name() != "pinned" {
		for id, b := range st.blocks {
			if len(b.on) > 1 {
				t.Fatalf("%s: block %d cached on %v; access-driven policies cache a block once", p.Name(), id, st.On(id))
			}
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
