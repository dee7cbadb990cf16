package pipeline

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
)

type speedMap map[string]float64

func (m speedMap) Speed(id string) (float64, bool) { v, ok := m[id]; return v, ok }

func dns(ids ...string) []*dfspb.DatanodeInfo {
	out := make([]*dfspb.DatanodeInfo, len(ids))
	for i, id := range ids {
		out[i] = &dfspb.DatanodeInfo{Id: id}
	}
	return out
}

func idsOf(ds []*dfspb.DatanodeInfo) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.GetId()
	}
	return strings.Join(s, " ")
}

func TestLocalOrderSortsBySpeed(t *testing.T) {
	// threshold 1.1: r >= threshold never holds, so no swap.
	rnd := rand.New(rand.NewPCG(1, 1))
	got := LocalOrder(dns("a", "b", "c"), speedMap{"a": 10, "b": 30, "c": 20}, 1.1, rnd)
	if idsOf(got) != "b c a" {
		t.Fatalf("order = %q, want fastest first %q", idsOf(got), "b c a")
	}
}

func TestLocalOrderUnmeasuredFirstInNamenodeOrder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	got := LocalOrder(dns("x", "a", "y", "b"), speedMap{"a": 5, "b": 9}, 1.1, rnd)
	if idsOf(got) != "x y b a" {
		t.Fatalf("order = %q, want %q", idsOf(got), "x y b a")
	}
}

func TestLocalOrderSwapsWithProbabilityOneMinusThreshold(t *testing.T) {
	// threshold 0: r >= 0 always holds, so the first is always swapped
	// with one of the others.
	rnd := rand.New(rand.NewPCG(7, 7))
	seen := map[string]bool{}
	for range 200 {
		got := LocalOrder(dns("a", "b", "c"), speedMap{"a": 3, "b": 2, "c": 1}, 0, rnd)
		if got[0].GetId() == "a" {
			t.Fatalf("threshold 0 must always swap the first target away, got %q", idsOf(got))
		}
		seen[got[0].GetId()] = true
	}
	if !seen["b"] || !seen["c"] {
		t.Fatalf("swap index should range over 1..repli-1, saw first targets %v", seen)
	}
	// Threshold 0.8 swaps about 20% of the time.
	swaps := 0
	const n = 5000
	for range n {
		if LocalOrder(dns("a", "b", "c"), speedMap{"a": 3, "b": 2, "c": 1}, 0.8, rnd)[0].GetId() != "a" {
			swaps++
		}
	}
	if swaps < n/10 || swaps > n*3/10 {
		t.Fatalf("threshold 0.8 swapped %d of %d times, want about 20%%", swaps, n)
	}
}

// The swap of "multipipeline" brings forward only a target whose record is
// older than 30 s; "multipipeline-paper" swaps as printed.
func TestMultiRemeasuresOnlyStaleRecords(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	book := NewSpeedBook()
	book.Record("a", 30<<20, time.Second, t0)
	book.Record("b", 20<<20, time.Second, t0.Add(-time.Minute)) // stale
	book.Record("c", 10<<20, time.Second, t0.Add(-time.Second))
	firsts := func(mode string) map[string]int {
		s, err := New(mode, Options{LocalThreshold: 0.5, Rand: rand.New(rand.NewPCG(5, 6))})
		if err != nil {
			t.Fatal(err)
		}
		s.(*Multi).now = func() time.Time { return t0 }
		seen := map[string]int{}
		for range 1000 {
			seen[s.Order(dns("c", "a", "b"), book)[0].GetId()]++
		}
		return seen
	}
	got := firsts("multipipeline")
	if got["c"] != 0 || got["b"] < 400 || got["b"] > 600 {
		t.Errorf("multipipeline first targets %v: want a or the stale b (about half each), never the fresh c", got)
	}
	got = firsts("multipipeline-paper")
	if got["c"] < 150 || got["b"] < 150 {
		t.Errorf("multipipeline-paper first targets %v: the swap must reach b and c alike", got)
	}
	// Nothing stale: no swap at all.
	book.Record("b", 20<<20, time.Second, t0)
	if got := firsts("multipipeline"); got["a"] != 1000 {
		t.Errorf("with every record fresh the fastest must always stay first: %v", got)
	}
}

func TestLocalOrderDeterministicWithSeed(t *testing.T) {
	a := LocalOrder(dns("a", "b", "c"), nil, 0.5, rand.New(rand.NewPCG(3, 4)))
	b := LocalOrder(dns("a", "b", "c"), nil, 0.5, rand.New(rand.NewPCG(3, 4)))
	if idsOf(a) != idsOf(b) {
		t.Fatalf("same seed gave %q and %q", idsOf(a), idsOf(b))
	}
}

