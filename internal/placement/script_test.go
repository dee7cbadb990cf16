package placement

import (
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/scripttest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var nodes []Node
			scripttest.Run(t, f, *rewrite, func(t *testing.T, c scripttest.Case) string {
				switch c.Cmd {
				case "nodes":
					nodes = parseNodes(t, c)
					return ""
				case "set":
					setNode(t, nodes, c)
					return ""
				case "choose":
					req, policy, seed := parseRequest(t, c)
					got := policy.ChooseTargets(cloneNodes(nodes), req, rand.New(rand.NewSource(seed)))
					checkInvariants(t, c, nodes, req, got)
					return ids(got)
				case "tally":
					return tally(t, c, nodes)
				case "stream":
					return stream(t, c, nodes)
				}
				t.Fatalf("line %d: unknown command %q", c.Line, c.Cmd)
				return ""
			})
		})
	}
}

// parseNodes reads "/rack-a: dn1 dn2" lines: live nodes with no load and
// a terabyte free.
func parseNodes(t *testing.T, c scripttest.Case) []Node {
	var nodes []Node
	for _, l := range c.Input {
		rack, names, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("line %d: want \"/rack: dn1 dn2\", got %q", c.Line, l)
		}
		for _, n := range strings.Fields(names) {
			nodes = append(nodes, Node{ID: n, Host: n, IP: "ip-" + n, Rack: rack, Live: true, Remaining: 1 << 40})
		}
	}
	return nodes
}

// setNode changes one node: "set dn1 load=10 remaining=0 dead".
func setNode(t *testing.T, nodes []Node, c scripttest.Case) {
	for i := range nodes {
		if _, ok := c.Args[nodes[i].ID]; !ok {
			continue
		}
		n := &nodes[i]
		if v, ok := c.Args["load"]; ok {
			n.Xceivers, _ = strconv.Atoi(v)
		}
		if v, ok := c.Args["remaining"]; ok {
			n.Remaining, _ = strconv.ParseInt(v, 10, 64)
		}
		if _, ok := c.Args["dead"]; ok {
			n.Live = false
		}
		if _, ok := c.Args["live"]; ok {
			n.Live = true
		}
		return
	}
	t.Fatalf("line %d: set names no known node", c.Line)
}

func parseRequest(t *testing.T, c scripttest.Case) (Request, Policy, int64) {
	name := c.Args["policy"]
	if name == "" {
		name = "rackaware"
	}
	mk, ok := Policies[name]
	if !ok {
		t.Fatalf("line %d: unknown policy %q", c.Line, name)
	}
	req := Request{Exclude: map[string]bool{}, Speeds: map[string]float64{}, WriterHost: c.Args["writer"],
		WriterIP: c.Args["writerip"], WriterRack: c.Args["writerrack"]}
	if v := c.Args["open"]; v != "" {
		// open=dn1>dn4>dn5;dn2>dn6>dn7: the writer's open pipelines, whose
		// nodes are busy.
		for _, p := range strings.Split(v, ";") {
			ids := strings.Split(p, ">")
			req.Open = append(req.Open, ids)
			for _, id := range ids {
				req.Exclude[id] = true
			}
		}
	}
	req.Replicas, _ = strconv.Atoi(c.Args["replicas"])
	req.Replication, _ = strconv.Atoi(c.Args["replication"])
	req.BlockSize, _ = strconv.ParseInt(c.Args["blocksize"], 10, 64)
	if v := c.Args["chosen"]; v != "" {
		req.Chosen = strings.Split(v, ",")
	}
	if v := c.Args["exclude"]; v != "" {
		for _, id := range strings.Split(v, ",") {
			req.Exclude[id] = true
		}
	}
	if v := c.Args["speeds"]; v != "" {
		for _, kv := range strings.Split(v, ",") {
			id, s, _ := strings.Cut(kv, ":")
			req.Speeds[id], _ = strconv.ParseFloat(s, 64)
		}
	}
	seed, _ := strconv.ParseInt(c.Args["seed"], 10, 64)
	return req, mk(), seed
}

