package ab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

// Reference values computed by hand or published with the tools that
// compute them, not by this package.
func TestMannWhitneyReferences(t *testing.T) {
	cases := []struct {
		name  string
		a, b  []float64
		ua    float64
		p     float64
		tol   float64
		exact bool
	}{
		// Complete separation, 3 vs 3: one arrangement of C(6,3)=20 in
		// each tail, p = 2/20.
		{"separated3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, 1e-12, true},
		// 6 vs 6 separated: p = 2/C(12,6) = 2/924.
		{"separated6", []float64{10, 11, 12, 13, 14, 15}, []float64{1, 2, 3, 4, 5, 6}, 36, 2.0 / 924, 1e-12, true},
		// scipy.stats.mannwhitneyu documentation (males vs females):
		// U = 17, exact p = 0.1111 (7 of 126 arrangements in a tail).
		{"scipy-doc", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 14.0 / 126, 1e-12, true},
		// Hollander & Wolfe's example in R's wilcox.test help: W = 35,
		// one-sided exact p = 0.1272, so two-sided 0.2544.
		{"R-help", []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544, 1e-4, true},
		// Ties, by hand: pooled 1 2 2 2 3 4, ranks of a = 1+3+3 = 7,
		// U = 1, var = 9/12·(7 - 24/30) = 4.65, z = (3.5-0.5)/2.1564 =
		// 1.3912, p = 2·(1-Φ(1.3912)) = 0.1642.
		{"ties", []float64{1, 2, 2}, []float64{2, 3, 4}, 1, 0.1642, 5e-4, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := MannWhitneyU(c.a, c.b)
			near(t, "U_A", r.UA, c.ua, 1e-9)
			near(t, "p", r.P, c.p, c.tol)
			if r.Exact != c.exact {
				t.Errorf("exact = %v, want %v", r.Exact, c.exact)
			}
		})
	}
}

// The scipy documentation's asymptotic p for the same data, with
// continuity correction: 0.11134688653314041.
func TestNormalApproximationReference(t *testing.T) {
	near(t, "p", normalP(17, 5, 4, 0), 0.11134688653314041, 1e-9)
}

// bruteP is the exact two-sided p by enumerating every way of choosing
// which n of the pooled values are A's: independent of the recursion.
func bruteP(a, b []float64) float64 {
	pooled := append(slices.Clone(a), b...)
	n, N := len(a), len(pooled)
	uOf := func(inA []bool) float64 {
		var u float64
		for i := range N {
			for j := range N {
				if inA[i] && !inA[j] && pooled[i] > pooled[j] {
					u++
				}
			}
		}
		return u
	}
	obs := MannWhitneyU(a, b).UA
	mu := float64(n*(N-n)) / 2
	dev := math.Abs(obs - mu)
	var total, extreme, lower, upper float64
	inA := make([]bool, N)
	var rec func(i, left int)
	rec = func(i, left int) {
		if left == 0 {
			u := uOf(inA)
			total++
			if u <= mu-dev+1e-9 {
				lower++
			}
			if u >= mu+dev-1e-9 {
				upper++
			}
			_ = extreme
			return
		}
		if N-i < left {
			return
		}
		inA[i] = true
		rec(i+1, left-1)
		inA[i] = false
		rec(i+1, left)
	}
	rec(0, n)
	// U's null distribution is symmetric, so doubling one tail is the
	// same as adding both; use the smaller to match the convention.
	return math.Min(1, 2*math.Min(lower, upper)/total)
}

func TestExactPMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 30 {
		n, m := 2+rng.IntN(6), 2+rng.IntN(6)
		a, b := make([]float64, n), make([]float64, m)
		shift := rng.Float64() * 2
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64() + shift
		}
		got := MannWhitneyU(a, b)
		if !got.Exact {
			t.Fatalf("trial %d: not exact", trial)
		}
		near(t, "p", got.P, bruteP(a, b), 1e-12)
	}
}