func TestLocalOrderSingleTargetAndInputUntouched(t *testing.T) {
	in := dns("a", "b")
	_ = LocalOrder(in, speedMap{"b": 9}, 1.1, rand.New(rand.NewPCG(1, 1)))
	if idsOf(in) != "a b" {
		t.Fatalf("input reordered in place: %q", idsOf(in))
	}
	if got := LocalOrder(dns("a"), nil, 0, rand.New(rand.NewPCG(1, 1))); idsOf(got) != "a" {
		t.Fatalf("single target: %q", idsOf(got))
	}
}

func TestMaxOpen(t *testing.T) {
	cases := []struct{ live, repl, limit, want int }{
		{3, 3, 4, 1}, {6, 3, 4, 2}, {9, 3, 4, 3}, {30, 3, 4, 4}, {2, 3, 4, 1}, {0, 3, 4, 1}, {3, 1, 4, 3}, {4, 0, 0, 4},
	}
	for _, c := range cases {
		if got := maxOpen(c.live, c.repl, c.limit); got != c.want {
			t.Errorf("maxOpen(live=%d, repl=%d, limit=%d) = %d, want %d", c.live, c.repl, c.limit, got, c.want)
		}
	}
	if got := (&Classic{}).MaxOpen(30, 1); got != 1 {
		t.Errorf("classic MaxOpen = %d, want 1", got)
	}
}

func TestStrategiesByName(t *testing.T) {
	for name, want := range map[string]struct {
		mode    dfspb.WriteMode
		handoff Handoff
		window  int
	}{
		"classic":                  {dfspb.WriteMode_CLASSIC, AllAcked, 80},
		"multipipeline":            {dfspb.WriteMode_MULTI_PIPELINE, FirstNodeFinished, 1025},
		"multipipeline-paper":      {dfspb.WriteMode_MULTI_PIPELINE, FirstNodeFinished, 1025},
		"multipipeline-concurrent": {dfspb.WriteMode_MULTI_PIPELINE, Queued, 1025},
	} {
		s, err := New(name, Options{Window: 80})
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != name || s.Mode() != want.mode || s.Handoff() != want.handoff || s.Window(1024) != want.window {
			t.Errorf("%s: got name %s mode %v handoff %v window %d", name, s.Name(), s.Mode(), s.Handoff(), s.Window(1024))
		}
	}
	// With one pipeline possible the concurrent mode writes like classic
	// too (Effective), so it is never slower than classic.
	if one := Effective(must(New("multipipeline-concurrent", Options{})), 1, 80); one.Handoff() != AllAcked || one.Mode() != dfspb.WriteMode_CLASSIC {
		t.Errorf("concurrent with one slot: handoff %v mode %v", one.Handoff(), one.Mode())
	}
	if _, err := New("fast", Options{}); err == nil || !strings.Contains(err.Error(), "unknown write mode") {
		t.Fatalf("unknown mode error = %v", err)
	}
}

func TestReplacePolicy(t *testing.T) {
	cases := []struct {
		p               ReplacePolicy
		repl, survivors int
		want            bool
	}{
		{ReplaceDefault, 3, 2, false}, // HDFS DEFAULT keeps going on 2 of 3
		{ReplaceDefault, 3, 1, true},
		{ReplaceDefault, 2, 1, false}, // r < 3 never
		{ReplaceDefault, 5, 2, true},
		{ReplaceDefault, 5, 3, false},
		{ReplaceAlways, 3, 2, true},
		{ReplaceAlways, 2, 1, true},
		{ReplaceAlways, 3, 3, false},
		{ReplaceAlways, 3, 0, false},
		{ReplaceNever, 3, 1, false},
	}
	for _, c := range cases {
		if got := c.p.NeedReplacement(c.repl, c.survivors); got != c.want {
			t.Errorf("%s.NeedReplacement(r=%d, n=%d) = %v, want %v", c.p, c.repl, c.survivors, got, c.want)
		}
	}
	if _, err := ParseReplacePolicy("sometimes"); err == nil {
		t.Fatal("ParseReplacePolicy accepted an unknown policy")
	}
}

