package doctor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// service is a daemon whose presence matters on a cluster host.
type service struct {
	name   string // process name in /proc/<pid>/comm
	should bool   // true: should run; false: should not
	bad    Status // status when it is the wrong way
	why    string
	fix    string
}

func services() []service {
	return []service{
		{"rpcbind", true, Warn,
			"seed 002 reports the Hadoop suite faster with rpcbind running (Table III, single runs); 'smarth bench ab' measures whether it matters on your hosts (docs/benchmarks.md, Host A/B)",
			"apt-get install -y rpcbind && (systemctl enable --now rpcbind || rpcbind)"},
		{"firewalld", false, Warn,
			"a host firewall drops the datanodes' data and the shuffle's ports unless every port is opened",
			"systemctl disable --now firewalld  # or open the cluster's ports"},
		{"tuned", false, Warn,
			"tuned profiles set transparent huge pages back to always and change sysctls behind the cluster's settings",
			"systemctl disable --now tuned  # or use a profile that leaves THP and the network sysctls alone"},
		{"avahi-daemon", false, Warn,
			"mDNS answers can shadow cluster host names and adds multicast noise",
			"systemctl disable --now avahi-daemon"},
	}
}

func checkServices(_ context.Context, e *Env) []Result {
	procs, err := processNames(e.Root)
	var out []Result
	for _, s := range services() {
		r := Result{ID: "service:" + s.name, Title: "service " + s.name, Why: s.why}
		if err != nil {
			r.Status, r.Value = Skip, err.Error()
			out = append(out, r)
			continue
		}
		running := slices.Contains(procs, s.name)
		r.Value = map[bool]string{true: "running", false: "not running"}[running]
		if running == s.should {
			r.Status = OK
		} else {
			r.Status, r.FixCmd = s.bad, s.fix
		}
		out = append(out, r)
	}
	return out
}

// processNames lists the comm of every process under root/proc.
func processNames(root string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(root, "proc"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range ents {
		if !d.IsDir() || strings.Trim(d.Name(), "0123456789") != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, "proc", d.Name(), "comm"))
		if err == nil {
			names = append(names, strings.TrimSpace(string(b)))
		}
	}
	return names, nil
}

// runningAny returns which of names have a process under root/proc.
func runningAny(root string, names []string) []string {
	procs, _ := processNames(root)
	var out []string
	for _, n := range names {
		if slices.Contains(procs, n) {
			out = append(out, n)
		}
	}
	return out
}
