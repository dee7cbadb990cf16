package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"text/tabwriter"

	"smarth/internal/bench/ab"
)

// AppRun is one completion of one app.
type AppRun struct {
	Label      string  `json:"label"`
	App        string  `json:"app"`
	Run        int     `json:"run"` // 0 = the cold first run
	StartS     float64 `json:"start_s"`
	Seconds    float64 `json:"seconds"`
	Maps       int64   `json:"maps"`
	CacheLocal int64   `json:"cache_local_maps"`
	DataLocal  int64   `json:"data_local_maps"`
	RackLocal  int64   `json:"rack_local_maps"`
	Error      string  `json:"error,omitempty"`
}

// Sample is the namenode's cache state at one moment of a run: cached
// blocks per app (Fig. 13/14) and the cumulative hits and misses.
type Sample struct {
	Run    int              `json:"run"`
	T      float64          `json:"t_s"` // since the run started
	Blocks map[string]int64 `json:"cached_blocks"`
	Hits   int64            `json:"hits"`
	Misses int64            `json:"misses"`
}

// ComboResult is every run of one policy combination.
type ComboResult struct {
	Combo   Combo    `json:"combo"`
	Apps    []AppRun `json:"apps"`
	Samples []Sample `json:"samples,omitempty"`
	// Hits and Misses per run (index = run), from the namenode's counters.
	Hits   []int64 `json:"hits"`
	Misses []int64 `json:"misses"`
	// Affinity is the namenode's learned cache affinity per app at the
	// end of each run (index = run), as `smarth cache stats` shows it:
	// what BG was steered by, beside how it did.
	Affinity [][]LearnedAffinity `json:"affinity,omitempty"`
	Error    string              `json:"error,omitempty"`
}

// LearnedAffinity is one app's learned cache affinity and the samples behind it.
type LearnedAffinity struct {
	App      string  `json:"app"`
	Affinity float64 `json:"affinity"`
	Hot      int32   `json:"hot_samples"`
	Cold     int32   `json:"cold_samples"`
	Used     bool    `json:"used"`
}

// Result is a whole `smarth bench workload` run.
type Result struct {
	Workload string        `json:"workload"`
	Labels   []string      `json:"labels"`
	Combos   []ComboResult `json:"combos"`
}

// Row is one app under one combination: mean seconds of the cold first
// run and of the warm runs after it, and the warm mean normalized to the
// no-cache combination's warm mean (1 = as fast as no cache, lower is
// better), as Fig. 11 and 12 plot.
type Row struct {
	Combo      string
	Label      string
	ColdS      float64
	WarmS      float64
	Norm       float64 // 0 when there is no baseline
	ColdNorm   float64
	CacheLocal float64 // share of maps that were cache-local, warm runs
	WarmRuns   int
	// Failed counts the app's runs that failed, cold or warm: they are
	// in no mean, so the table shows them rather than a silently
	// shorter sample.
	Failed int
	// Ratio is the geometric mean over warm rounds of the app's time
	// under this combination over the baseline's in the same round (the
	// combinations run interleaved, round by round), with its 95%
	// interval over the Pairs rounds in which both runs succeeded (no
	// interval below 2).
	Ratio, RatioLo, RatioHi float64
	Pairs                   int
}

// Baseline is the combination every other one is normalized to.
const Baseline = "nocache"

