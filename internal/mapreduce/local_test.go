package mapreduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// wordCount is a test app: words of text lines, summed, with combiner.
type wordCount struct{ failMap bool }

func (wordCount) Name() string        { return "wc" }
func (wordCount) Description() string { return "test word count" }
func (wordCount) Params() []Param     { return nil }
func (w wordCount) Build(p map[string]string) (*Job, error) {
	n, _ := strconv.Atoi(p["reduces"])
	job := &Job{App: "wc", Params: p, Input: SplitPaths(p["input"]), Output: p["output"], NumReduces: n,
		NewMapper:   func() Mapper { return wcMapper{fail: w.failMap || p["fail"] == "1"} },
		NewReducer:  func() Reducer { return sumReducer{} },
		NewCombiner: func() Reducer { return sumReducer{} },
	}
	if p["nocombine"] == "1" {
		job.NewCombiner = nil
	}
	return job, nil
}

type wcMapper struct{ fail bool }

func (m wcMapper) Map(ctx TaskContext, _, line []byte, out Emitter) error {
	if m.fail {
		return errors.New("map failed on purpose")
	}
	for _, w := range bytes.Fields(line) {
		if err := out.Emit(w, []byte("1")); err != nil {
			return err
		}
	}
	return nil
}

type sumReducer struct{}

func (sumReducer) Reduce(ctx TaskContext, key []byte, vals ValueIterator, out Emitter) error {
	var n int64
	for vals.Next() {
		v, err := strconv.ParseInt(string(vals.Value()), 10, 64)
		if err != nil {
			return err
		}
		n += v
	}
	return out.Emit(key, strconv.AppendInt(nil, n, 10))
}

func genText(t *testing.T, lfs *LocalFS, p string, lines int, seed uint64) map[string]int64 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	want := map[string]int64{}
	var b strings.Builder
	for range lines {
		for j := range 1 + r.IntN(12) {
			w := fmt.Sprintf("w%d", r.IntN(500))
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			want[w]++
		}
		b.WriteByte('\n')
	}
	full := filepath.Join(lfs.Root, p)
	os.MkdirAll(filepath.Dir(full), 0o755)
	if err := os.WriteFile(full, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return want
}

func readCounts(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	files, _ := filepath.Glob(filepath.Join(dir, "part-*"))
	if len(files) == 0 {
		t.Fatalf("no part files in %s", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var prev string
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" {
				continue
			}
			k, v, _ := strings.Cut(line, "\t")
			if k <= prev {
				t.Fatalf("%s: keys out of order: %q after %q", f, k, prev)
			}
			prev = k
			n, _ := strconv.ParseInt(v, 10, 64)
			if _, dup := got[k]; dup {
				t.Fatalf("key %q in two reduce outputs", k)
			}
			got[k] = n
		}
	}
	return got
}

