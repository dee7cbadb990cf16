package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"smarth/internal/units"
	"text/tabwriter"
	"time"

	"smarth/internal/bench"
)

// RunRecord is one timed upload with its explanation.
type RunRecord struct {
	Round     int       `json:"round"`
	Placement string    `json:"placement"`
	Mode      string    `json:"mode"`
	Client    string    `json:"client"`
	Seconds   float64   `json:"seconds"`
	MiBps     float64   `json:"mib_per_s"`
	Start     time.Time `json:"start"`
	Load      float64   `json:"load1"` // the machine's load average when the phase's uploads began
	Diag      Diagnosis `json:"diagnosis"`
}

// Cell summarises the runs of one placement and mode.
type Cell struct {
	Placement string `json:"placement"`
	Mode      string `json:"mode"`
	Label     string `json:"label,omitempty"` // "HDFS" or "SMARTH"
	bench.Times
	// VsBaselinePct is the throughput gain over the baseline cell (HDFS:
	// classic writes, rack-aware placement), (baseline mean / mean - 1) x 100.
	VsBaselinePct *float64 `json:"vs_baseline_pct,omitempty"`
	// PctOfLink is MiBps as a share of the client's link rate.
	PctOfLink *float64 `json:"pct_of_link,omitempty"`
	// Means of the runs' diagnoses.
	FirstHopMbit float64 `json:"first_hop_mbit"`
	SlowFirstPct float64 `json:"slow_first_pct"` // of the blocks
	MeanOpen     float64 `json:"mean_open"`
	BusyPct      float64 `json:"busy_pct"`
	TailSec      float64 `json:"tail_s"`
	Copies       float64 `json:"copies"` // block copies between datanodes per run
}

// Report is the result of a scenario: the table, the JSON file and the
// plot are all drawn from it.
type Report struct {
	Scenario    string    `json:"scenario"`
	Description string    `json:"description,omitempty"`
	Time        time.Time `json:"time"`
	Size        int64     `json:"size_bytes"`
	BlockSize   int64     `json:"block_size"`
	Replication int       `json:"replication"`
	Warmup      int64     `json:"warmup_bytes,omitempty"`
	// Client settings changed for the experiment (0: the defaults).
	LocalThreshold float64 `json:"local_threshold,omitempty"`
	MaxPipelines   int     `json:"max_pipelines,omitempty"`
	// DropCaches: the page cache was emptied before each upload.
	DropCaches bool     `json:"drop_caches,omitempty"`
	Modes      []string `json:"modes"`
	Placements []string `json:"placements"`
	ClientHost string   `json:"client_host"`
	// LinkRateBits is the client's link rate (bit/s), the III.D bound;
	// 0 on loopback, where nothing limits it.
	LinkRateBits float64     `json:"link_rate_bits_per_s,omitempty"`
	LinkBound    string      `json:"link_bound,omitempty"`
	BoundMiBps   float64     `json:"bound_mib_per_s,omitempty"`
	Baseline     string      `json:"baseline,omitempty"` // "rackaware/classic"
	Runs         []RunRecord `json:"runs"`
	Cells        []Cell      `json:"cells"`
	LoadMin      float64     `json:"load1_min"`
	LoadMax      float64     `json:"load1_max"`
}

// mib is 2^20 bytes, the unit of every throughput figure.
const mib = 1 << 20

// DataShare is the most of a link's rate that can carry file data: TCP/IP
// and Ethernet headers take 66 of every 1514 bytes on the wire (MSS 1448),
// and every 512-byte chunk carries a 4-byte CRC32C. Packet headers (a few
// dozen bytes per 64 KiB) are left out.
const DataShare = 1448.0 / 1514.0 * 512.0 / 516.0

func (r *Report) setLayout(l Layout) {
	r.ClientHost, r.LinkRateBits, r.LinkBound = l.ClientHost, l.LinkRateBits, l.LinkBound
	if l.LinkRateBits > 0 {
		r.BoundMiBps = l.LinkRateBits / 8 / mib
	}
}

// Labels of the two cells the paper compares.
const (
	LabelHDFS   = "HDFS"
	LabelSMARTH = "SMARTH"
	// LabelPaper is SMARTH's Algorithms 1 and 2 exactly as printed.
	LabelPaper = "paper"
)

func label(placement, mode string) string {
	switch {
	case placement == "rackaware" && mode == "classic":
		return LabelHDFS
	case placement == "speedaware" && mode == "multipipeline":
		return LabelSMARTH
	case placement == "speedaware-paper" && mode == "multipipeline-paper":
		return LabelPaper
	}
	return ""
}

