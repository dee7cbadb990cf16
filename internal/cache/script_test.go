package cache

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/scripttest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

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
			scripttest.Run(t, f, *rewrite, func(_ *testing.T, c scripttest.Case) string { return sc.run(c) })
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

func (sc *script) num(c scripttest.Case, key string) int64 {
	v, ok := c.Args[key]
	if !ok {
		sc.fatalf("%s needs %s=", c.Cmd, key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		sc.fatalf("%s=%q: %v", key, v, err)
	}
	return n
}

func (sc *script) at(c scripttest.Case) time.Time {
	d, err := time.ParseDuration(c.Args["t"])
	if c.Args["t"] == "" {
		d, err = 0, nil
	}
	if err != nil {
		sc.fatalf("t=%q: %v", c.Args["t"], err)
	}
	return base.Add(d)
}

func (sc *script) run(c scripttest.Case) string {
	sc.line = c.Line
	if c.Cmd != "plan" && sc.plan == nil {
		sc.fatalf("%s before plan", c.Cmd)
	}
	var changes []Change
	switch c.Cmd {
	case "plan":
		var o Options
		o.Window, _ = time.ParseDuration(c.Args["window"])
		o.TTL, _ = time.ParseDuration(c.Args["ttl"])
		p, err := New(c.Args["policy"], o)
		if err != nil {
			return err.Error()
		}
		sc.plan = p
		return ""
	case "node":
		changes = sc.plan.State().SetNode(c.Args["id"], sc.num(c, "cap"))
	case "access":
		r := Request{Block: uint64(sc.num(c, "block")), Node: c.Args["node"], App: c.Args["app"]}
		r.Size, _ = strconv.ParseInt(c.Args["size"], 10, 64)
		r.Affinity, _ = strconv.ParseFloat(c.Args["ca"], 64)
		changes = sc.plan.Access(r, sc.at(c))
	case "tick":
		changes = sc.plan.Tick(sc.at(c))
	case "pins":
		sc.plan.State().SetPins(sc.pins(c))
		return ""
	case "forget":
		changes = sc.plan.State().Forget(uint64(sc.num(c, "block")))
	case "drop":
		return fmt.Sprint(sc.plan.State().Drop(c.Args["node"], uint64(sc.num(c, "block"))))
	case "remove":
		sc.plan.State().RemoveNode(c.Args["node"])
		return ""
	case "adopt":
		return fmt.Sprint(sc.plan.Adopt(c.Args["node"], uint64(sc.num(c, "block")), sc.num(c, "size")))
	case "bg":
		return fmt.Sprintf("%.3f", sc.plan.State().Goodness(uint64(sc.num(c, "block")), sc.at(c)))
	case "state":
		return sc.dump()
	default:
		sc.fatalf("unknown command %q", c.Cmd)
	}
	checkState(sc.t, sc.plan)
	return formatChanges(changes)
}

// pins reads "block=5 size=100 rep=2 nodes=dn1,dn2" lines.
func (sc *script) pins(c scripttest.Case) []Pin {
	var out []Pin
	for _, l := range c.Input {
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
