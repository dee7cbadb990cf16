package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/units"
)

// demoWords is the vocabulary of the WordCount step's text. Words are drawn
// with a Zipf distribution, so the top of the count is clear-cut.
var demoWords = strings.Fields(`the data block node rack pipeline replica client namenode
datanode write read cache map reduce shuffle sort job task heartbeat lease
speed link disk memory network file path stream packet ack`)

// text returns about size bytes of space-separated words and the count of
// every word in it.
func text(size int, seed uint64) (string, map[string]int64) {
	rng := rand.New(rand.NewPCG(seed, seed^0xabcdef))
	zipf := rand.NewZipf(rng, 1.3, 1, uint64(len(demoWords)-1))
	counts := map[string]int64{}
	var b strings.Builder
	b.Grow(size + 16)
	for col := 0; b.Len() < size; col++ {
		w := demoWords[zipf.Uint64()]
		counts[w]++
		b.WriteString(w)
		if col%12 == 11 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
	return b.String(), counts
}

// topWords sorts counts by count descending, then word.
func topWords(counts map[string]int64, n int) []WordCountEntry {
	var all []WordCountEntry
	for w, c := range counts {
		all = append(all, WordCountEntry{w, c})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Count != all[j].Count {
			return all[i].Count > all[j].Count
		}
		return all[i].Word < all[j].Word
	})
	return all[:min(n, len(all))]
}

func (d *demo) wordCountStep(ctx context.Context, fs *client.FileSystem, st *cluster.State) error {
	if st.ResourceManager == "" {
		d.step("WordCount: skipped (this smarth binary has no MapReduce runtime yet)")
		return nil
	}
	const input, output = "/demo/words.txt", "/demo/wordcount"
	body, counts := text(8<<20, d.opts.Seed)
	d.step("Run WordCount over %s of generated text (%s) on the cluster's node managers", units.FormatSize(int64(len(body))), input)
	w, err := fs.Create(ctx, input, client.CreateOptions{Overwrite: true, Replication: d.replication(), BlockSize: 2 << 20})
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(body)); err != nil {
		_ = w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	_ = fs.Delete(ctx, output, true)
	t0 := time.Now()
	got, err := d.opts.WordCount(ctx, st, input, output, 10)
	if err != nil {
		return fmt.Errorf("wordcount: %w", err)
	}
	fmt.Fprintf(d.out, "  job done in %v; output in %s\n", time.Since(t0).Round(time.Millisecond), output)
	want := topWords(counts, 10)
	fmt.Fprintln(d.out, "  top words:")
	for i, e := range got {
		fmt.Fprintf(d.out, "    %2d. %-10s %d\n", i+1, e.Word, e.Count)
	}
	if len(got) != len(want) {
		return fmt.Errorf("wordcount: %d top words, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("wordcount: word %d is %s=%d, a local count says %s=%d", i+1, got[i].Word, got[i].Count, want[i].Word, want[i].Count)
		}
	}
	fmt.Fprintln(d.out, "  verified against a local count of the same text")
	return nil
}