// Critical values of the two-sided 5% test from published tables: for
// n = m = 6 reject when min(U) <= 5, so the interval uses the 6th
// smallest and 6th largest differences; n = m = 8: U <= 13; n = 10,
// m = 10: U <= 23; n = 5, m = 4: U <= 1.
func TestCIRankMatchesTables(t *testing.T) {
	for _, c := range []struct{ n, m, k int }{{6, 6, 6}, {8, 8, 14}, {10, 10, 24}, {5, 4, 2}, {3, 3, 0}} {
		if got := ciRank(c.n, c.m, 0.05, true); got != c.k {
			t.Errorf("ciRank(%d,%d) = %d, want %d", c.n, c.m, got, c.k)
		}
	}
}

func TestCompareTimes(t *testing.T) {
	// A takes about 10 s, B about 8 s: B is faster by 1.25x.
	a := Sample{"off", []float64{10.1, 9.9, 10.0, 10.3, 9.8, 10.2}}
	b := Sample{"on", []float64{8.1, 7.9, 8.0, 8.2, 7.8, 8.05}}
	c, err := Compare("write", a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	near(t, "median A", c.MedianA, 10.05, 1e-9)
	near(t, "median B", c.MedianB, 8.025, 1e-9)
	near(t, "speedup", c.Speedup, 10.05/8.025, 1e-9)
	near(t, "p", c.U.P, 2.0/924, 1e-12)
	if c.Verdict != Faster {
		t.Errorf("verdict %q, want faster", c.Verdict)
	}
	if !(c.CILow > 1 && c.CIHigh > c.CILow && c.CILow <= c.HLSpeedup && c.HLSpeedup <= c.CIHigh) {
		t.Errorf("interval [%v, %v] around %v does not exclude 1", c.CILow, c.CIHigh, c.HLSpeedup)
	}
	// The 6th smallest of the 36 ratios a_i/b_j, by hand: the smallest
	// a's over the largest b's.
	ratios := []float64{}
	for _, x := range a.Values {
		for _, y := range b.Values {
			ratios = append(ratios, x/y)
		}
	}
	slices.Sort(ratios)
	near(t, "CI low", c.CILow, ratios[5], 1e-12)
	near(t, "CI high", c.CIHigh, ratios[30], 1e-12)

	// Swapped: B is the slow side.
	c, _ = Compare("write", b, a, DefaultOptions())
	if c.Verdict != Slower || c.Speedup >= 1 {
		t.Errorf("swapped: verdict %q speedup %v, want slower < 1", c.Verdict, c.Speedup)
	}
}

func TestCompareRatesHigherIsBetter(t *testing.T) {
	opts := DefaultOptions()
	opts.HigherIsBetter = true
	a := Sample{"default", []float64{100, 101, 99, 102, 98, 100.5}}
	b := Sample{"tuned", []float64{120, 119, 121, 122, 118, 120.5}}
	c, err := Compare("MiB/s", a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != Faster || c.Speedup < 1.15 {
		t.Errorf("verdict %q speedup %v, want faster ~1.2", c.Verdict, c.Speedup)
	}
}

func TestCompareNoDifference(t *testing.T) {
	a := Sample{"A", []float64{10, 12, 11, 13, 9, 10.5}}
	b := Sample{"B", []float64{11, 10.2, 12.5, 9.5, 10.8, 11.7}}
	c, err := Compare("pi", a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != NoDiff || !(c.CILow < 1 && c.CIHigh > 1) {
		t.Errorf("verdict %q interval [%v, %v], want no difference straddling 1", c.Verdict, c.CILow, c.CIHigh)
	}
}

// With exact p-values the interval excludes 1 exactly when p < alpha.
func TestIntervalAgreesWithTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		a, b := make([]float64, 6), make([]float64, 7)
		shift := rng.Float64() * 0.6
		for i := range a {
			a[i] = math.Exp(rng.NormFloat64() * 0.2)
		}
		for i := range b {
			b[i] = math.Exp(rng.NormFloat64()*0.2 + shift)
		}
		c, err := Compare("x", Sample{"a", a}, Sample{"b", b}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		excludes := c.CILow > 1 || c.CIHigh < 1
		if excludes != (c.U.P < 0.05) {
			t.Fatalf("trial %d: p %v but interval [%v, %v]", trial, c.U.P, c.CILow, c.CIHigh)
		}
	}
}

func TestCompareRejectsFewRunsAndBadValues(t *testing.T) {
	few := Sample{"A", []float64{1, 2, 3}}
	six := Sample{"B", []float64{1, 2, 3, 4, 5, 6}}
	if _, err := Compare("x", few, six, DefaultOptions()); !errors.Is(err, ErrFewRuns) {
		t.Errorf("3 runs: err %v, want ErrFewRuns", err)
	}
	opts := DefaultOptions()
	opts.MinRuns = 3
	c, err := Compare("x", Sample{"A", []float64{1.5, 2.5, 3.5}}, Sample{"B", []float64{4.5, 5.5, 6.5}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// 3 vs 3 cannot give a 95% interval: the ratio's is [0, +Inf), and
	// JSON, which has no infinity, says null.
	if c.CILow != 0 || !math.IsInf(c.CIHigh, 1) {
		t.Errorf("CI [%v, %v], want [0, +Inf)", c.CILow, c.CIHigh)
	}
	js, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(js), `"ci_high":null`) {
		t.Errorf("json %s, err %v", js, err)
	}
	zero := Sample{"A", []float64{0, 1, 2, 3, 4, 5}}
	if _, err := Compare("x", zero, six, DefaultOptions()); err == nil {
		t.Error("a zero time was accepted")
	}
}

func TestSchedule(t *testing.T) {
	var got []string
	for _, s := range Schedule(4) {
		got = append(got, s.String())
	}
	if s := strings.Join(got, ""); s != "ABBAABBA" {
		t.Errorf("schedule %s, want ABBAABBA", s)
	}
}

// Run switches configuration only when the side changes and records each
// benchmark per side.
func TestRunInterleavesAndSwitches(t *testing.T) {
	var log []string
	sw := func(_ context.Context, s Side) error { log = append(log, "switch "+s.String()); return nil }
	trial := func(_ context.Context, s Side, i int) ([]Measurement, error) {
		log = append(log, "run "+s.String())
		return []Measurement{{"w", float64(i + 1)}, {"r", float64(10 + i)}}, nil
	}
	r, err := Run(context.Background(), 3, sw, trial)
	if err != nil {
		t.Fatal(err)
	}
	want := "switch A,run A,switch B,run B,run B,switch A,run A,run A,switch B,run B"
	if got := strings.Join(log, ","); got != want {
		t.Errorf("log\n got %s\nwant %s", got, want)
	}
	if !slices.Equal(r.Names, []string{"w", "r"}) || !slices.Equal(r.A["w"], []float64{1, 4, 5}) || !slices.Equal(r.B["r"], []float64{11, 12, 15}) {
		t.Errorf("runs %+v", r)
	}
}

func TestRunStopsOnSwitchError(t *testing.T) {
	sw := func(_ context.Context, s Side) error {
		if s == SideB {
			return errors.New("no such service")
		}
		return nil
	}
	trials := 0
	trial := func(context.Context, Side, int) ([]Measurement, error) { trials++; return nil, nil }
	_, err := Run(context.Background(), 6, sw, trial)
	if err == nil || !strings.Contains(err.Error(), "switch to B") || trials != 1 {
		t.Errorf("err %v after %d trials", err, trials)
	}
}

func TestCompareFuncs(t *testing.T) {
	i := 0.0
	a := func(context.Context) (float64, error) { i++; return 20 + math.Mod(i, 3), nil }
	b := func(context.Context) (float64, error) { i++; return 10 + math.Mod(i, 3), nil }
	c, err := CompareFuncs(context.Background(), "cmd", 6, a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != Faster || len(c.A.Values) != 6 {
		t.Errorf("%+v", c)
	}
}

func TestWriteTable(t *testing.T) {
	c, _ := Compare("write", Sample{"A", []float64{2, 2.1, 2.2, 1.9, 2.05, 2.15}}, Sample{"B", []float64{1, 1.1, 1.2, 0.9, 1.05, 1.15}}, DefaultOptions())
	var sb strings.Builder
	if err := WriteTable(&sb, []Comparison{c}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "faster") || !strings.Contains(sb.String(), "speedup") {
		t.Errorf("table:\n%s", sb.String())
	}
}

func TestPlotWritesSVG(t *testing.T) {
	c, _ := Compare("write", Sample{"off", []float64{2, 2.1, 2.2, 1.9, 2.05, 2.15}}, Sample{"on", []float64{1, 1.1, 1.2, 0.9, 1.05, 1.15}}, DefaultOptions())
	path := t.TempDir() + "/ab.svg"
	if err := Plot(path, "test", []Comparison{c, c}); err != nil {
		t.Fatal(err)
	}
	if err := Plot(t.TempDir()+"/ab.txt", "test", []Comparison{c}); err == nil {
		t.Error("a .txt plot was accepted")
	}
}

func TestShellTimesAndReportsFailure(t *testing.T) {
	if _, err := Shell(context.Background(), "true", nil); err != nil {
		t.Fatal(err)
	}
	_, err := Shell(context.Background(), "echo broken pipe; exit 3", nil)
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("err %v, want the command's output", err)
	}
}

// A failing setup runs the other side's setup to restore the host.
func TestSetupSwitchRestoresOnFailure(t *testing.T) {
	dir := t.TempDir()
	sw := SetupSwitch("echo a >> "+dir+"/log", "echo b >> "+dir+"/log; exit 1", nil)
	if err := sw(context.Background(), SideA); err != nil {
		t.Fatal(err)
	}
	err := sw(context.Background(), SideB)
	if err == nil || !strings.Contains(err.Error(), "restored with the setup of A") {
		t.Fatalf("err %v", err)
	}
	out, _ := exec.Command("cat", dir+"/log").Output()
	if string(out) != "a\nb\na\n" {
		t.Errorf("setups run %q, want a b a", out)
	}
}

// Rounds run forward then backward; two sides give A B B A.
func TestRoundOrder(t *testing.T) {
	if got := fmt.Sprint(RoundOrder(3, 0), RoundOrder(3, 1), RoundOrder(3, 2)); got != "[0 1 2] [2 1 0] [0 1 2]" {
		t.Errorf("3 sides, rounds 0-2: %s", got)
	}
	if got := fmt.Sprint(Schedule(3)); got != "[A B B A A B]" {
		t.Errorf("Schedule(3) = %s", got)
	}
}

// The ratio interval is the t interval of the log ratios: for ratios
// e^-0.1, 1, e^0.1 the mean log is 0, sd 0.1, t(0.975, 2) = 4.303, so
// the 95% interval is e^(±4.303·0.1/√3).
func TestRatioInterval(t *testing.T) {
	gm, lo, hi := RatioInterval([]float64{math.Exp(-0.1), 1, math.Exp(0.1)}, 0.95)
	half := 4.302653 * 0.1 / math.Sqrt(3)
	if math.Abs(gm-1) > 1e-9 || math.Abs(lo-math.Exp(-half)) > 1e-5 || math.Abs(hi-math.Exp(half)) > 1e-5 {
		t.Errorf("gm %v [%v, %v], want 1 [%v, %v]", gm, lo, hi, math.Exp(-half), math.Exp(half))
	}
	if gm, lo, hi := RatioInterval([]float64{0.8}, 0.95); gm != 0.8 || lo != 0 || hi != 0 {
		t.Errorf("one ratio: %v [%v, %v], want 0.8 and no interval", gm, lo, hi)
	}
}
