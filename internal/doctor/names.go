package doctor

import (
	"context"
	"net"
	"strings"
	"time"
)

// checkHostname resolves the host's name forward and its address back.
// Datanodes register under their name and address; Kerberos and the
// classic "hostname maps to 127.0.1.1 in /etc/hosts" fault both break a
// cluster in ways that show up only once other hosts connect.
func checkHostname(ctx context.Context, e *Env) []Result {
	fwd := Result{ID: "dns:forward", Title: "hostname resolves",
		Why: "datanodes and node managers register under their host name; other hosts must reach the address it resolves to"}
	rev := Result{ID: "dns:reverse", Title: "address resolves back to hostname",
		Why: "reverse lookups name hosts in block reports, logs and Kerberos principals; a mismatch registers a host twice or fails authentication"}
	host, err := e.read("proc/sys/kernel/hostname")
	if err != nil || host == "" || e.Resolver == nil {
		fwd.Status, fwd.Value = Skip, "no host name or resolver"
		rev.Status, rev.Value = Skip, fwd.Value
		return []Result{fwd, rev}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := e.Resolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		fwd.Status, fwd.Value = Fail, host+": "+errText(err, "no addresses")
		fwd.FixCmd = "echo \"<this host's address> " + host + "\" >> /etc/hosts  # or add it to DNS"
		rev.Status, rev.Value = Skip, "no address to look up"
		return []Result{fwd, rev}
	}
	fwd.Value = host + " -> " + strings.Join(addrs, " ")
	addr, loopback := pickAddr(addrs)
	if loopback {
		fwd.Status = Warn
		fwd.Why = "resolves only to loopback: fine for a one-host cluster, but other hosts would be told to connect to 127.x; " + fwd.Why
		fwd.FixCmd = "edit /etc/hosts: map " + host + " to the address other hosts reach, not 127.0.1.1"
	} else {
		fwd.Status = OK
	}

	names, err := e.Resolver.LookupAddr(ctx, addr)
	rev.Value = addr + " -> " + errText(err, strings.Join(names, " "))
	switch {
	case err != nil || len(names) == 0:
		rev.Status = Warn
	case matchesHost(names, host):
		rev.Status = OK
	default:
		rev.Status = Warn
	}
	if rev.Status != OK {
		rev.FixCmd = "add a PTR record (or an /etc/hosts line) mapping " + addr + " to " + host
	}
	return []Result{fwd, rev}
}

// pickAddr prefers an address other hosts could reach.
func pickAddr(addrs []string) (addr string, loopback bool) {
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && !ip.IsLoopback() {
			return a, false
		}
	}
	return addrs[0], true
}

func matchesHost(names []string, host string) bool {
	for _, n := range names {
		n = strings.TrimSuffix(n, ".")
		if n == host || strings.HasPrefix(n, host+".") || strings.HasPrefix(host, n+".") {
			return true
		}
	}
	return false
}

func errText(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	if otherwise == "" {
		return "nothing"
	}
	return otherwise
}
