package apps

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestDFSIOWriteThenRead(t *testing.T) {
	e := newEnv(t)
	w, err := RunDFSIO(t.Context(), e.r, map[string]string{"mode": "write", "nrFiles": "3", "fileSize": "0.25", "bufferSize": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 18 // 0.25 MB
	if w.Files != 3 || w.Bytes != 3*size {
		t.Fatalf("write: %d files, %d bytes; want 3 files of %d", w.Files, w.Bytes, size)
	}
	for i := 0; i < 3; i++ {
		b := e.read("/benchmarks/TestDFSIO/io_data/test_io_" + string(rune('0'+i)))
		if len(b) != size || b[1] != '1' || b[10000] != '0' {
			t.Fatalf("file %d: %d bytes, pattern %q", i, len(b), b[:3])
		}
	}
	if w.Throughput <= 0 || w.AvgRate <= 0 || math.IsNaN(w.StdDev) {
		t.Fatalf("write figures %+v", w)
	}
	// The figures follow Hadoop's definitions from the per-map stats.
	stats, err := readDFSIOStats(t.Context(), e.fs, "/benchmarks/TestDFSIO/io_write")
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.75 / (stats["l:time"] / 1000); math.Abs(w.Throughput-want) > 1e-9 {
		t.Fatalf("throughput %v, want %v", w.Throughput, want)
	}

	e.run("testdfsio", "mode", "read", "nrFiles", "3", "fileSize", "0.25")
	if out := e.out.String(); !strings.Contains(out, "----- TestDFSIO ----- : read") ||
		!strings.Contains(out, "Total MBytes processed: 0.75") || !strings.Contains(out, "Average IO rate mb/sec") {
		t.Fatalf("read report:\n%s", out)
	}
	// A second write replaces the data; clean removes everything.
	if _, err := RunDFSIO(t.Context(), e.r, map[string]string{"nrFiles": "1", "fileSize": "1KiB"}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := e.fs.List(t.Context(), "/benchmarks/TestDFSIO/io_data"); len(ents) != 1 || ents[0].Size != 1024 {
		t.Fatalf("after second write io_data holds %v", ents)
	}
	e.run("testdfsio", "mode", "clean")
	if _, err := e.fs.Stat(t.Context(), "/benchmarks/TestDFSIO"); err == nil {
		t.Fatal("clean left the base directory")
	}
}

func TestDFSIOReadWithoutWriteFailsClearly(t *testing.T) {
	e := newEnv(t)
	_, err := RunDFSIO(t.Context(), e.r, map[string]string{"mode": "read", "nrFiles": "1"})
	if err == nil || !strings.Contains(err.Error(), "run --mode write first") {
		t.Fatalf("err = %v", err)
	}
}

func TestRandomTextWriter(t *testing.T) {
	e := newEnv(t)
	e.run("randomtextwriter", "output", "/text", "maps", "3", "bytes-per-map", "20KiB")
	parts := e.parts("/text")
	if len(parts) != 3 {
		t.Fatalf("files %v", parts)
	}
	vocab := map[string]bool{}
	for _, w := range wordList() {
		vocab[w] = true
	}
	if len(vocab) != 1000 {
		t.Fatalf("word list has %d distinct words", len(vocab))
	}
	for _, p := range parts {
		b := e.read(p)
		if len(b) < 20<<10 || len(b) > 20<<10+2000 {
			t.Fatalf("%s: %d bytes for 20 KiB per map", p, len(b))
		}
		for _, l := range lines(b) {
			k, v, ok := strings.Cut(l, "\t")
			kw, vw := strings.Fields(k), strings.Fields(v)
			if !ok || len(kw) < 5 || len(kw) > 10 || len(vw) < 20 || len(vw) > 100 {
				t.Fatalf("line %q: %d key words, %d value words", l, len(kw), len(vw))
			}
			for _, w := range append(kw, vw...) {
				if !vocab[w] {
					t.Fatalf("word %q not in the list", w)
				}
			}
		}
	}
	// Same seed, same text; maps differ from each other.
	e.run("randomtextwriter", "output", "/again", "maps", "3", "bytes-per-map", "20KiB")
	if !bytes.Equal(e.output("/text"), e.output("/again")) {
		t.Fatal("same seed gave different text")
	}
	if bytes.Equal(e.read(parts[0])[:100], e.read(parts[1])[:100]) {
		t.Fatal("two maps wrote the same text")
	}
}
