package apps

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// cents parses "12.34" for the test's own computation.
func testCents(t *testing.T, s string) int64 {
	t.Helper()
	w, f, _ := strings.Cut(s, ".")
	a, err1 := strconv.ParseInt(w, 10, 64)
	b, err2 := strconv.ParseInt(f, 10, 64)
	if err1 != nil || err2 != nil || len(f) != 2 {
		t.Fatalf("bad amount %q", s)
	}
	return a*100 + b
}

func fmtCents(c int64) string { return string(appendCents(nil, c)) }

func TestHiveGenAggregationJoin(t *testing.T) {
	e := newEnv(t)
	e.run("hivegen", "output", "/hive", "pages", "300", "visits", "20000", "maps", "3")
	rankings, visits := lines(e.output("/hive/rankings")), lines(e.output("/hive/uservisits"))
	if len(rankings) != 300 || len(visits) != 20000 {
		t.Fatalf("%d rankings, %d visits", len(rankings), len(visits))
	}
	e.run("hivegen", "output", "/hive1", "pages", "300", "visits", "20000", "maps", "1")
	if !bytes.Equal(e.output("/hive/uservisits"), e.output("/hive1/uservisits")) {
		t.Fatal("uservisits depend on the number of maps")
	}

	// Aggregation, computed directly.
	for _, prefix := range []int{7, 0} {
		want := map[string]int64{}
		for _, v := range visits {
			f := strings.Split(v, "|")
			if len(f) != 9 {
				t.Fatalf("visit %q has %d fields", v, len(f))
			}
			k := f[0]
			if prefix > 0 && len(k) > prefix {
				k = k[:prefix]
			}
			want[k] += testCents(t, f[3])
		}
		out := "/agg" + strconv.Itoa(prefix)
		e.run("aggregation", "input", "/hive/uservisits", "output", out, "prefix", strconv.Itoa(prefix), "reduces", "2")
		got := kvLines(t, e.output(out))
		if len(got) != len(want) {
			t.Fatalf("prefix %d: %d groups, want %d", prefix, len(got), len(want))
		}
		for k, c := range want {
			if got[k] != fmtCents(c) {
				t.Fatalf("prefix %d: group %q = %q, want %s", prefix, k, got[k], fmtCents(c))
			}
		}
	}

	// Join, computed directly: rank per URL, then per sourceIP over the
	// visits in the range.
	rank := map[string]int64{}
	for _, r := range rankings {
		f := strings.Split(r, "|")
		n, _ := strconv.ParseInt(f[1], 10, 64)
		rank[f[0]] = n
	}
	type agg struct{ rank, cents, n int64 }
	for _, rng := range [][2]string{{"2000-01-15", "2000-01-22"}, {"1999-01-01", "2000-01-01"}} {
		per := map[string]*agg{}
		for _, v := range visits {
			f := strings.Split(v, "|")
			if f[2] < rng[0] || f[2] > rng[1] {
				continue
			}
			r, ok := rank[f[1]]
			if !ok {
				t.Fatalf("visit to %q has no ranking", f[1])
			}
			a := per[f[0]]
			if a == nil {
				a = &agg{}
				per[f[0]] = a
			}
			a.rank += r
			a.cents += testCents(t, f[3])
			a.n++
		}
		var want []string
		for ip, a := range per {
			want = append(want, ip+"\t"+strconv.FormatFloat(float64(a.rank)/float64(a.n), 'f', -1, 64)+"\t"+fmtCents(a.cents))
		}
		sort.Slice(want, func(i, j int) bool {
			ci := testCents(t, strings.Split(want[i], "\t")[2])
			cj := testCents(t, strings.Split(want[j], "\t")[2])
			if ci != cj {
				return ci > cj
			}
			return want[i] < want[j]
		})
		out := "/join-" + rng[0]
		e.run("join", "input", "/hive", "output", out, "from", rng[0], "to", rng[1], "reduces", "2")
		got := lines(e.output(out))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("join %v: %d rows, want %d; first %q, want %q", rng, len(got), len(want), first(got), first(want))
		}
		if len(want) < 50 {
			t.Fatalf("test too weak: %d joined groups", len(want))
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func TestJoinNeedsTables(t *testing.T) {
	_, err := Join{}.Build(map[string]string{"output": "/o"})
	if err == nil || !strings.Contains(err.Error(), "--rankings") {
		t.Fatalf("err = %v", err)
	}
	_, err = Join{}.Build(map[string]string{"input": "/h", "output": "/o", "from": "2000-1-1"})
	if err == nil || !strings.Contains(err.Error(), "--from") {
		t.Fatalf("err = %v", err)
	}
}
