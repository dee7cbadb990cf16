package doctor

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DefaultPorts are the well-known ports of a smarth cluster, after
// Hadoop's: the namenode's RPC and web UI, the resource manager's RPC.
// Other daemons bind port 0 on a local cluster.
func DefaultPorts() []int { return []int{8020, 9870, 8032} }

// listening returns the TCP ports in LISTEN state from /proc/net/tcp and
// tcp6 (state 0A), read under the root so tests can fake them.
func (e *Env) listening() (map[int]bool, error) {
	ports := map[int]bool{}
	var firstErr error
	read := 0
	for _, f := range []string{"proc/net/tcp", "proc/net/tcp6"} {
		text, err := e.read(f)
		if err != nil {
			firstErr = err
			continue
		}
		read++
		for _, line := range strings.Split(text, "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 4 || fs[3] != "0A" {
				continue
			}
			i := strings.LastIndexByte(fs[1], ':')
			p, err := strconv.ParseUint(fs[1][i+1:], 16, 16)
			if err == nil {
				ports[int(p)] = true
			}
		}
	}
	if read == 0 {
		return nil, firstErr
	}
	return ports, nil
}

// checkPorts: a daemon that cannot bind its port fails at start, or worse,
// clients reach another program that holds it.
func checkPorts(_ context.Context, e *Env) []Result {
	ports := e.Ports
	if ports == nil {
		ports = DefaultPorts()
	}
	sort.Ints(ports)
	lst, err := e.listening()
	var out []Result
	for _, p := range ports {
		r := Result{ID: "port:" + strconv.Itoa(p), Title: fmt.Sprintf("port %d", p),
			Why: "smarth daemons bind it; if another program listens there the daemon fails to start or clients reach the wrong server"}
		owner, ours := e.PortsInUse[p]
		switch {
		case err != nil:
			r.Status, r.Value = Skip, err.Error()
		case lst[p] && ours:
			r.Status, r.Value = OK, "in use by "+owner
		case lst[p]:
			r.Status, r.Value = Warn, "in use by another program"
			r.FixCmd = fmt.Sprintf("ss -ltnp 'sport = :%d'  # find it; stop it or give smarth another port", p)
		case ours:
			r.Status, r.Value = Warn, owner+" should listen here but nothing does"
			r.FixCmd = "smarth cluster status  # is the daemon down?"
		default:
			r.Status, r.Value = OK, "free"
		}
		out = append(out, r)
	}
	return out
}
