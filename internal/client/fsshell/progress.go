package fsshell

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// ProgressMode says when put and get draw a progress bar on Err.
type ProgressMode string

const (
	ProgressAuto   ProgressMode = "auto"   // when Err is a terminal and the file is large
	ProgressAlways ProgressMode = "always" // for every file
	ProgressNever  ProgressMode = "never"
)

// ParseProgress accepts auto, always, never.
func ParseProgress(s string) (ProgressMode, error) {
	switch m := ProgressMode(s); m {
	case ProgressAuto, ProgressAlways, ProgressNever:
		return m, nil
	case "":
		return ProgressAuto, nil
	}
	return "", fmt.Errorf("--progress must be auto, always or never, not %q", s)
}

// largeFile is the size from which ProgressAuto draws a bar: smaller
// transfers finish before a bar says anything useful.
const largeFile = 32 << 20

// progress is a byte progress bar (bytes, rate, ETA); a nil *progress
// does nothing.
type progress struct {
	bar *progressbar.ProgressBar
	out io.Writer
}

func (s *Shell) bar(size int64, desc string) *progress {
	switch s.Progress {
	case ProgressNever:
		return nil
	case ProgressAlways:
	default:
		if !s.IsTerminal || (size >= 0 && size < largeFile) {
			return nil
		}
	}
	return &progress{out: s.Err, bar: progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(s.Err),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionUseIECUnits(true),
	)}
}

func (p *progress) Write(b []byte) (int, error) {
	if p == nil {
		return len(b), nil
	}
	return p.bar.Write(b)
}

// add counts n more bytes done (a writer that does not go through Write).
func (p *progress) add(n int64) {
	if p != nil {
		_ = p.bar.Add64(n)
	}
}

func (p *progress) finish() {
	if p == nil {
		return
	}
	_ = p.bar.Finish()
	fmt.Fprintln(p.out)
}

func (p *progress) stop() {
	if p == nil {
		return
	}
	_ = p.bar.Exit()
	fmt.Fprintln(p.out)
}
