package sched

import (
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/scripttest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// TestScripts replays testdata/*.txt (internal/scripttest's format, as the
// cache and placement packages use): each script declares a policy, nodes
// and jobs, then heartbeats each followed by the assignments it expects.
// Assigned tasks leave the pending lists and count as running, as the
// resource manager does.
//
//	policy name=delay node-skips=N rack-skips=N | policy name=fifo
//	policy name=cachelocal node-skips=N rack-skips=N cache-skips=N max-allocations=N
//	nodes                        one "ID HOST RACK" line per node
//	job id=J [cached=R] [running=N] [limit=N]
//	                             declares J (submission order = first
//	                             declaration) or adds to it; input lines:
//	                             "map INDEX HOST:RACK ... [cached=HOST,...]"
//	                             (a pending map, its replicas, the hosts
//	                             caching it) and "reduce INDEX ..." (ready
//	                             reduces); cached is R_j, the job's cached
//	                             input fraction
//	hb node=ID maps=N reduces=N  the assignments, Assignment.String() each
//	                             in order, or (nothing)
//	skips job=J                  the job's skip count (delay, cachelocal)
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc := &script{t: t, nodes: map[string]Node{}}
			scripttest.Run(t, f, *rewrite, func(_ *testing.T, c scripttest.Case) string { return sc.run(c) })
		})
	}
}

type script struct {
	t      *testing.T
	line   int
	policy Policy
	nodes  map[string]Node
	jobs   []Job
}

func (sc *script) fatalf(format string, a ...any) {
	sc.t.Helper()
	sc.t.Fatalf("line %d: "+format, append([]any{sc.line}, a...)...)
}

func (sc *script) atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		sc.fatalf("bad number %q", s)
	}
	return n
}

// arg is c's key=value argument as a number; def when it is absent.
func (sc *script) arg(c scripttest.Case, key string, def int) int {
	v, ok := c.Args[key]
	if !ok {
		return def
	}
	return sc.atoi(v)
}

func (sc *script) job(id string) *Job {
	for i := range sc.jobs {
		if sc.jobs[i].ID == id {
			return &sc.jobs[i]
		}
	}
	sc.fatalf("unknown job %s", id)
	return nil
}

func (sc *script) run(c scripttest.Case) string {
	sc.line = c.Line
	if c.Cmd != "policy" && sc.policy == nil {
		sc.fatalf("%s before policy", c.Cmd)
	}
	switch c.Cmd {
	case "policy":
		o := Options{NodeSkips: sc.arg(c, "node-skips", 0), RackSkips: sc.arg(c, "rack-skips", 0),
			CacheSkips: sc.arg(c, "cache-skips", 0), MaxAllocations: sc.arg(c, "max-allocations", 0)}
		p, err := New(c.Args["name"], o)
		if err != nil {
			return err.Error()
		}
		sc.policy = p
	case "nodes":
		for _, l := range c.Input {
			f := strings.Fields(l)
			if len(f) != 3 {
				sc.fatalf("node line %q: want ID HOST RACK", l)
			}
			sc.nodes[f[0]] = Node{ID: f[0], Host: f[1], Rack: f[2]}
		}
	case "job":
		sc.defineJob(c)
	case "hb":
		n, ok := sc.nodes[c.Args["node"]]
		if !ok {
			sc.fatalf("unknown node %q", c.Args["node"])
		}
		n.FreeMapSlots, n.FreeReduceSlots = sc.arg(c, "maps", 0), sc.arg(c, "reduces", 0)
		return sc.heartbeat(n)
	case "skips":
		d, ok := sc.policy.(interface{ Skips(string) int })
		if !ok {
			sc.fatalf("skips needs a policy that counts skips")
		}
		return strconv.Itoa(d.Skips(sc.job(c.Args["job"]).ID))
	default:
		sc.fatalf("unknown command %q", c.Cmd)
	}
	return ""
}

// defineJob declares a job or adds to one declared before.
func (sc *script) defineJob(c scripttest.Case) {
	id := c.Args["id"]
	if id == "" {
		sc.fatalf("job needs id=")
	}
	found := false
	for i := range sc.jobs {
		found = found || sc.jobs[i].ID == id
	}
	if !found {
		sc.jobs = append(sc.jobs, Job{ID: id, Seq: int64(len(sc.jobs))})
	}
	j := sc.job(id)
	if v, ok := c.Args["cached"]; ok {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil {
			sc.fatalf("bad fraction %q", v)
		}
		j.CachedFraction = r
	}
	j.RunningTasks = sc.arg(c, "running", j.RunningTasks)
	j.MapLimit = sc.arg(c, "limit", j.MapLimit)
	for _, l := range c.Input {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "map":
			mt := MapTask{Index: sc.atoi(f[1])}
			for _, hr := range f[2:] {
				if hs, ok := strings.CutPrefix(hr, "cached="); ok {
					mt.CachedHosts = strings.Split(hs, ",")
					continue
				}
				h, r, _ := strings.Cut(hr, ":")
				mt.Hosts, mt.Racks = append(mt.Hosts, h), append(mt.Racks, r)
			}
			j.PendingMaps = append(j.PendingMaps, mt)
		case len(f) >= 2 && f[0] == "reduce":
			for _, s := range f[1:] {
				j.PendingReduces = append(j.PendingReduces, sc.atoi(s))
			}
		default:
			sc.fatalf("job %s: line %q: want map INDEX ... or reduce INDEX ...", id, l)
		}
	}
}

// heartbeat asks the policy for n's assignments and applies them as the
// resource manager does: assigned tasks leave the pending lists and run.
func (sc *script) heartbeat(n Node) string {
	as := sc.policy.Assign(n, sc.jobs)
	if len(as) == 0 {
		return "(nothing)"
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
		j := sc.job(a.JobID)
		j.RunningTasks++
		if a.IsMap {
			j.PendingMaps = removeMap(j.PendingMaps, a.Index)
		} else {
			j.PendingReduces = removeInt(j.PendingReduces, a.Index)
		}
	}
	return strings.Join(out, " ")
}

func removeMap(ts []MapTask, idx int) []MapTask {
	for i, t := range ts {
		if t.Index == idx {
			return append(ts[:i:i], ts[i+1:]...)
		}
	}
	return ts
}

func removeInt(xs []int, x int) []int {
	for i, v := range xs {
		if v == x {
			return append(xs[:i:i], xs[i+1:]...)
		}
	}
	return xs
}

func TestUnknownPolicy(t *testing.T) {
	if _, err := New("nope", Options{}); err == nil || !strings.Contains(err.Error(), "cachelocal, delay, fifo") {
		t.Fatalf("New(nope) = %v, want an error listing the policies", err)
	}
}
