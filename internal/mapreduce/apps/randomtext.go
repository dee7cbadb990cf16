package apps

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"

	"smarth/internal/mapreduce"
)

// RandomTextWriter writes random text, as Hadoop's example of that name:
// each of --maps map tasks writes about --bytes-per-map bytes of lines
// "key words\tvalue words", the key 5-10 words and the value 20-100 words
// drawn uniformly from a fixed list of 1000 words. It is map-only; the
// text is input for WordCount, Grep and Sort. Each map seeds its own
// generator from --seed and its index, so the output is reproducible.
type RandomTextWriter struct{}

var _ mapreduce.App = RandomTextWriter{}

func (RandomTextWriter) Name() string { return "randomtextwriter" }
func (RandomTextWriter) Description() string {
	return "write random sentences from a fixed word list (map-only; --bytes-per-map --maps)"
}

func (RandomTextWriter) Params() []mapreduce.Param {
	return []mapreduce.Param{outputParam,
		{Name: "maps", Default: "2", Help: "number of map tasks (= output files)"},
		{Name: "bytes-per-map", Default: "64MiB", Help: "bytes each map writes (suffixes KiB, MiB, GiB)"},
		{Name: "seed", Default: "1", Help: "random seed"},
	}
}

func (rt RandomTextWriter) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(rt.Params(), given)
	job, err := newJob(rt.Name(), p, false, -1)
	if err != nil {
		return nil, err
	}
	maps, seed, err := p.mapsAndSeed()
	if err != nil {
		return nil, err
	}
	perMap, err := p.size("bytes-per-map", 1, 0, 1<<40)
	if err != nil {
		return nil, err
	}
	job.InputFormat = rangeInput{total: maps, maps: int(maps)}
	job.NewMapper = func() mapreduce.Mapper { return &textWriterMapper{perMap: perMap, seed: uint64(seed)} }
	return job, nil
}

type textWriterMapper struct {
	perMap     int64
	seed       uint64
	key, value []byte
}

func (m *textWriterMapper) Map(_ mapreduce.TaskContext, meta, _ []byte, out mapreduce.Emitter) error {
	index := binary.BigEndian.Uint64(meta) // first of the range = the map's index
	r := rand.New(rand.NewPCG(m.seed, splitmix64(index)))
	words := wordList()
	sentence := func(dst []byte, min, max int) []byte {
		n := min + r.IntN(max-min+1)
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, words[r.IntN(len(words))]...)
		}
		return dst
	}
	for written := int64(0); written < m.perMap; {
		m.key = sentence(m.key[:0], 5, 10)
		m.value = sentence(m.value[:0], 20, 100)
		if err := out.Emit(m.key, m.value); err != nil {
			return err
		}
		written += int64(len(m.key) + len(m.value) + 2)
	}
	return nil
}

// wordList is RandomTextWriter's vocabulary: 1000 distinct pronounceable
// words made from syllables by a fixed-seed generator (our own list, so
// the text is the same on every machine and every run).
var wordList = sync.OnceValue(func() []string {
	onsets := []string{"b", "br", "c", "ch", "d", "dr", "f", "g", "gl", "h", "j", "k", "l", "m", "n",
		"p", "pl", "qu", "r", "s", "sh", "st", "t", "th", "tr", "v", "w", "z"}
	nuclei := []string{"a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"}
	codas := []string{"", "", "", "n", "r", "s", "t", "l", "m", "ck", "nd", "st"}
	r := rand.New(rand.NewPCG(2026, 5))
	seen := map[string]bool{}
	var out []string
	for len(out) < 1000 {
		var w []byte
		for s := 1 + r.IntN(4); s > 0; s-- {
			w = append(w, onsets[r.IntN(len(onsets))]...)
			w = append(w, nuclei[r.IntN(len(nuclei))]...)
			w = append(w, codas[r.IntN(len(codas))]...)
		}
		if !seen[string(w)] {
			seen[string(w)] = true
			out = append(out, string(w))
		}
	}
	return out
})
