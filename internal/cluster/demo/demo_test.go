package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTextCountsMatchTheText(t *testing.T) {
	body, counts := text(64<<10, 7)
	if len(body) < 64<<10 {
		t.Fatalf("text of %d bytes, want at least %d", len(body), 64<<10)
	}
	recount := map[string]int64{}
	for _, w := range strings.Fields(body) {
		recount[w]++
	}
	if len(recount) != len(counts) {
		t.Fatalf("%d distinct words counted while generating, %d in the text", len(counts), len(recount))
	}
	for w, c := range counts {
		if recount[w] != c {
			t.Errorf("%s: generated count %d, text has %d", w, c, recount[w])
		}
	}
	top := topWords(counts, 3)
	if len(top) != 3 || top[0].Count < top[1].Count || top[1].Count < top[2].Count {
		t.Errorf("top words not sorted: %+v", top)
	}
	again, _ := text(64<<10, 7)
	if again != body {
		t.Error("the same seed gave a different text")
	}
}

func TestGenerateIsSeededAndSummed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	sum, err := generate(p, 3<<20+5, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	if len(b) != 3<<20+5 || hex.EncodeToString(h[:]) != sum {
		t.Errorf("file of %d bytes, sum %s; generate said %s", len(b), hex.EncodeToString(h[:]), sum)
	}
	sum2, _ := generate(filepath.Join(dir, "b"), 3<<20+5, 1)
	sum3, _ := generate(filepath.Join(dir, "c"), 3<<20+5, 2)
	if sum2 != sum || sum3 == sum {
		t.Errorf("seeding: same seed %v, other seed differs %v", sum2 == sum, sum3 != sum)
	}
}
