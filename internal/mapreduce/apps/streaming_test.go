package apps

import (
	"strconv"
	"strings"
	"testing"
)

const (
	awkSplit = `awk '{for (i = 1; i <= NF; i++) print $i "\t1"}'`
	awkSum   = `awk -F '\t' '{s[$1] += $2} END {for (k in s) print k "\t" s[k]}'`
)

func TestStreamingWordCount(t *testing.T) {
	e := newEnv(t)
	// awk splits fields on spaces and tabs only.
	text := []byte(strings.NewReplacer("\f", " ", "\r", " ").Replace(string(genText(9, 6000, 700))))
	e.write("/in/t.txt", text)
	want := map[string]int{}
	for _, w := range strings.Fields(string(text)) {
		want[w]++
	}
	for _, combiner := range []string{"", awkSum} {
		out := "/out" + strconv.Itoa(len(combiner))
		res := e.run("streaming", "input", "/in", "output", out, "reduces", "2",
			"mapper", awkSplit, "reducer", awkSum, "combiner", combiner)
		got := kvLines(t, e.output(out))
		if len(got) != len(want) {
			t.Fatalf("combiner %q: %d words, want %d", combiner, len(got), len(want))
		}
		for w, n := range want {
			if got[w] != strconv.Itoa(n) {
				t.Fatalf("combiner %q: %q counted %s, want %d", combiner, w, got[w], n)
			}
		}
		// MAP_OUTPUT_RECORDS is what the mapper command wrote, one per
		// word; the combiner leaves one record per distinct word and split.
		tc := res.Counters["Map-Reduce Framework"]
		if words := int64(len(strings.Fields(string(text)))); tc["MAP_OUTPUT_RECORDS"] != words {
			t.Fatalf("combiner %q: MAP_OUTPUT_RECORDS = %d, want %d words", combiner, tc["MAP_OUTPUT_RECORDS"], words)
		}
		if combiner != "" && (tc["COMBINE_INPUT_RECORDS"] < int64(len(strings.Fields(string(text)))) ||
			tc["COMBINE_OUTPUT_RECORDS"] > int64(len(strings.Fields(string(text)))/5)) {
			t.Fatalf("combiner did not combine: %v", tc)
		}
	}
}

func TestStreamingMapOnlyCountersAndBigOutput(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := range 40000 {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	e.write("/in.txt", []byte(b.String()))
	// The mapper writes 2 MB before it reads any input: both pipes fill,
	// which deadlocks a runner that does not read while it writes.
	mapper := `head -c 2000000 /dev/zero | tr '\0' 'x' | fold -w 1000; echo; ` +
		`awk '{print; print "reporter:counter:App,lines,1" > "/dev/stderr"}'`
	res := e.run("streaming", "input", "/in.txt", "output", "/o", "mapper", mapper)
	got := lines(e.output("/o"))
	nx, nl := 0, 0
	for _, l := range got {
		switch {
		case strings.HasPrefix(l, "x"):
			nx++
		case strings.HasPrefix(l, "line "):
			nl++
		}
	}
	splits := len(e.parts("/o"))
	if nl != 40000 || nx != 2000*splits {
		t.Fatalf("%d input lines and %d x-lines in %d files; want 40000 and %d", nl, nx, splits, 2000*splits)
	}
	if got := res.Counters["App"]["lines"]; got != 40000 {
		t.Fatalf("counter App/lines = %d, want 40000", got)
	}
}

func TestStreamingFailureShowsStderr(t *testing.T) {
	e := newEnv(t)
	e.write("/in.txt", []byte("a\nb\n"))
	_, err := e.r.Run(t.Context(), "streaming", map[string]string{"input": "/in.txt", "output": "/o",
		"mapper": "echo something went wrong >&2; exit 3"})
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "something went wrong") {
		t.Fatalf("err = %v", err)
	}
	if _, err := e.fs.Stat(t.Context(), "/o"); err == nil {
		t.Fatal("failed job left output")
	}
	if _, err := (Streaming{}).Build(map[string]string{"input": "/in", "output": "/o"}); err == nil ||
		!strings.Contains(err.Error(), "--mapper") {
		t.Fatalf("missing mapper: err = %v", err)
	}
}