func checkInvariants(t *testing.T, c scripttest.Case, nodes []Node, req Request, got []Node) {
	t.Helper()
	if len(got) > req.Replicas {
		t.Errorf("line %d: %d targets for %d replicas", c.Line, len(got), req.Replicas)
	}
	seen := map[string]bool{}
	for _, id := range req.Chosen {
		seen[id] = true
	}
	live := map[string]Node{}
	for _, n := range nodes {
		live[n.ID] = n
	}
	for _, n := range got {
		switch {
		case seen[n.ID]:
			t.Errorf("line %d: %s chosen twice", c.Line, n.ID)
		case req.Exclude[n.ID]:
			t.Errorf("line %d: excluded %s chosen", c.Line, n.ID)
		case !live[n.ID].Live:
			t.Errorf("line %d: dead %s chosen", c.Line, n.ID)
		case req.BlockSize > 0 && live[n.ID].Remaining < req.BlockSize:
			t.Errorf("line %d: full %s chosen", c.Line, n.ID)
		}
		seen[n.ID] = true
	}
}

// tally runs a choice with seeds 1..runs and counts the node at position
// pos (default 0), to show how a random choice spreads.
func tally(t *testing.T, c scripttest.Case, nodes []Node) string {
	runs, _ := strconv.Atoi(c.Args["runs"])
	pos, _ := strconv.Atoi(c.Args["pos"])
	counts := map[string]int{}
	for seed := 1; seed <= runs; seed++ {
		req, policy, _ := parseRequest(t, c)
		got := policy.ChooseTargets(cloneNodes(nodes), req, rand.New(rand.NewSource(int64(seed))))
		checkInvariants(t, c, nodes, req, got)
		if pos < len(got) {
			counts[got[pos].ID]++
		} else {
			counts["none"]++
		}
	}
	return formatCounts(counts)
}

func formatCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", k, counts[k])
	}
	return b.String()
}

// stream plays one client writing blocks=N blocks with the most pipelines
// it may keep open (n = live/replication): each new block's request
// excludes the nodes of the open pipelines, and when n are open the oldest
// drains first. It tallies the first node of every block, to show where
// blocks begin while pipelines overlap.
func stream(t *testing.T, c scripttest.Case, nodes []Node) string {
	blocks, _ := strconv.Atoi(c.Args["blocks"])
	req, policy, seed := parseRequest(t, c)
	rng := rand.New(rand.NewSource(seed))
	live := 0
	for _, n := range nodes {
		if n.Live {
			live++
		}
	}
	maxOpen := max(live/req.Replication, 1)
	var open [][]Node
	counts, hops := map[string]int{}, map[string]int{}
	for range blocks {
		if len(open) == maxOpen {
			open = open[1:]
		}
		r := req
		r.Exclude, r.Open = map[string]bool{}, nil
		for _, p := range open {
			var ids []string
			for _, n := range p {
				r.Exclude[n.ID] = true
				ids = append(ids, n.ID)
			}
			r.Open = append(r.Open, ids)
		}
		got := policy.ChooseTargets(cloneNodes(nodes), r, rng)
		checkInvariants(t, c, nodes, r, got)
		if len(got) == 0 {
			counts["none"]++
			continue
		}
		counts[got[0].ID]++
		hops[crossSource(req.WriterRack, got)]++
		open = append(open, got)
	}
	out := formatCounts(counts)
	if _, ok := c.Args["hops"]; ok {
		out += "\ncross-rack hops from: " + formatCounts(hops)
	}
	return out
}

func ids(ns []Node) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.ID
	}
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, " ")
}

func cloneNodes(ns []Node) []Node { return append([]Node(nil), ns...) }

// crossSource names the host a pipeline's first cross-rack hop leaves
// from: "writer", a datanode, or "none".
func crossSource(writerRack string, p []Node) string {
	prev, src := writerRack, "writer"
	for _, n := range p {
		if n.Rack != prev {
			return src
		}
		prev, src = n.Rack, n.ID
	}
	return "none"
}
