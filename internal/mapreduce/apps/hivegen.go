package apps

import (
	"context"
	"path"
	"strconv"
	"sync"

	"smarth/internal/mapreduce"
)

// The two tables of the Pavlo et al. benchmark (SIGMOD 2009), which seed
// 003's Aggregation and Join queries read, as '|'-separated text lines:
//
//	rankings(pageURL, pageRank, avgDuration)
//	uservisits(sourceIP, destURL, visitDate, adRevenue, userAgent,
//	           countryCode, languageCode, searchWord, duration)
//
// Every row is a function of (seed, table, row number), so the data do not
// depend on the number of maps. destURL is the pageURL of a uniformly
// chosen page, so every visit joins with exactly one ranking.

const hiveSep = '|'

// HiveGen generates both tables under --output: rankings/ with --pages rows
// and uservisits/ with --visits rows.
type HiveGen struct{}

var (
	_ mapreduce.App    = HiveGen{}
	_ mapreduce.Driver = HiveGen{}
)

func (HiveGen) Name() string { return "hivegen" }
func (HiveGen) Description() string {
	return "generate the rankings and uservisits tables for aggregation and join"
}

func (HiveGen) Params() []mapreduce.Param {
	return []mapreduce.Param{
		{Name: ParamOutput, Help: "directory to hold rankings/ and uservisits/"},
		{Name: "pages", Default: "10000", Help: "rows of rankings"},
		{Name: "visits", Default: "100000", Help: "rows of uservisits"},
		{Name: "maps", Default: "2", Help: "map tasks per table"},
		{Name: "seed", Default: "1", Help: "random seed"},
	}
}

// Build returns the rankings job, so the parameters are checked.
func (h HiveGen) Build(given map[string]string) (*mapreduce.Job, error) {
	if _, err := params(given).required(ParamOutput); err != nil {
		return nil, err
	}
	return HiveTable{}.Build(h.tableParams(given, "rankings"))
}

func (HiveGen) tableParams(given map[string]string, table string) map[string]string {
	return copyParams(given, "table", table, ParamOutput, path.Join(given[ParamOutput], table))
}

// Drive writes rankings, then uservisits.
func (h HiveGen) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	if _, err := h.Build(given); err != nil {
		return err
	}
	for _, t := range []string{"rankings", "uservisits"} {
		if _, err := runStage(ctx, r, HiveTable{}.Name(), h.tableParams(given, t)); err != nil {
			return err
		}
	}
	return nil
}

// HiveTable writes one of the two tables (map-only).
type HiveTable struct{}

var _ mapreduce.App = HiveTable{}

func (HiveTable) Name() string { return "hivegen.table" }
func (HiveTable) Description() string {
	return "generate one table of hivegen (rankings or uservisits)"
}

func (HiveTable) Params() []mapreduce.Param {
	return append(HiveGen{}.Params(), mapreduce.Param{Name: "table", Help: "rankings or uservisits"})
}

func (h HiveTable) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(h.Params(), given)
	job, err := newJob(h.Name(), p, false, -1)
	if err != nil {
		return nil, err
	}
	pages, err := p.int("pages", 1, 1<<40)
	if err != nil {
		return nil, err
	}
	visits, err := p.int("visits", 0, 1<<40)
	if err != nil {
		return nil, err
	}
	maps, seed, err := p.mapsAndSeed()
	if err != nil {
		return nil, err
	}
	g := &hiveRows{pages: uint64(pages), seed: uint64(seed)}
	rows := visits
	switch p.str("table") {
	case "rankings":
		rows = pages
		job.NewMapper = func() mapreduce.Mapper { return &hiveMapper{gen: g.ranking} }
	case "uservisits":
		job.NewMapper = func() mapreduce.Mapper { return &hiveMapper{gen: g.visit} }
	default:
		return nil, errParam("table", p.str("table"), "rankings or uservisits")
	}
	job.Name = h.Name() + "-" + p.str("table")
	job.InputFormat = rangeInput{total: rows, maps: int(min(maps, max(rows, 1)))}
	return job, nil
}

// hiveMapper writes the rows of its range as lines (key = the row, no
// value).
type hiveMapper struct {
	gen func(dst []byte, row uint64) []byte
	buf []byte
}

