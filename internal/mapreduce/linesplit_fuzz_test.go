package mapreduce

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// FuzzLineSplits cuts arbitrary text at arbitrary offsets, as FileSplits
// and a task's split (offset, length from its launch) do, and reads each
// split with the line reader: the splits together must yield every line
// of the file exactly once, in order, keyed by its offset, whatever the
// cuts or line endings. Splits whose fields are out of range (negative,
// past the end) must read nothing or fail, never panic.
func FuzzLineSplits(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), []byte{2, 5})
	f.Add([]byte("no newline at the end"), []byte{0, 3, 3, 200})
	f.Add([]byte("\r\n\r\n\n\nx\r"), []byte{1, 2, 3})
	f.Add([]byte(""), []byte{})
	dir := f.TempDir()
	fsys, err := NewLocalFS(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text, cuts []byte) {
		if err := os.WriteFile(filepath.Join(dir, "in"), text, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(cuts) > 16 {
			cuts = cuts[:16] // each split costs a 256 KiB buffer
		}
		n := int64(len(text))
		// Cut points: each byte a fraction of the file, so short inputs
		// reach every offset and long ones are cut anywhere.
		offs := []int64{0, n}
		for _, c := range cuts {
			offs = append(offs, n*int64(c)/255)
		}
		slices.Sort(offs)
		offs = slices.Compact(offs)
		var got bytes.Buffer
		for i := 0; i+1 < len(offs); i++ {
			readSplit(t, fsys, Split{Path: "/in", Offset: offs[i], Length: offs[i+1] - offs[i]}, &got)
		}
		var want bytes.Buffer
		for off := 0; off < len(text); {
			end := bytes.IndexByte(text[off:], '\n')
			next := len(text)
			if end >= 0 {
				end += off
				next = end + 1
			} else {
				end = len(text)
			}
			line := bytes.TrimSuffix(text[off:end], []byte("\r"))
			if end == len(text) { // a last line without '\n' keeps its '\r'
				line = text[off:end]
			}
			writeLine(&want, strconv.Itoa(off), line)
			off = next
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("cuts %v of %q read\n%q\nwant\n%q", offs, text, got.Bytes(), want.Bytes())
		}
		// Out-of-range splits, as a launch could carry them.
		for _, s := range []Split{{Offset: -1, Length: 5}, {Offset: n + 10, Length: 5}, {Offset: 1, Length: -7},
			{Offset: n / 2, Length: 1<<63 - 1}} {
			s.Path = "/in"
			r, err := OpenLineReader(context.Background(), fsys, s)
			if err != nil {
				continue
			}
			for k := 0; ; k++ {
				if _, _, err := r.Next(); err != nil || k > len(text) {
					break
				}
			}
			if r.BytesRead() < 0 {
				t.Fatalf("split %+v: %d bytes read", s, r.BytesRead())
			}
			r.Close()
		}
	})
}

func readSplit(t *testing.T, fsys FS, s Split, out *bytes.Buffer) {
	r, err := OpenLineReader(context.Background(), fsys, s)
	if err != nil {
		t.Fatalf("split %+v: %v", s, err)
	}
	defer r.Close()
	for {
		k, v, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("split %+v: %v", s, err)
		}
		writeLine(out, string(k), v)
	}
}

func writeLine(b *bytes.Buffer, key string, line []byte) {
	b.WriteString(key)
	b.WriteByte(' ')
	b.WriteString(strconv.Quote(string(line)))
	b.WriteByte('\n')
}
