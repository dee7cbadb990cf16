package testcluster

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
)

// logKeep is how many lines of each daemon's log are kept to show when a
// test fails.
const logKeep = 200

// logRing keeps the last logKeep lines written to it and, when verbose,
// copies them to stderr with the daemon's name in front.
type logRing struct {
	name    string
	verbose bool

	mu      sync.Mutex // guards lines, next, partial
	lines   []string
	next    int
	partial []byte
}

func (r *logRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		line := string(r.partial[:i])
		r.partial = r.partial[i+1:]
		if r.verbose {
			io.WriteString(os.Stderr, r.name+" | "+line+"\n")
		}
		if len(r.lines) < logKeep {
			r.lines = append(r.lines, line)
		} else {
			r.lines[r.next] = line
			r.next = (r.next + 1) % logKeep
		}
	}
	return len(p), nil
}

// tail returns the kept lines, oldest first.
func (r *logRing) tail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(append([]string{}, r.lines[r.next:]...), r.lines[:r.next]...)
	return strings.Join(out, "\n")
}

// logs owns the logs of one cluster's daemons.
type logs struct {
	verbose bool
	mu      sync.Mutex // guards rings
	rings   []*logRing
}

func newLogs(verbose bool) *logs {
	return &logs{verbose: verbose || os.Getenv("SMARTH_TEST_LOG") == "1"}
}

// logger returns a logger for a daemon (or the client) called name.
func (l *logs) logger(name string) *slog.Logger {
	r := &logRing{name: name, verbose: l.verbose}
	l.mu.Lock()
	l.rings = append(l.rings, r)
	l.mu.Unlock()
	return slog.New(slog.NewTextHandler(r, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dumpOnFailure shows every kept log in the test output if t failed.
func (l *logs) dumpOnFailure(t testing.TB) {
	if !t.Failed() || l.verbose {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.rings {
		if s := r.tail(); s != "" {
			t.Logf("--- last %d log lines of %s:\n%s", logKeep, r.name, s)
		}
	}
}