// Rows computes the table: for each combination and label, cold and warm
// means, normalization to the baseline, and the cache-local share.
func (r *Result) Rows() []Row {
	base := map[string][2]float64{}
	for _, c := range r.Combos {
		if c.Combo.Name == Baseline {
			for _, l := range r.Labels {
				cold, warm, _ := means(c.Apps, l)
				base[l] = [2]float64{cold, warm}
			}
		}
	}
	var baseRuns []AppRun
	for _, c := range r.Combos {
		if c.Combo.Name == Baseline {
			baseRuns = c.Apps
		}
	}
	var rows []Row
	for _, c := range r.Combos {
		for _, l := range r.Labels {
			cold, warm, n := means(c.Apps, l)
			row := Row{Combo: c.Combo.Name, Label: l, ColdS: cold, WarmS: warm, WarmRuns: n, CacheLocal: cacheLocalShare(c.Apps, l), Failed: failures(c.Apps, l)}
			if b, ok := base[l]; ok {
				row.Norm, row.ColdNorm = ratio(warm, b[1]), ratio(cold, b[0])
			}
			if baseRuns != nil {
				ratios := roundRatios(c.Apps, baseRuns, l)
				row.Pairs = len(ratios)
				row.Ratio, row.RatioLo, row.RatioHi = ab.RatioInterval(ratios, 0.95)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// roundRatios pairs label's warm runs with the baseline's of the same
// round: one ratio per round in which both succeeded. A round with more
// than one completion of the label (the dynamic workload) pairs nothing.
func roundRatios(runs, base []AppRun, label string) []float64 {
	byRound := func(rs []AppRun) map[int]float64 {
		out, n := map[int]float64{}, map[int]int{}
		for _, a := range rs {
			if a.Label == label && a.Run > 0 {
				n[a.Run]++
				if a.Error == "" && a.Seconds > 0 {
					out[a.Run] = a.Seconds
				}
			}
		}
		for run, k := range n {
			if k > 1 {
				delete(out, run)
			}
		}
		return out
	}
	mine, theirs := byRound(runs), byRound(base)
	var out []float64
	for _, run := range slices.Sorted(maps.Keys(mine)) {
		if b, ok := theirs[run]; ok {
			out = append(out, mine[run]/b)
		}
	}
	return out
}

func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// means are the mean seconds of label's successful completions in run 0
// (cold) and in later runs (warm), and how many warm ones there were.
func means(runs []AppRun, label string) (cold, warm float64, nWarm int) {
	var sc, sw float64
	var nc int
	for _, a := range runs {
		if a.Label != label || a.Error != "" {
			continue
		}
		if a.Run == 0 {
			sc, nc = sc+a.Seconds, nc+1
		} else {
			sw, nWarm = sw+a.Seconds, nWarm+1
		}
	}
	if nc > 0 {
		cold = sc / float64(nc)
	}
	if nWarm > 0 {
		warm = sw / float64(nWarm)
	}
	return cold, warm, nWarm
}

// failures counts label's runs that ended in an error.
func failures(runs []AppRun, label string) int {
	n := 0
	for _, a := range runs {
		if a.Label == label && a.Error != "" {
			n++
		}
	}
	return n
}

func cacheLocalShare(runs []AppRun, label string) float64 {
	var maps, cl int64
	for _, a := range runs {
		if a.Label == label && a.Run > 0 && a.Error == "" {
			maps, cl = maps+a.Maps, cl+a.CacheLocal
		}
	}
	if maps == 0 {
		return 0
	}
	return float64(cl) / float64(maps)
}

// Average is a combination's mean normalized warm runtime over the labels
// that have one (Fig. 11's bar for one workload).
func Average(rows []Row, combo string) float64 {
	var s float64
	var n int
	for _, r := range rows {
		if r.Combo == combo && r.Norm > 0 {
			s, n = s+r.Norm, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// HitRatio is hits / (hits + misses) over the warm runs (every run but
// the first), from the namenode's counters.
func (c *ComboResult) HitRatio() float64 {
	var h, m int64
	for i := 1; i < len(c.Hits) && i < len(c.Misses); i++ {
		h, m = h+c.Hits[i], m+c.Misses[i]
	}
	if h+m == 0 {
		return 0
	}
	return float64(h) / float64(h+m)
}

// PrintTable writes the per-app table and the per-combination summary.
func (r *Result) PrintTable(w io.Writer) {
	rows := r.Rows()
	fmt.Fprintf(w, "workload %s: warm = runs after the first (caches warmed up), normalized to %s (lower is better)\n", r.Workload, Baseline)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "combo\tapp\tcold s\twarm s\twarm runs\tfailed runs\tnormalized\tcold normalized\tratio/round (95% CI, rounds)\tcache-local maps\t")
	failed := 0
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%d\t%d\t%s\t%s\t%s\t%.0f%%\t\n", row.Combo, row.Label, row.ColdS, row.WarmS, row.WarmRuns,
			row.Failed, normText(row.Norm), normText(row.ColdNorm), ratioText(row), row.CacheLocal*100)
		failed += row.Failed
	}
	tw.Flush()
	if failed > 0 {
		fmt.Fprintf(w, "%d app runs FAILED: their times are in no mean above; compare the combinations with that in mind\n", failed)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "combo\tpolicy\tscheduler\tmean normalized\tvs nocache\twarm hit ratio\t")
	for _, c := range r.Combos {
		avg := Average(rows, c.Combo.Name)
		gain := "-"
		if avg > 0 {
			gain = fmt.Sprintf("%+.1f%%", (1/avg-1)*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.0f%%\t\n", c.Combo.Name, c.Combo.Policy, c.Combo.Scheduler, normText(avg), gain, c.HitRatio()*100)
	}
	tw.Flush()
	for _, c := range r.Combos {
		if c.Error != "" {
			fmt.Fprintf(w, "%s failed: %s\n", c.Combo.Name, c.Error)
		}
	}
}

// ratioText is a row's per-round ratio with its interval, "-" without
// pairs.
func ratioText(r Row) string {
	switch {
	case r.Pairs == 0:
		return "-"
	case r.Pairs < 2:
		return fmt.Sprintf("%.3f (1 round)", r.Ratio)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f] n=%d", r.Ratio, r.RatioLo, r.RatioHi, r.Pairs)
}

func normText(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// WriteJSON saves the result.
func (r *Result) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// appsOf lists the app names that appear in samples, sorted.
func appsOf(samples []Sample) []string {
	var out []string
	for _, s := range samples {
		for a := range s.Blocks {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}
