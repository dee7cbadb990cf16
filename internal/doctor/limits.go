package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// limit is a resource limit from /proc/<pid>/limits and the soft values a
// datanode needs: one file descriptor per open block file and per
// connection, one thread per transfer.
type limit struct {
	id, name   string // check id, the row name in the limits file
	ok, warnAt uint64 // >= ok: ok; >= warnAt: warn; else fail
	why, fix   string
}

func limits() []limit {
	return []limit{
		{"nofile", "Max open files", 32768, 4096,
			"a datanode holds a descriptor per block being read or written and per connection; at the default 1024 it fails with \"too many open files\" under load",
			"ulimit -n 65536  # for the daemons' user: 'smarth - nofile 65536' in /etc/security/limits.d/ or LimitNOFILE= in the unit"},
		{"nproc", "Max processes", 32768, 4096,
			"transfers, tasks and the shuffle each take threads; a low process limit fails them with \"resource temporarily unavailable\"",
			"ulimit -u 65536  # 'smarth - nproc 65536' in /etc/security/limits.d/"},
	}
}

// checkLimits reads the soft limits the checking process runs with, from
// /proc/self/limits: the daemons started from the same shell or unit get
// the same.
func checkLimits(_ context.Context, e *Env) []Result {
	text, err := e.read("proc/self/limits")
	var out []Result
	for _, l := range limits() {
		r := Result{ID: "limit:" + l.id, Title: strings.ToLower(l.name) + " (soft)", Why: fmt.Sprintf("%s; want >= %d", l.why, l.ok)}
		if err != nil {
			r.Status, r.Value = Skip, err.Error()
			out = append(out, r)
			continue
		}
		soft, found := softLimit(text, l.name)
		switch {
		case !found:
			r.Status, r.Value = Skip, "no "+strconv.Quote(l.name)+" row"
		case soft == "unlimited":
			r.Status, r.Value = OK, soft
		default:
			n, perr := strconv.ParseUint(soft, 10, 64)
			r.Value = soft
			switch {
			case perr != nil:
				r.Status = Skip
			case n >= l.ok:
				r.Status = OK
			case n >= l.warnAt:
				r.Status = Warn
			default:
				r.Status = Fail
			}
		}
		if r.Status == Warn || r.Status == Fail {
			r.FixCmd = l.fix
		}
		out = append(out, r)
	}
	return out
}

// softLimit finds a row of the limits table ("Max open files  1024  4096
// files") and returns its soft value.
func softLimit(text, name string) (string, bool) {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, name))
		if len(f) == 0 {
			return "", false
		}
		return f[0], true
	}
	return "", false
}
