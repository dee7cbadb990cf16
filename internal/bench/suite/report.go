package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"smarth/internal/atomicfile"
	"sort"
	"strings"
	"text/tabwriter"
)

// Table prints the elapsed wall time per phase, with each phase's key
// figures.
func (r *Results) Table(w io.Writer) {
	title := "benchmark suite"
	if r.Label != "" {
		title += " " + r.Label
	}
	fmt.Fprintf(w, "%s (scale %s, started %s)\n", title, r.Scale, r.Started.Format("2006-01-02 15:04:05"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tELAPSED (s)\tJOB\tDETAILS")
	for _, p := range r.Phases {
		el := fmt.Sprintf("%.2f", p.Seconds)
		if p.Skipped {
			el = "-"
		}
		details := p.details()
		if p.Error != "" {
			details = "FAILED: " + p.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, el, p.JobID, details)
	}
	fmt.Fprintf(tw, "total\t%.2f\t\t\n", r.Seconds)
	tw.Flush()
}

// details renders the metrics that matter for a phase.
func (p Phase) details() string {
	m := p.Metrics
	switch p.Name {
	case DFSIOWrite, DFSIORead:
		return fmt.Sprintf("%.0f MB, throughput %.2f MB/s, avg IO rate %.2f MB/s (sd %.2f)",
			m["mbytes"], m["throughput_mb_s"], m["average_io_rate_mb_s"], m["io_rate_std_dev"])
	case TeraGen:
		return fmt.Sprintf("%.0f rows", m["rows"])
	case TeraValidate:
		return fmt.Sprintf("%.0f rows, %.0f misordered, checksum matches TeraGen", m["rows"], m["misordered"])
	case Pi:
		return fmt.Sprintf("estimate %.10f", m["estimate"])
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %g", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// WriteJSON writes the results to path atomically (atomicfile).
func (r *Results) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// ReadJSON reads results written by WriteJSON.
func ReadJSON(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a suite result: %w", path, err)
	}
	return &r, nil
}

// Row compares one phase across two runs.
type Row struct {
	Phase    string  `json:"phase"`
	ASeconds float64 `json:"a_seconds"`
	BSeconds float64 `json:"b_seconds"`
	// Speedup is A's time over B's: above 1, B was faster.
	Speedup float64 `json:"speedup"`
	// Improvement is B's time saved, in percent of A's.
	Improvement float64 `json:"improvement_pct"`
}

// Compare lines up the phases both runs completed, in suite order, as the
// paper's Table III does for rpcbind off (a) and on (b).
func Compare(a, b *Results) []Row {
	var rows []Row
	for _, name := range AllPhases {
		pa, okA := a.Phase(name)
		pb, okB := b.Phase(name)
		if !okA || !okB || pa.Error != "" || pb.Error != "" || pa.Seconds <= 0 || pb.Seconds <= 0 {
			continue
		}
		rows = append(rows, Row{Phase: name, ASeconds: pa.Seconds, BSeconds: pb.Seconds,
			Speedup: pa.Seconds / pb.Seconds, Improvement: (pa.Seconds - pb.Seconds) / pa.Seconds * 100})
	}
	return rows
}

// PrintCompare prints Compare's table.
func PrintCompare(w io.Writer, a, b *Results) {
	la, lb := a.Label, b.Label
	if la == "" {
		la = "A"
	}
	if lb == "" {
		lb = "B"
	}
	if la == lb {
		la, lb = la+" (A)", lb+" (B)"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "PHASE\t%s (s)\t%s (s)\tSPEEDUP\tIMPROVEMENT\n", la, lb)
	for _, r := range Compare(a, b) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2fx\t%+.1f%%\n", r.Phase, r.ASeconds, r.BSeconds, r.Speedup, r.Improvement)
	}
	tw.Flush()
}
