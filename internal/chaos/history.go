package chaos

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
)

// Event is one operation the run did on a file (or job), with its outcome:
// what a lost promise is printed with, so a loss can be traced to the
// operations and the faults around it.
type Event struct {
	At      time.Time
	Op      string // put, get, rename, delete, job, or behind (a test's own change)
	Path    string // the name acted on; a rename's is "old -> new"
	Outcome string // "ok", or the error
}

func (e Event) String() string {
	return fmt.Sprintf("%s %-6s %s: %s", e.At.Format("15:04:05.000"), e.Op, e.Path, e.Outcome)
}

// Loss is a broken promise (or, in Report.Unverifiable, one that could
// not be checked) with the history of the file or job it was about.
type Loss struct {
	What    string
	History []Event
	Dropped int // events left out of History (the middle of a long one)
}

func (l Loss) String() string { return l.What }

// print writes the loss and its history, one event a line, with the
// faults injected from the history's first event to its last interleaved
// (a loss is read against the kills around it).
func (l Loss) print(w io.Writer, tag string, faults []Fault) {
	fmt.Fprintf(w, "  %s %s\n", tag, l.What)
	var from, to time.Time
	if len(l.History) > 0 {
		from, to = l.History[0].At, l.History[len(l.History)-1].At
	}
	fi := 0
	flush := func(until time.Time) {
		for ; fi < len(faults) && !faults[fi].At.After(until); fi++ {
			if f := faults[fi]; !f.At.Before(from) {
				fmt.Fprintf(w, "      %s fault  %s %s (pid %d), back after %s\n", f.At.Format("15:04:05.000"), cmp.Or(f.Kind, "SIGKILL"), f.Daemon, f.PID, f.Down.Round(10*time.Millisecond))
			}
		}
	}
	for i, e := range l.History {
		if i == 1 && l.Dropped > 0 {
			fmt.Fprintf(w, "      ... %d events left out\n", l.Dropped)
		}
		flush(e.At)
		fmt.Fprintf(w, "      %s\n", e)
	}
	flush(to)
}

// history is a bounded record of a file's operations: the first (its put)
// and the latest keepEvents, so a long run's memory stays bounded.
type history struct {
	events  []Event
	dropped int
}

const keepEvents = 40

func (h *history) add(op, p string, err error) {
	e := Event{At: time.Now(), Op: op, Path: p, Outcome: "ok"}
	if err != nil {
		e.Outcome = err.Error()
	}
	h.events = append(h.events, e)
	if len(h.events) > keepEvents+1 {
		h.events = append(h.events[:1], h.events[2:]...)
		h.dropped++
	}
}

func (h *history) loss(what string) Loss {
	return Loss{What: what, History: append([]Event(nil), h.events...), Dropped: h.dropped}
}

// notApplied reports whether a failed namenode call certainly did not
// happen: the connection was refused (the request never left; the client
// retries only those, so a refusal is the last attempt's and every earlier
// one's), or the namenode refused it in safe mode. Any other failure (the
// connection broke after sending, a timeout) leaves the call in doubt.
func notApplied(err error) bool {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "is in safe mode")
}
