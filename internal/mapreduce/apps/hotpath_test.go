package apps

import (
	"context"
	"encoding/binary"
	"testing"

	"smarth/internal/mapreduce"
)

// Hot map functions must not allocate per record: these tests count
// allocations (not time) over many calls.

type nopEmitter struct{ n int }

func (e *nopEmitter) Emit(k, v []byte) error { e.n++; return nil }

type nopCtx struct{ context.Context }

func (nopCtx) Param(string) string         { return "" }
func (nopCtx) Count(string, string, int64) {}
func (nopCtx) FS() mapreduce.FS            { return nil }
func (nopCtx) TaskIndex() int              { return 0 }

func assertNoAllocs(t *testing.T, what string, f func()) {
	t.Helper()
	f() // warm up: tables and buffers grow on first use
	if n := testing.AllocsPerRun(1000, f); n > 0 {
		t.Errorf("%s: %.2f allocations per record, want 0", what, n)
	}
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	var ctx mapreduce.TaskContext = &nopCtx{context.Background()}
	var out mapreduce.Emitter = &nopEmitter{}
	line := []byte("the quick brown fox\tjumps over the lazy dog the end")

	wc := newWordCounter()
	assertNoAllocs(t, "wordcount map", func() { wc.Map(ctx, nil, line, out) })

	var key [8]byte
	tg := &teraGenMapper{}
	row := uint64(0)
	assertNoAllocs(t, "teragen map", func() {
		row++
		binary.BigEndian.PutUint64(key[:], row)
		tg.Map(ctx, key[:], nil, out)
	})

	o := newTotalOrder(nil)
	cuts := [][]byte{[]byte("AAAA"), []byte("MMMM"), []byte("TTTT")}
	o.cuts.Store(&cuts)
	pk := []byte("NNNNNNNNNN")
	assertNoAllocs(t, "total-order partition", func() { o.Partition(pk, 4) })

	r := make([]byte, teraRowLen)
	makeTeraRow(r, 7)
	vm := &validateMapper{}
	assertNoAllocs(t, "teravalidate map", func() { vm.Map(ctx, r[:10], r[10:], out) })

	visit := (&hiveRows{pages: 100, seed: 1}).visit(nil, 3)
	agg := &aggMapper{prefix: 7, t: newCountTable()}
	assertNoAllocs(t, "aggregation map", func() { agg.Map(ctx, nil, visit, out) })
	jm := &joinMapper{from: []byte("1999-01-01"), to: []byte("2001-01-01")}
	assertNoAllocs(t, "join map", func() { jm.Map(ctx, nil, visit, out) })

	km := &kmeansMapper{}
	km.cents, km.dims = [][]float64{{0, 0}, {5, 5}}, 2
	km.sums, km.counts = make([]float64, 4), make([]int64, 2)
	pt := []byte("4.5 3.25")
	assertNoAllocs(t, "kmeans map", func() { km.Map(ctx, nil, pt, out) })

	rm := &rankMapper{initial: 0.01}
	adj := []byte("17\t0.002\t3,4,5")
	assertNoAllocs(t, "pagerank map", func() { rm.Map(ctx, nil, adj, out) })

	rt := &textWriterMapper{perMap: 1 << 16, seed: 1}
	var meta [16]byte
	rt.Map(ctx, meta[:], nil, out)
	if n := testing.AllocsPerRun(10, func() { rt.Map(ctx, meta[:], nil, out) }); n > 10 {
		t.Errorf("randomtextwriter: %.0f allocations per 64 KiB map, want a few", n)
	}
}

func BenchmarkTeraGenRow(b *testing.B) {
	var row [teraRowLen]byte
	b.SetBytes(teraRowLen)
	for i := 0; i < b.N; i++ {
		makeTeraRow(row[:], uint64(i))
	}
}

func BenchmarkWordCountMap(b *testing.B) {
	ctx := nopCtx{context.Background()}
	line := []byte(string((&textWriterMapper{}).sample()))
	wc := newWordCounter()
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		wc.Map(ctx, nil, line, &nopEmitter{})
	}
}

func BenchmarkPiSamples(b *testing.B) {
	piCount(0, int64(b.N))
}

// sample is one RandomTextWriter line, for benchmarks.
func (m *textWriterMapper) sample() []byte {
	var out sampleEmitter
	(&textWriterMapper{perMap: 1, seed: 1}).Map(nopCtx{context.Background()}, make([]byte, 16), nil, &out)
	return out.line
}

type sampleEmitter struct{ line []byte }

func (s *sampleEmitter) Emit(k, v []byte) error {
	s.line = append(append(append(s.line, k...), '\t'), v...)
	return nil
}
