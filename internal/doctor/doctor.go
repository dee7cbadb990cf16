package doctor

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Status of a check. The order matters: a report's worst status decides
// the exit code.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip" // could not be checked here (e.g. no such file)
)

func (s Status) rank() int {
	switch s {
	case Warn:
		return 1
	case Fail:
		return 2
	}
	return 0
}

// Result is one check's outcome.
type Result struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Value is what was observed, e.g. "[always] madvise never".
	Value string `json:"value"`
	// Why the check matters, and what is wrong when it is not ok.
	Why string `json:"why"`
	// FixCmd is the shell command an operator runs to fix it; empty when
	// ok.
	FixCmd string `json:"fix,omitempty"`
	// Writes are what Fix would write (path under the root → content);
	// only checks of plain kernel tunables have them.
	Writes []Write `json:"-"`
}

// Write is one file write Fix would do.
type Write struct {
	Path    string // relative to the root, e.g. proc/sys/vm/swappiness
	Content string
}

// Resolver is the part of net.Resolver the name checks use.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
	LookupAddr(ctx context.Context, addr string) ([]string, error)
}

// Usage is a file system's size as statfs reports it.
type Usage struct{ Total, Free uint64 }

// Env is everything the checks read. NewEnv fills in the real host's.
type Env struct {
	// Root is prefixed to every file path read or written ("/").
	Root string
	// DataDirs are the data directories to check (mounts, space, mode).
	DataDirs []string
	// Ports smarth uses; each is checked free, unless listed in
	// PortsInUse (the running local cluster's own).
	Ports      []int
	PortsInUse map[int]string
	Resolver   Resolver
	// Statfs reports the file system holding path.
	Statfs func(path string) (Usage, error)
	// ClockSync reports whether the clock is synchronised and by what;
	// known is false when the host gives no way to tell.
	ClockSync func(ctx context.Context) (synced, known bool, source string)
	// UID is the user the daemons run as (the data directories' owner).
	UID int
}

// NewEnv returns the environment of this host, read under root.
func NewEnv(root string) *Env {
	return &Env{
		Root:      root,
		Resolver:  net.DefaultResolver,
		Statfs:    statfs,
		ClockSync: func(ctx context.Context) (bool, bool, string) { return clockSync(ctx, root) },
		UID:       os.Getuid(),
	}
}

func statfs(path string) (Usage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return Usage{}, err
	}
	return Usage{Total: st.Blocks * uint64(st.Bsize), Free: st.Bavail * uint64(st.Bsize)}, nil
}

// path maps an absolute host path to the file under Root.
func (e *Env) path(p string) string { return filepath.Join(e.Root, p) }

// read returns a file's trimmed content under the root.
func (e *Env) read(p string) (string, error) {
	b, err := os.ReadFile(e.path(p))
	return strings.TrimSpace(string(b)), err
}

// Check is one named check.
type Check struct {
	ID  string
	Run func(ctx context.Context, e *Env) []Result
}

// Checks lists every check in the order reported. Some return one result
// per item (per data directory, per port).
func Checks() []Check {
	return []Check{
		{"thp", checkTHP},
		{"swappiness", checkSwappiness},
		{"limits", checkLimits},
		{"clock", checkClock},
		{"hostname", checkHostname},
		{"services", checkServices},
		{"sysctl", checkNetSysctls},
		{"datadirs", checkDataDirs},
		{"ports", checkPorts},
	}
}

// Report is the outcome of all checks on one host.
type Report struct {
	Host    string   `json:"host"`
	Results []Result `json:"results"`
}

// Run runs the checks (all when only is empty) and returns the report.
func Run(ctx context.Context, e *Env, only []string) Report {
	host, _ := e.read("proc/sys/kernel/hostname")
	r := Report{Host: host}
	for _, c := range Checks() {
		if len(only) > 0 && !contains(only, c.ID) {
			continue
		}
		r.Results = append(r.Results, c.Run(ctx, e)...)
	}
	return r
}

// Worst is the worst status in the report (skip counts as ok).
func (r Report) Worst() Status {
	w := OK
	for _, res := range r.Results {
		if res.Status.rank() > w.rank() {
			w = res.Status
		}
	}
	return w
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
