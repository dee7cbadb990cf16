package mapreduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// outputs makes the same map output three ways: in memory, on disk from
// one sorted buffer, and on disk merged from several spills.
func outputs(t *testing.T) map[string]*MapOutput {
	t.Helper()
	job := &Job{NumReduces: 3}
	build := func(buf int, memory int64) *MapOutput {
		c := newCollector(job, &taskContext{Context: context.Background()}, t.TempDir(), buf, &Counters{}, nil)
		c.memory = NewMemoryBudget(memory)
		for i := range 5000 {
			if err := c.Emit([]byte(strconv.Itoa(i*7919%5000)), []byte("some value")); err != nil {
				t.Fatal(err)
			}
		}
		out, err := c.finish(filepath.Join(t.TempDir(), "file.out"))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return map[string]*MapOutput{"memory": build(1<<20, 1<<20), "disk": build(1<<20, 0), "spills": build(16<<10, 0)}
}

// Every segment of a map output carries the CRC32C of its bytes, however
// the output was written.
func TestMapOutputSegmentsCarryTheirChecksum(t *testing.T) {
	for name, out := range outputs(t) {
		for r, seg := range out.Index {
			b := out.Data
			if b == nil {
				var err error
				if b, err = os.ReadFile(out.Path); err != nil {
					t.Fatal(err)
				}
			}
			if got := SegmentCRC(b[seg.Offset : seg.Offset+seg.Length]); got != seg.CRC || seg.Length == 0 {
				t.Errorf("%s output, segment %d (%d bytes): index CRC %08x, bytes' CRC %08x", name, r, seg.Length, seg.CRC, got)
			}
		}
	}
}

// corruptingFetcher serves a map output's segments with one byte
// flipped, under the map's (right) checksum, as a disk or a wire that
// damaged them would.
type corruptingFetcher struct{ out *MapOutput }

func (f corruptingFetcher) Fetch(ctx context.Context, ref MapOutputRef, reduce int) (io.ReadCloser, int64, error) {
	rc, n, err := OpenSegment(f.out, reduce)
	if err != nil {
		return nil, 0, err
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	b[len(b)/2] ^= 1
	return CheckedSegment(io.NopCloser(bytes.NewReader(b)), f.out.Index[reduce].CRC), n, nil
}

// A reduce that fetches a corrupt segment fails with a FetchError naming
// the map (so the map runs again), in memory and on disk alike; the same
// fetch of intact bytes is the control.
func TestCorruptSegmentIsAFetchFailure(t *testing.T) {
	out := outputs(t)["disk"]
	for _, budget := range []int64{1 << 20, 1} { // segment kept in memory; streamed to disk
		for _, corrupt := range []bool{false, true} {
			var f Fetcher = FileFetcher(func(string) (*MapOutput, bool) { return out, true })
			if corrupt {
				f = corruptingFetcher{out: out}
			}
			env := TaskEnv{Fetcher: f, WorkDir: t.TempDir()}
			ref := MapOutputRef{MapIndex: 0, Attempt: "attempt_m_0"}
			got, err := fetchOne(&taskContext{Context: context.Background()}, env, TaskSpec{Index: 1}, ref,
				func(n int64) bool { return n <= budget })
			var fe *FetchError
			switch {
			case !corrupt && err != nil:
				t.Fatalf("control (budget %d): intact segment: %v", budget, err)
			case corrupt && (!errors.As(err, &fe) || !errors.Is(err, ErrCorruptSegment) || fe.MapIndex != 0):
				t.Fatalf("budget %d: corrupt segment gave %v (%s); want a FetchError for map 0 saying it is corrupt", budget, err, fmt.Sprint(got.size))
			}
		}
	}
}