func TestSpeedBook(t *testing.T) {
	b := NewSpeedBook()
	if _, ok := b.Speed("a"); ok {
		t.Fatal("unmeasured node has a speed")
	}
	b.Record("a", 100, 1e9, timeZero)
	b.Record("a", 300, 1e9, timeZero)
	if v, _ := b.Speed("a"); v != 200 {
		t.Fatalf("EWMA speed = %v, want 200", v)
	}
	s := b.Take()
	if len(s) != 2 || s[0].GetBytes() != 100 || s[1].GetNanos() != 1e9 {
		t.Fatalf("samples = %v", s)
	}
	if len(b.Take()) != 0 {
		t.Fatal("Take did not clear")
	}
	b.Return(s)
	if len(b.Take()) != 2 {
		t.Fatal("Return lost samples")
	}
	for range maxPending + 10 {
		b.Record("a", 1, 1, timeZero)
	}
	if n := len(b.Take()); n != maxPending {
		t.Fatalf("pending samples = %d, want bounded at %d", n, maxPending)
	}
}

var timeZero = time.Unix(0, 0)

func TestEffectiveStrategy(t *testing.T) {
	m := NewMulti(Options{})
	if got := Effective(m, 2, 80); got != Strategy(m) {
		t.Fatalf("two slots: %T, want the Multi itself", got)
	}
	one := Effective(m, 1, 80)
	if one.Mode() != dfspb.WriteMode_CLASSIC || one.Handoff() != AllAcked || one.Window(1024) != 80 || one.Name() != "multipipeline" {
		t.Fatalf("one slot: mode %v handoff %v window %d name %s", one.Mode(), one.Handoff(), one.Window(1024), one.Name())
	}
	c := &Classic{}
	if Effective(c, 1, 80) != Strategy(c) {
		t.Fatal("classic must stay classic")
	}
}

func racked(spec ...string) []*dfspb.DatanodeInfo {
	out := make([]*dfspb.DatanodeInfo, len(spec))
	for i, s := range spec {
		id, rack, _ := strings.Cut(s, "@")
		out[i] = &dfspb.DatanodeInfo{Id: id, Rack: rack}
	}
	return out
}

// "multipipeline" keeps the namenode's rack-aware order: the swap never
// brings a target across the client's cross-rack link forward, and an
// unmeasured later replica never jumps ahead; a rack-mate due for
// measuring may be swapped in, and a clearly faster measured target wins.
func TestMultiKeepsTheNamenodesRackOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	book := NewSpeedBook()
	book.Record("a1", 40<<20, time.Second, t0)
	m := NewMulti(Options{LocalThreshold: 0.01, Rand: rand.New(rand.NewPCG(1, 2))})
	m.now = func() time.Time { return t0 }
	for range 200 {
		if got := idsOf(m.Order(racked("a1@/a", "b1@/b", "b2@/b"), book)); got != "a1 b1 b2" {
			t.Fatalf("order %q: want the namenode's a1 b1 b2", got)
		}
	}
	seen := map[string]int{}
	for range 200 {
		seen[m.Order(racked("a1@/a", "a2@/a", "b1@/b"), book)[0].GetId()]++
	}
	if seen["a2"] < 150 || seen["b1"] != 0 {
		t.Errorf("first targets %v: the unmeasured rack-mate a2 is due for a swap, b1 never", seen)
	}
	book.Record("b1", 5<<20, time.Second, t0)
	book.Record("a2", 80<<20, time.Second, t0)
	m = NewMulti(Options{LocalThreshold: 1, Rand: rand.New(rand.NewPCG(1, 2))})
	if got := idsOf(m.Order(racked("a1@/a", "b1@/b", "a2@/a"), book)); got != "a2 a1 b1" {
		t.Errorf("order %q: a2 measured twice as fast goes first, the rest keep their order", got)
	}
}

// Seed takes the host's records for nodes this process never measured and
// leaves its own alone; seeded records are not reported back.
func TestSpeedBookSeed(t *testing.T) {
	b := NewSpeedBook()
	b.Record("a", 100, time.Second, timeZero)
	b.Seed("a", 999, timeZero)
	b.Seed("b", 50, timeZero.Add(time.Minute))
	b.Seed("c", 0, timeZero)
	if v, _ := b.Speed("a"); v != 100 {
		t.Errorf("own record overwritten: %v", v)
	}
	if v, ok := b.Speed("b"); !ok || v != 50 {
		t.Errorf("seeded b = %v %v", v, ok)
	}
	if at, _ := b.Measured("b"); !at.Equal(timeZero.Add(time.Minute)) {
		t.Errorf("seeded b measured at %v", at)
	}
	if _, ok := b.Speed("c"); ok {
		t.Error("a zero record was seeded")
	}
	if n := len(b.Take()); n != 1 {
		t.Errorf("%d pending samples; seeds must not be reported", n)
	}
}

func must(s Strategy, err error) Strategy {
	if err != nil {
		panic(err)
	}
	return s
}
