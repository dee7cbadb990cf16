package doctor

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints a report: one line per check, then why and the fix of
// each that is not ok.
func WriteTable(w io.Writer, r Report) error {
	fmt.Fprintf(w, "host %s\n", r.Host)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "status\tcheck\tvalue")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.ToUpper(string(res.Status)), res.Title, res.Value)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, res := range r.Results {
		if res.Status != Warn && res.Status != Fail {
			continue
		}
		fmt.Fprintf(w, "\n%s %s: %s\n  why: %s\n", strings.ToUpper(string(res.Status)), res.Title, res.Value, res.Why)
		if res.FixCmd != "" {
			fmt.Fprintf(w, "  fix: %s\n", res.FixCmd)
		}
	}
	c := r.Counts()
	_, err := fmt.Fprintf(w, "\n%d ok, %d warn, %d fail, %d skipped\n", c[OK], c[Warn], c[Fail], c[Skip])
	return err
}

// Counts tallies the results by status.
func (r Report) Counts() map[Status]int {
	c := map[Status]int{}
	for _, res := range r.Results {
		c[res.Status]++
	}
	return c
}