// Summarize fills r.Cells from r.Runs: one cell per placement and mode,
// placements in the order asked, modes likewise.
func (r *Report) Summarize() {
	r.Cells = nil
	r.LoadMin, r.LoadMax = math.Inf(1), 0
	for _, run := range r.Runs {
		r.LoadMin, r.LoadMax = min(r.LoadMin, run.Load), max(r.LoadMax, run.Load)
	}
	if len(r.Runs) == 0 {
		r.LoadMin = 0
	}
	for _, pl := range r.Placements {
		for _, m := range r.Modes {
			var runs []RunRecord
			for _, run := range r.Runs {
				if run.Placement == pl && run.Mode == m {
					runs = append(runs, run)
				}
			}
			if len(runs) > 0 {
				r.Cells = append(r.Cells, r.cell(pl, m, runs))
			}
		}
	}
	base := r.baseline()
	r.Baseline = ""
	if base != nil {
		r.Baseline = base.Placement + "/" + base.Mode
	}
	var baseTimes *bench.Times
	if base != nil {
		baseTimes = &base.Times
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		c.VsBaselinePct, c.PctOfLink = c.Against(baseTimes, r.BoundMiBps)
	}
}

// baseline is the HDFS cell, else the first classic cell.
func (r *Report) baseline() *Cell {
	for i := range r.Cells {
		if r.Cells[i].Label == LabelHDFS {
			return &r.Cells[i]
		}
	}
	for i := range r.Cells {
		if r.Cells[i].Mode == "classic" {
			return &r.Cells[i]
		}
	}
	return nil
}

func (r *Report) cell(pl, mode string, runs []RunRecord) Cell {
	secs := make([]float64, len(runs))
	for i, run := range runs {
		secs[i] = run.Seconds
	}
	c := Cell{Placement: pl, Mode: mode, Label: label(pl, mode), Times: bench.TimesOf(secs, r.Size)}
	var blocks, slow int
	for _, run := range runs {
		c.FirstHopMbit += run.Diag.FirstHopMbit / float64(len(runs))
		c.MeanOpen += run.Diag.MeanOpen / float64(len(runs))
		c.BusyPct += run.Diag.BusyPct / float64(len(runs))
		c.TailSec += run.Diag.TailSec / float64(len(runs))
		c.Copies += float64(run.Diag.Copies) / float64(len(runs))
		blocks += run.Diag.Blocks
		slow += run.Diag.SlowFirst
	}
	if blocks > 0 {
		c.SlowFirstPct = float64(slow) / float64(blocks) * 100
	}
	return c
}

// PrintTable writes the summary: one row per placement and mode.
func (r *Report) PrintTable(w io.Writer) {
	fmt.Fprintf(w, "scenario %s: put of %s, replication %d, block size %s", r.Scenario, sizeText(r.Size), r.Replication, sizeText(r.BlockSize))
	if r.Warmup > 0 {
		fmt.Fprintf(w, ", warm-up %s per client", sizeText(r.Warmup))
	}
	if r.LocalThreshold > 0 {
		fmt.Fprintf(w, ", Algorithm 2 threshold %g", r.LocalThreshold)
	}
	if r.MaxPipelines > 0 {
		fmt.Fprintf(w, ", at most %d pipelines", r.MaxPipelines)
	}
	if r.DropCaches {
		fmt.Fprintf(w, ", page cache emptied before each upload")
	}
	fmt.Fprintf(w, "; load average %.1f-%.1f\n", r.LoadMin, r.LoadMax)
	if r.LinkRateBits > 0 {
		fmt.Fprintf(w, "client %s, link %.0f Mbit/s = %.1f MiB/s (%s); file data can use at most %.1f MiB/s of it\n",
			r.ClientHost, r.LinkRateBits/1e6, r.BoundMiBps, r.LinkBound, r.BoundMiBps*DataShare)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "placement\tmode\t\truns\tmean s\tmin s\tmax s\tMiB/s\tbest\tvs HDFS\t% of link\t1st hop Mbit/s\tslow 1st\topen\tbusy\ttail s\tcopies\t")
	for _, c := range r.Cells {
		vs, link := "-", "-"
		if c.VsBaselinePct != nil {
			vs = fmt.Sprintf("%+.1f%%", *c.VsBaselinePct)
		}
		if c.PctOfLink != nil {
			link = fmt.Sprintf("%.0f%%", *c.PctOfLink)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%s\t%s\t%.0f\t%.0f%%\t%.1f\t%.0f%%\t%.2f\t%.1f\t\n",
			c.Placement, c.Mode, c.Label, c.Runs, c.Mean, c.Min, c.Max, c.MiBps, c.BestMiBps, vs, link,
			c.FirstHopMbit, c.SlowFirstPct, c.MeanOpen, c.BusyPct, c.TailSec, c.Copies)
	}
	tw.Flush()
	fmt.Fprintln(w, "1st hop: rate into the first datanodes; slow 1st: blocks begun on a datanode the client reaches below its link rate;")
	fmt.Fprintln(w, "open: pipelines open as a block starts; busy: share of the run the client was sending; tail: last byte sent to file complete;")
	fmt.Fprintln(w, "copies: blocks copied between datanodes during a run (re-replication, pipeline repair)")
}

// WriteJSON saves the report.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadReport loads a report saved by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// sizeText prints a size exactly (units.FormatSizeExact: "16 MiB"); 0 is
// a block size left to the topology's default.
func sizeText(n int64) string {
	if n <= 0 {
		return "default"
	}
	return units.FormatSizeExact(n)
}
