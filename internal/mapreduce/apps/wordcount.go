package apps

import (
	"fmt"
	"strconv"

	"smarth/internal/mapreduce"
)

// WordCount counts whitespace-separated words, as Hadoop's example does
// (separators: space, tab, newline, carriage return, form feed). The
// output is "word\tcount" lines.
//
// Besides the combiner, the mapper combines in memory: it keeps a count
// per distinct word and emits the counts when the task ends (or when it
// holds wcFlushWords words), so the sort and spill see one record per
// word per map instead of one per occurrence.
type WordCount struct{}

var _ mapreduce.App = WordCount{}

// wcFlushWords bounds the in-mapper table: a text with a huge vocabulary
// degrades to emitting partial counts, never to unbounded memory.
const wcFlushWords = 1 << 17

func (WordCount) Name() string { return "wordcount" }
func (WordCount) Description() string {
	return "count the words of text files (Hadoop's WordCount, with a combiner)"
}

func (WordCount) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1)}
}

func (w WordCount) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(w.Params(), given)
	job, err := newJob(w.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	job.NewMapper = func() mapreduce.Mapper { return newWordCounter() }
	job.NewCombiner = func() mapreduce.Reducer { return &sumReducer{} }
	job.NewReducer = func() mapreduce.Reducer { return &sumReducer{} }
	return job, nil
}

// wordCounter is the mapper: it splits lines into words and counts them
// in a countTable.
type wordCounter struct{ t countTable }

var _ mapreduce.CombiningMapper = (*wordCounter)(nil)

// Combined: every word is a record map() produced (Hadoop's WordCount
// emits (word, 1) for each), the table's flushes what it emitted.
func (m *wordCounter) Combined() mapreduce.CombineStats { return m.t.stats }

func newWordCounter() *wordCounter { return &wordCounter{t: newCountTable()} }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func (m *wordCounter) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	for i := 0; i < len(line); {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if j > i {
			if err := m.t.add(line[i:j], 1, out); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

func (m *wordCounter) Cleanup(_ mapreduce.TaskContext, out mapreduce.Emitter) error {
	return m.t.flush(out)
}

// countTable is in-mapper combining: a count per distinct key, looked up
// by the key's bytes (no allocation); only a new key is copied. It emits
// "key\tcount" records when full and at the end of the task.
type countTable struct {
	index  map[string]int32
	keys   []string
	counts []int64
	buf    []byte
	// stats count records and bytes in (per add, as the record "key\tn"
	// map() stands for) and out (per flushed key), for the counters.
	stats mapreduce.CombineStats
}

func newCountTable() countTable { return countTable{index: make(map[string]int32, 1024)} }

func (t *countTable) add(key []byte, n int64, out mapreduce.Emitter) error {
	t.stats.InRecords++
	t.stats.InBytes += int64(len(key) + decimalLen(n))
	if k, ok := t.index[string(key)]; ok {
		t.counts[k] += n
		return nil
	}
	s := string(key)
	t.index[s] = int32(len(t.keys))
	t.keys = append(t.keys, s)
	t.counts = append(t.counts, n)
	if len(t.keys) >= wcFlushWords {
		return t.flush(out)
	}
	return nil
}

func (t *countTable) flush(out mapreduce.Emitter) error {
	t.stats.OutRecords += int64(len(t.keys))
	for k, w := range t.keys {
		t.buf = strconv.AppendInt(t.buf[:0], t.counts[k], 10)
		t.stats.OutBytes += int64(len(w) + len(t.buf))
		if err := out.Emit([]byte(w), t.buf); err != nil {
			return err
		}
	}
	clear(t.index)
	t.keys, t.counts = t.keys[:0], t.counts[:0]
	return nil
}

// sumReducer adds decimal integer values; it is the reducer and combiner
// of every counting app (WordCount, Grep).
type sumReducer struct{ buf []byte }

func (r *sumReducer) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var sum int64
	for values.Next() {
		v, ok := parseInt(values.Value())
		if !ok {
			return fmt.Errorf("key %q: value %q is not an integer", key, values.Value())
		}
		sum += v
	}
	r.buf = strconv.AppendInt(r.buf[:0], sum, 10)
	return out.Emit(key, r.buf)
}

// Grep and the Hive-style aggregation combine in a countTable too: a
// match (a row) is a record their map() produced.
var (
	_ mapreduce.CombiningMapper = (*grepMapper)(nil)
	_ mapreduce.CombiningMapper = (*aggMapper)(nil)
)

func (m *grepMapper) Combined() mapreduce.CombineStats { return m.t.stats }
func (m *aggMapper) Combined() mapreduce.CombineStats  { return m.t.stats }

// decimalLen is the length of n in decimal, the bytes of a count value.
func decimalLen(n int64) int {
	var b [20]byte
	return len(strconv.AppendInt(b[:0], n, 10))
}