func (m *hiveMapper) Map(_ mapreduce.TaskContext, meta, _ []byte, out mapreduce.Emitter) error {
	first, count, err := decodeRange(meta)
	if err != nil {
		return err
	}
	for i := first; i < first+count; i++ {
		m.buf = m.gen(m.buf[:0], uint64(i))
		if err := out.Emit(m.buf, nil); err != nil {
			return err
		}
	}
	return nil
}

type hiveRows struct {
	pages, seed uint64
}

// draw is the j-th random number of a row of a table.
func (h *hiveRows) draw(table, row, j uint64) uint64 {
	return splitmix64(h.seed ^ splitmix64(table<<56^row) ^ j*0x632be59bd9b4e019)
}

func pageURL(dst []byte, page uint64) []byte {
	w := wordList()
	dst = append(dst, "http://"...)
	dst = append(dst, w[page%uint64(len(w))]...)
	dst = append(dst, ".example.com/"...)
	dst = append(dst, w[(page/7)%uint64(len(w))]...)
	dst = append(dst, '/')
	dst = strconv.AppendUint(dst, page, 36)
	return append(dst, ".html"...)
}

func (h *hiveRows) ranking(dst []byte, row uint64) []byte {
	dst = pageURL(dst, row)
	dst = append(dst, hiveSep)
	dst = strconv.AppendUint(dst, 1+h.draw(1, row, 0)%1000, 10) // pageRank
	dst = append(dst, hiveSep)
	return strconv.AppendUint(dst, 1+h.draw(1, row, 1)%100, 10) // avgDuration
}

var (
	userAgents = []string{"Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (Windows NT 10.0; Win64; x64)",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0)", "Opera/9.80 (Windows NT 6.1)", "curl/8.5.0",
		"Wget/1.21.4", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", "Lynx/2.9.0"}
	countries = []string{"USA", "DEU", "FRA", "KOR", "IND", "BRA", "CHN", "JPN", "GBR", "CAN", "PAK", "MYS"}
	languages = []string{"en-US", "de-DE", "fr-FR", "ko-KR", "hi-IN", "pt-BR", "zh-CN", "ja-JP", "en-GB", "ur-PK"}
	// visitDates are the days of 1999 and 2000, "YYYY-MM-DD".
	visitDates = sync.OnceValue(func() []string {
		var out []string
		days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
		for y := 1999; y <= 2000; y++ {
			for m, n := range days {
				if m == 1 && y == 2000 {
					n = 29
				}
				for d := 1; d <= n; d++ {
					b := strconv.AppendInt(nil, int64(y), 10)
					b = append(b, '-', byte('0'+(m+1)/10), byte('0'+(m+1)%10), '-', byte('0'+d/10), byte('0'+d%10))
					out = append(out, string(b))
				}
			}
		}
		return out
	})
)

func (h *hiveRows) visit(dst []byte, row uint64) []byte {
	ip := h.draw(2, row, 0)
	for i := 0; i < 4; i++ {
		if i > 0 {
			dst = append(dst, '.')
		}
		octet := (ip >> (8 * i)) & 0xff
		if i == 0 {
			octet = 1 + octet%223 // a unicast first octet
		}
		dst = strconv.AppendUint(dst, octet, 10)
	}
	dst = append(dst, hiveSep)
	dst = pageURL(dst, h.draw(2, row, 1)%h.pages)
	dst = append(dst, hiveSep)
	dates := visitDates()
	dst = append(dst, dates[h.draw(2, row, 2)%uint64(len(dates))]...)
	dst = append(dst, hiveSep)
	dst = appendCents(dst, int64(h.draw(2, row, 3)%100000)) // adRevenue < 1000.00
	dst = append(dst, hiveSep)
	dst = append(dst, userAgents[h.draw(2, row, 4)%uint64(len(userAgents))]...)
	dst = append(dst, hiveSep)
	dst = append(dst, countries[h.draw(2, row, 5)%uint64(len(countries))]...)
	dst = append(dst, hiveSep)
	dst = append(dst, languages[h.draw(2, row, 6)%uint64(len(languages))]...)
	dst = append(dst, hiveSep)
	w := wordList()
	dst = append(dst, w[h.draw(2, row, 7)%uint64(len(w))]...)
	dst = append(dst, hiveSep)
	return strconv.AppendUint(dst, 1+h.draw(2, row, 8)%1000, 10) // duration
}
