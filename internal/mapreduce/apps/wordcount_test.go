package apps

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// genText makes lines of words w0..w(vocab-1) separated by every kind of
// whitespace WordCount splits on, with CRLF line ends now and then.
func genText(seed uint64, nlines, vocab int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	seps := []string{" ", "  ", "\t", "\f", " \r "}
	var b strings.Builder
	for range nlines {
		for j := range r.IntN(15) {
			if j > 0 || r.IntN(4) == 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			fmt.Fprintf(&b, "w%d", r.IntN(vocab))
		}
		if r.IntN(5) == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

func TestWordCountMatchesDirectCount(t *testing.T) {
	e := newEnv(t)
	text := genText(1, 20000, 3000)
	e.write("/in/a.txt", text)
	e.write("/in/b.txt", genText(2, 500, 50))
	res := e.run("wordcount", "input", "/in", "output", "/out", "reduces", "3")

	want := map[string]int{}
	words := 0
	for _, f := range [][]byte{text, genText(2, 500, 50)} {
		for _, w := range strings.FieldsFunc(string(f), func(r rune) bool { return strings.ContainsRune(" \t\n\r\f", r) }) {
			want[w]++
			words++
		}
	}
	// Hadoop's meaning: MAP_OUTPUT_RECORDS is what map() emitted, one
	// (word, 1) per word, before the in-mapper table and the combiner.
	tc := res.Counters["Map-Reduce Framework"]
	if tc["MAP_OUTPUT_RECORDS"] != int64(words) {
		t.Errorf("MAP_OUTPUT_RECORDS = %d, want %d (the number of words)", tc["MAP_OUTPUT_RECORDS"], words)
	}
	if tc["COMBINE_INPUT_RECORDS"] < int64(words) || tc["COMBINE_OUTPUT_RECORDS"] >= int64(words) {
		t.Errorf("combine records in %d out %d: want at least every word in and fewer out", tc["COMBINE_INPUT_RECORDS"], tc["COMBINE_OUTPUT_RECORDS"])
	}
	got := kvLines(t, e.output("/out"))
	if len(got) != len(want) {
		t.Fatalf("got %d distinct words, want %d", len(got), len(want))
	}
	for w, n := range want {
		if got[w] != strconv.Itoa(n) {
			t.Fatalf("count of %q = %q, want %d", w, got[w], n)
		}
	}
	if n := len(e.parts("/out")); n != 3 {
		t.Fatalf("%d output files, want 3", n)
	}
}

func TestWordCountFlushesBoundedTable(t *testing.T) {
	// More distinct words than the in-mapper table holds: counts must
	// still add up through the combiner and reducer.
	e := newEnv(t)
	var b strings.Builder
	for i := range wcFlushWords + 5000 {
		fmt.Fprintf(&b, "x%d x%d\n", i, i%7)
	}
	e.write("/in.txt", []byte(b.String()))
	e.run("wordcount", "input", "/in.txt", "output", "/out")
	got := kvLines(t, e.output("/out"))
	if got["x3"] != strconv.Itoa(1+(wcFlushWords+5000+6-3)/7) {
		t.Fatalf("x3 counted %s", got["x3"])
	}
	if len(got) != wcFlushWords+5000 {
		t.Fatalf("%d words, want %d", len(got), wcFlushWords+5000)
	}
}

func TestGrepCountsAndOrders(t *testing.T) {
	e := newEnv(t)
	text := genText(3, 8000, 400)
	e.write("/in/t.txt", text)
	e.run("grep", "input", "/in", "output", "/out", "regex", `w(1\d)\d?\b`, "group", "1", "reduces", "2")

	re := regexp.MustCompile(`w(1\d)\d?\b`)
	count := map[string]int{}
	for _, l := range strings.Split(string(text), "\n") {
		for _, m := range re.FindAllStringSubmatch(l, -1) {
			count[m[1]]++
		}
	}
	var want []string
	for k, n := range count {
		want = append(want, k+"\t"+strconv.Itoa(n))
	}
	sort.Slice(want, func(i, j int) bool {
		ni, _ := strconv.Atoi(strings.Split(want[i], "\t")[1])
		nj, _ := strconv.Atoi(strings.Split(want[j], "\t")[1])
		if ni != nj {
			return ni > nj
		}
		return want[i] < want[j]
	})
	got := lines(e.output("/out"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("grep output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) < 5 {
		t.Fatalf("test too weak: %d distinct matches", len(got))
	}
	// The temporary directory of the first job is gone.
	if ents, _ := e.fs.List(t.Context(), "/"); len(ents) != 2 {
		t.Fatalf("root holds %v, want only /in and /out", ents)
	}
}

func TestGrepRejectsBadRegex(t *testing.T) {
	_, err := Grep{}.Build(map[string]string{"input": "/in", "output": "/o", "regex": "a("})
	if err == nil || !strings.Contains(err.Error(), "--regex") {
		t.Fatalf("err = %v, want a --regex error", err)
	}
}
