package mapreduce

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzSegment feeds arbitrary bytes (as fetched from another node) to both
// segment decoders: they must agree and never panic or over-read.
func FuzzSegment(f *testing.F) {
	f.Add(appendRecord(appendRecord(nil, []byte("k"), []byte("v")), nil, []byte("value")))
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Add([]byte{5, 0, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		m := &memSegment{b: b}
		r := newReaderSegment(bytes.NewReader(b), int64(len(b)))
		for range 1000 {
			k1, v1, e1 := m.next()
			k2, v2, e2 := r.next()
			if (e1 == nil) != (e2 == nil) {
				t.Fatalf("decoders disagree: %v vs %v", e1, e2)
			}
			if e1 != nil {
				if (e1 == io.EOF) != (e2 == io.EOF) {
					t.Fatalf("decoders disagree at end: %v vs %v", e1, e2)
				}
				return
			}
			if !bytes.Equal(k1, k2) || !bytes.Equal(v1, v2) {
				t.Fatalf("decoders disagree: %q=%q vs %q=%q", k1, v1, k2, v2)
			}
		}
	})
}

func TestRadixSortMatchesComparisonSort(t *testing.T) {
	r := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgz", "b", "zzzzzzzzzz", "abcdefgh1"}
	c := &collector{numReduces: 3, bytesOrder: true, cmp: bytes.Compare, part: HashPartitioner{}, limit: 1 << 20}
	c.counters = &Counters{}
	for i := range 300 {
		k := []byte(r[i%len(r)])
		if i%4 == 0 {
			k = append(k, byte(i), byte(i>>3))
		}
		if err := c.Emit(k, nil); err != nil {
			t.Fatal(err)
		}
	}
	c.sort()
	for i := 1; i < len(c.meta); i++ {
		a, b := c.meta[i-1], c.meta[i]
		if a.part > b.part || (a.part == b.part && bytes.Compare(c.key(&a), c.key(&b)) > 0) {
			t.Fatalf("out of order at %d: (%d %q) before (%d %q)", i, a.part, c.key(&a), b.part, c.key(&b))
		}
	}
}

// The merger's prefix shortcut must give exactly bytes.Compare's order,
// including keys shorter than the prefix and keys with zero bytes.
func TestMergerMatchesBytesOrder(t *testing.T) {
	keys := []string{"", "\x00", "a", "a\x00", "a\x00\x01", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgz", "b", "\xff\xff"}
	var streams []recordStream
	var want []string
	for s := range 4 {
		var seg []byte
		var ks []string
		for i, k := range keys {
			if (i+s)%3 != 0 {
				ks = append(ks, k)
			}
		}
		sort.Strings(ks)
		for _, k := range ks {
			seg = appendRecord(seg, []byte(k), []byte{byte(s)})
			want = append(want, k)
		}
		streams = append(streams, &memSegment{b: seg})
	}
	sort.Strings(want)
	m, err := newMerger(bytes.Compare, true, streams)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		k, _, err := m.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(k))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("merged order\n%q\nwant\n%q", got, want)
	}
}

// A map's output goes to memory when the budget has room, else to disk,
// and reads back the same either way.
func TestMapOutputInMemoryOrOnDisk(t *testing.T) {
	job := &Job{NumReduces: 2}
	emit := func(c *collector) {
		for i := range 1000 {
			if err := c.Emit([]byte(strconv.Itoa(i*7919%1000)), []byte("value")); err != nil {
				t.Fatal(err)
			}
		}
	}
	segments := func(out *MapOutput) []string {
		var s []string
		for r := range 2 {
			rc, n, err := OpenSegment(out, r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if int64(len(b)) != n {
				t.Fatalf("segment %d: read %d of %d bytes", r, len(b), n)
			}
			s = append(s, string(b))
		}
		return s
	}
	budget := NewMemoryBudget(1 << 20)
	c := newCollector(job, &taskContext{Context: context.Background()}, t.TempDir(), 1<<20, &Counters{}, nil)
	c.memory = budget
	emit(c)
	mem, err := c.finish(filepath.Join(t.TempDir(), "file.out"))
	if err != nil {
		t.Fatal(err)
	}
	if mem.Data == nil || mem.Path != "" || budget.Used() != int64(len(mem.Data)) {
		t.Fatalf("output with room in the budget: path %q, %d bytes in memory, budget used %d", mem.Path, len(mem.Data), budget.Used())
	}
	c = newCollector(job, &taskContext{Context: context.Background()}, t.TempDir(), 1<<20, &Counters{}, nil)
	c.memory = NewMemoryBudget(100) // too small
	emit(c)
	disk, err := c.finish(filepath.Join(t.TempDir(), "file.out"))
	if err != nil {
		t.Fatal(err)
	}
	if disk.Data != nil || disk.Path == "" {
		t.Fatalf("output without room: path %q, %d bytes in memory", disk.Path, len(disk.Data))
	}
	if a, b := segments(mem), segments(disk); a[0] != b[0] || a[1] != b[1] || a[0] == "" {
		t.Fatal("in-memory and on-disk outputs differ")
	}
	rc, _, _ := OpenSegment(mem, 1)
	if m, ok := rc.(interface{ Bytes() []byte }); !ok || string(m.Bytes()) != segments(disk)[1] {
		t.Error("an in-memory segment does not offer its bytes for a copy-free fetch")
	}
	mem.Release()
	mem.Release() // once only
	if budget.Used() != 0 {
		t.Errorf("budget used %d after Release", budget.Used())
	}
}

func TestSortBuffersRecycleAndTrim(t *testing.T) {
	p := NewSortBuffers(1)
	a := p.get(1 << 10)
	b := p.get(1 << 10)
	p.put(a)
	p.put(b) // beyond Max: dropped
	if p.Idle() != 1 {
		t.Fatalf("%d idle arenas, want 1 (Max)", p.Idle())
	}
	if got := p.get(1 << 10); got != a {
		t.Error("the idle arena was not reused")
	}
	if got := p.get(2 << 10); got == a || got.limit != 2<<10 {
		t.Error("an arena of another size was handed out")
	}
	p.put(a)
	p.Trim(time.Hour)
	if p.Idle() != 1 {
		t.Error("Trim dropped a recently used arena")
	}
	p.Trim(-1)
	if p.Idle() != 0 {
		t.Error("Trim kept an arena idle for longer than asked")
	}
}