func TestLocalRunnerWordCount(t *testing.T) {
	cases := []struct {
		name    string
		reduces string
		sortBuf int
		block   int64
		extra   map[string]string
		memory  int64 // map outputs kept in memory up to this
	}{
		{"one reduce, no spill", "1", 0, 0, nil, 0},
		{"three reduces, many splits and spills", "3", 16 << 10, 7 << 10, nil, 0},
		{"spills without combiner", "2", 8 << 10, 10 << 10, map[string]string{"nocombine": "1"}, 0},
		{"outputs in memory", "2", 0, 10 << 10, map[string]string{"nocombine": "1"}, 1 << 20},
		// Room for some outputs only: the rest go to disk.
		{"outputs in memory and on disk", "3", 0, 10 << 10, map[string]string{"nocombine": "1"}, 40 << 10},
		{"combined outputs in memory", "2", 0, 10 << 10, nil, 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lfs, _ := NewLocalFS(t.TempDir())
			lfs.BlockSize = c.block
			want := genText(t, lfs, "/in/a.txt", 3000, 1)
			for k, v := range genText(t, lfs, "/in/b.txt", 1000, 2) {
				want[k] += v
			}
			r := NewLocalRunner(lfs, LocalOptions{Registry: NewRegistry(wordCount{}), SortBufferBytes: c.sortBuf,
				MapOutputMemoryBytes: c.memory})
			params := map[string]string{"input": "/in", "output": "/out", "reduces": c.reduces}
			for k, v := range c.extra {
				params[k] = v
			}
			res, err := r.Run(context.Background(), "wc", params)
			if err != nil {
				t.Fatal(err)
			}
			got := readCounts(t, filepath.Join(lfs.Root, "out"))
			if len(got) != len(want) {
				t.Fatalf("got %d words, want %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("count of %q = %d, want %d", k, got[k], v)
				}
			}
			if _, err := os.Stat(filepath.Join(lfs.Root, "out", "_SUCCESS")); err != nil {
				t.Fatal("no _SUCCESS:", err)
			}
			if _, err := os.Stat(filepath.Join(lfs.Root, "out", "_temporary")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatal("_temporary left behind")
			}
			var words int64
			for _, v := range want {
				words += v
			}
			tc := res.Counters[GroupTask]
			if tc[MapOutputRecords] != words {
				t.Errorf("MAP_OUTPUT_RECORDS = %d, want %d", tc[MapOutputRecords], words)
			}
			if tc[ReduceOutputRecords] != int64(len(want)) {
				t.Errorf("REDUCE_OUTPUT_RECORDS = %d, want %d", tc[ReduceOutputRecords], len(want))
			}
			if tc[MapInputRecords] != 4000 {
				t.Errorf("MAP_INPUT_RECORDS = %d, want 4000", tc[MapInputRecords])
			}
			if used := r.memory.Used(); used != 0 {
				t.Errorf("%d bytes of map output memory still reserved after the job", used)
			}
		})
	}
}

func TestLocalRunnerErrors(t *testing.T) {
	lfs, _ := NewLocalFS(t.TempDir())
	genText(t, lfs, "/in/a.txt", 100, 1)
	os.MkdirAll(filepath.Join(lfs.Root, "exists"), 0o755)
	r := NewLocalRunner(lfs, LocalOptions{Registry: NewRegistry(wordCount{}), MaxAttempts: 2})
	ctx := context.Background()
	cases := []struct {
		app    string
		params map[string]string
		want   string
	}{
		{"nope", nil, `unknown app "nope"`},
		{"wc", map[string]string{"input": "/missing", "output": "/o1", "reduces": "1"}, "Input path does not exist: /missing"},
		{"wc", map[string]string{"input": "/in", "output": "/exists", "reduces": "1"}, "output directory /exists already exists"},
		{"wc", map[string]string{"input": "/in", "output": "/o2", "reduces": "1", "fail": "1"}, "map failed on purpose"},
	}
	for _, c := range cases {
		_, err := r.Run(ctx, c.app, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run(%s, %v) = %v, want error containing %q", c.app, c.params, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(lfs.Root, "o2")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed job left its output directory: %v", err)
	}
}

func TestLineSplitsCoverEveryLineOnce(t *testing.T) {
	lfs, _ := NewLocalFS(t.TempDir())
	var b strings.Builder
	var lines []string
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 500 {
		l := fmt.Sprintf("%d-%s", i, strings.Repeat("x", r.IntN(40)))
		lines = append(lines, l)
		b.WriteString(l + "\n")
	}
	os.WriteFile(filepath.Join(lfs.Root, "f"), []byte(b.String()), 0o644)
	for _, bs := range []int64{1, 2, 7, 64, 1000, 1 << 20} {
		lfs.BlockSize = bs
		splits, err := TextInput{}.Splits(context.Background(), lfs, &Job{Input: []string{"/f"}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range splits {
			rr, err := TextInput{}.Open(context.Background(), lfs, nil, s)
			if err != nil {
				t.Fatal(err)
			}
			for {
				_, v, err := rr.Next()
				if err != nil {
					break
				}
				got = append(got, string(v))
			}
			rr.Close()
		}
		sort.Strings(got)
		want := append([]string(nil), lines...)
		sort.Strings(want)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("block size %d: lines read %d, want %d", bs, len(got), len(want))
		}
	}
}
