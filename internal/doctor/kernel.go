package doctor

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

const thpEnabled = "sys/kernel/mm/transparent_hugepage/enabled"

// checkTHP: with THP "always", khugepaged compacts memory behind the
// daemons' backs; Hadoop vendors document CPU spikes and stalls of the
// datanode and of tasks from it and ask for never (madvise is harmless:
// only programs that ask get huge pages).
func checkTHP(_ context.Context, e *Env) []Result {
	r := Result{ID: "thp", Title: "transparent huge pages",
		Why: "THP=always lets khugepaged compact memory under the daemons: CPU spikes and long pauses of datanodes and tasks; want never or madvise"}
	v, err := e.read(thpEnabled)
	if err != nil {
		r.Status, r.Value = Skip, "not available: "+err.Error()
		return []Result{r}
	}
	r.Value = v
	switch bracketed(v) {
	case "never", "madvise":
		r.Status = OK
	case "always":
		r.Status = Warn
		r.FixCmd = "echo never > /" + thpEnabled + "  # and transparent_hugepage=never on the kernel command line to keep it"
		r.Writes = []Write{{thpEnabled, "never"}}
	default:
		r.Status = Warn
		r.Why = "cannot tell the THP mode from " + strconv.Quote(v) + "; " + r.Why
	}
	return []Result{r}
}

// bracketed returns the [selected] word of a sysfs choice list, or the
// value itself when it is a single word (a fake tree, or a file written by
// hand, holds just the choice).
func bracketed(v string) string {
	m := regexp.MustCompile(`\[(\w+)\]`).FindStringSubmatch(v)
	if m == nil {
		if f := strings.Fields(v); len(f) == 1 {
			return f[0]
		}
		return ""
	}
	return m[1]
}

// checkSwappiness: a swapped-out datanode or JVM-like heap misses its
// heartbeat and is declared dead; vendors ask for 1 (not 0, which on newer
// kernels lets the OOM killer act before any swap).
func checkSwappiness(_ context.Context, e *Env) []Result {
	r := Result{ID: "swappiness", Title: "vm.swappiness",
		Why: "a swapped-out daemon stalls, misses heartbeats and is declared dead; want 1..10"}
	n, err := e.readInt("proc/sys/vm/swappiness")
	if err != nil {
		r.Status, r.Value = Skip, err.Error()
		return []Result{r}
	}
	r.Value = strconv.Itoa(n)
	switch {
	case n <= 10:
		r.Status = OK
	case n <= 30:
		r.Status = Warn
	default:
		r.Status = Fail
	}
	if r.Status != OK {
		r.FixCmd = "sysctl -w vm.swappiness=1  # and vm.swappiness=1 in /etc/sysctl.d/"
		r.Writes = []Write{{"proc/sys/vm/swappiness", "1"}}
	}
	return []Result{r}
}

func (e *Env) readInt(p string) (int, error) {
	v, err := e.read(p)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// netSysctl is a network tunable with the least value a busy datanode or
// namenode wants.
type netSysctl struct {
	name  string // sysctl name
	field int    // which of the space-separated values (tcp_rmem's max is 2)
	want  int
	why   string
}

func netSysctls() []netSysctl {
	const mib4 = 4 << 20
	return []netSysctl{
		{"net.core.somaxconn", 0, 1024, "accept backlog: the namenode's RPC port drops connection bursts from many clients and datanodes when it is small"},
		{"net.core.rmem_max", 0, mib4, "largest receive buffer a socket may ask for; a fixed SO_RCVBUF above it is silently capped"},
		{"net.core.wmem_max", 0, mib4, "largest send buffer a socket may ask for"},
		{"net.ipv4.tcp_rmem", 2, mib4, "autotuning's receive buffer ceiling: pipeline streams over long fat links need a window of bandwidth x RTT"},
		{"net.ipv4.tcp_wmem", 2, mib4, "autotuning's send buffer ceiling"},
	}
}

func checkNetSysctls(_ context.Context, e *Env) []Result {
	var out []Result
	for _, s := range netSysctls() {
		p := "proc/sys/" + strings.ReplaceAll(s.name, ".", "/")
		r := Result{ID: "sysctl:" + s.name, Title: s.name, Why: fmt.Sprintf("%s; want >= %d", s.why, s.want)}
		v, err := e.read(p)
		if err != nil {
			r.Status, r.Value = Skip, "not available: "+err.Error()
			out = append(out, r)
			continue
		}
		r.Value = strings.Join(strings.Fields(v), " ")
		fields := strings.Fields(v)
		n := -1
		if s.field < len(fields) {
			n, _ = strconv.Atoi(fields[s.field])
		}
		if n >= s.want {
			r.Status = OK
			out = append(out, r)
			continue
		}
		r.Status = Warn
		fields[min(s.field, len(fields)-1)] = strconv.Itoa(s.want)
		nv := strings.Join(fields, " ")
		r.FixCmd = fmt.Sprintf("sysctl -w %s=%q", s.name, nv)
		r.Writes = []Write{{p, nv}}
		out = append(out, r)
	}
	return out
}
