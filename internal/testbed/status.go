package testbed

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/netplan"
	"smarth/internal/testbed/topo"
)

// WriteStatus prints where everything of a testbed is: racks, hosts with
// their addresses, namespaces and limits, daemons with their pids and
// addresses, and how to reach them.
func WriteStatus(w io.Writer, s *State) {
	t := s.Topology
	fmt.Fprintf(w, "testbed %s (%s): %d racks, %d hosts, from %s\n", s.Name, s.Phase, len(t.Racks), len(t.Hosts), s.TopologyFile)
	if t.Description != "" {
		fmt.Fprintf(w, "  %s\n", t.Description)
	}
	fmt.Fprintf(w, "state %s; data and logs under %s\n", s.path, s.WorkDir)
	if s.Netem {
		fmt.Fprintln(w, "netem: available")
	} else {
		fmt.Fprintln(w, "netem: not in this kernel (latency only through latency_mode: proxy)")
	}
	if s.Cgroup != nil {
		fmt.Fprintf(w, "disk caps: cgroup %s on device %s\n", s.Cgroup.Kind, s.Cgroup.Device)
	}
	for _, c := range s.Cuts {
		fmt.Fprintf(w, "PARTITIONED: %s is cut off (smarth testbed heal %s:%s)\n", c, c.Kind, c.Name)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rack\tsubnet\tuplink\tbridge (in "+netplan.Names{Testbed: s.Name}.Core()+")")
	for _, r := range t.Racks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Subnet, r.Uplink, netplan.Bridge(r.Index))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "host\track\taddress\tnic\tsame rack\tcross rack\textra\troles")
	for _, h := range t.Hosts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Name, h.Rack, h.Addr, h.Shape.NIC, h.Shape.SameRack, h.Shape.CrossRack, extras(h.Shape), roles(h.Roles))
	}
	tw.Flush()
	if len(s.Daemons) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "daemon\thost\tpid\trunning\taddresses\tlog")
		for _, d := range s.Daemons {
			running := "no"
			if netns.PIDIn(d.PID, s.nsPath(d.Host)) {
				running = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", d.Role, d.Host, d.PID, running, readyAddrs(d.Ready), d.LogFile)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "run a command on a host:  smarth testbed exec HOST -- CMD   (e.g. smarth testbed exec %s -- smarth fs ls /)\n", firstClient(t))
	if nn := daemonplan.NameNodeAddr(t); nn != "" && t.HA() {
		fmt.Fprintf(w, "namenodes: %s (an HA group, nn1..nn%d in this order; SMARTH_NAMENODE lists them on every host and clients fail over across them; smarth testbed exec HOST -- smarth admin ha status)\n", nn, len(t.WithRole(topo.NameNode)))
	} else if nn != "" {
		fmt.Fprintf(w, "namenode: %s (SMARTH_NAMENODE is set on every host)\n", nn)
	}
	if ca := s.CAFile(); ca != "" {
		fmt.Fprintf(w, "TLS: every daemon; the CA is %s (SMARTH_TLS_CA_FILE is set on every host)\n", ca)
	}
	if rm := daemonplan.ResourceManagerAddr(t); rm != "" {
		fmt.Fprintf(w, "resource manager: %s (SMARTH_RESOURCEMANAGER is set on every host)\n", rm)
	}
	fmt.Fprintf(w, "measure the links:        smarth testbed check --name %s\n", s.Name)
	fmt.Fprintf(w, "tear down:                smarth testbed down --name %s\n", s.Name)
}

func extras(sh topo.Shape) string {
	var e []string
	if sh.Latency > 0 {
		e = append(e, "latency "+sh.Latency.String())
	}
	if sh.Jitter > 0 {
		e = append(e, "jitter "+sh.Jitter.String())
	}
	if sh.LossPct > 0 {
		e = append(e, fmt.Sprintf("loss %g%%", sh.LossPct))
	}
	if sh.DiskRead > 0 {
		e = append(e, "disk read "+sh.DiskRead.String())
	}
	if sh.DiskWrite > 0 {
		e = append(e, "disk write "+sh.DiskWrite.String())
	}
	if len(e) == 0 {
		return "-"
	}
	return strings.Join(e, ", ")
}

func roles(rs []topo.Role) string {
	if len(rs) == 0 {
		return "-"
	}
	var s []string
	for _, r := range rs {
		s = append(s, string(r))
	}
	return strings.Join(s, ",")
}

func readyAddrs(r map[string]any) string {
	var parts []string
	for _, k := range []string{"rpc", "data", "ipc", "shuffle", "http"} {
		if v, ok := r[k].(string); ok && v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func firstClient(t *topo.Topology) string {
	if c := t.WithRole(topo.Client); len(c) > 0 {
		return c[0].Name
	}
	return t.Hosts[0].Name
}
