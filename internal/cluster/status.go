package cluster

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
)

// Status is a snapshot of a local cluster: its recorded daemons with
// whether each still runs, and the namenode's datanode report.
type Status struct {
	State     *State
	Alive     map[string]bool // by daemon name
	Datanodes []*dfspb.DatanodeInfo
	SafeMode  string // "" when off, else the namenode's reason
	ReportErr error  // why the namenode could not be asked, if it could not
	// Members are the HA group's namenodes with their role, term and
	// applied txid (nil for a single namenode).
	Members []MemberStatus
}

// GetStatus reads the state file of home and asks the namenode for its
// datanode report.
func GetStatus(ctx context.Context, home string) (*Status, error) {
	st, err := LoadState(home)
	if err != nil {
		return nil, err
	}
	s := &Status{State: st, Alive: map[string]bool{}}
	for _, d := range st.Daemons {
		s.Alive[d.Name] = d.Running()
	}
	if st.NameNode == "" {
		s.ReportErr = fmt.Errorf("the cluster in %s is down", st.Home)
		return s, nil
	}
	if st.HA() {
		if s.Members, err = HAStatus(ctx, st); err != nil {
			s.ReportErr = err
			return s, nil
		}
	}
	addr, _, err := ActiveNameNode(ctx, st)
	if err != nil {
		s.ReportErr = err
		return s, nil
	}
	nn, err := dialNameNode(st, addr)
	if err != nil {
		s.ReportErr = err
		return s, nil
	}
	defer nn.Close()
	if s.Datanodes, err = nn.Datanodes(ctx); err != nil {
		s.ReportErr = fmt.Errorf("namenode %s: %w", addr, err)
		return s, nil
	}
	sort.Slice(s.Datanodes, func(i, j int) bool { return s.Datanodes[i].GetHostname() < s.Datanodes[j].GetHostname() })
	if on, why, err := nn.SafeMode(ctx); err == nil && on {
		s.SafeMode = why
		if s.SafeMode == "" {
			s.SafeMode = "on"
		}
	}
	return s, nil
}

// Print writes the status as two tables: daemons, then datanodes.
func (s *Status) Print(w io.Writer) {
	st := s.State
	fmt.Fprintf(w, "cluster home %s (started %s)\n", st.Home, st.Started.Format(time.DateTime))
	if st.NameNode == "" {
		fmt.Fprintln(w, "the cluster is down (start it with `smarth cluster up`); last run:")
	}
	if st.NameNode != "" {
		if st.HA() {
			fmt.Fprintf(w, "namenodes %s (an HA group)", st.NameNode)
		} else {
			fmt.Fprintf(w, "namenode %s", st.NameNode)
		}
		if st.NameNodeHTTP != "" {
			fmt.Fprintf(w, "   web UI %s://%s/", st.WebScheme(), st.NameNodeHTTP)
		}
		fmt.Fprintln(w)
	}
	if st.ResourceManager != "" {
		fmt.Fprintf(w, "resource manager %s\n", st.ResourceManager)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DAEMON\tPID\tALIVE\tHOST\tRACK\tADDRESSES\tLOG")
	for _, d := range st.Daemons {
		alive := "no"
		if s.Alive[d.Name] {
			alive = "yes"
		}
		pid := "-"
		if d.PID > 0 {
			pid = fmt.Sprint(d.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, pid, alive, dash(d.Hostname), dash(d.Rack), addresses(d.Ready), d.LogFile)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if st.NameNode == "" {
		return
	}
	if len(s.Members) > 0 {
		s.printMembers(w)
	}
	if s.ReportErr != nil {
		fmt.Fprintf(w, "datanode report: unavailable: %v\n", s.ReportErr)
		return
	}
	if s.SafeMode != "" {
		fmt.Fprintf(w, "namenode in safe mode: %s\n", s.SafeMode)
	}
	fmt.Fprintf(w, "datanode report (%d):\n", len(s.Datanodes))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSTATE\tRACK\tDATA ADDR\tBLOCKS\tUSED\tREMAINING\tLAST HEARTBEAT")
	now := time.Now()
	for _, d := range s.Datanodes {
		ago := "-"
		if ms := d.GetLastHeartbeatUnixMs(); ms > 0 {
			ago = now.Sub(time.UnixMilli(ms)).Round(100*time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s:%d\t%d\t%s\t%s\t%s\n", d.GetHostname(), d.GetState(), d.GetRack(),
			d.GetIpAddr(), d.GetDataPort(), d.GetNumBlocks(), units.FormatSize(d.GetDfsUsed()), units.FormatSize(d.GetRemaining()), ago)
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func addresses(r Ready) string {
	var out string
	add := func(k, v string) {
		if v == "" {
			return
		}
		if out != "" {
			out += " "
		}
		out += k + "=" + v
	}
	add("rpc", r.RPC)
	add("data", r.Data)
	add("ipc", r.IPC)
	add("shuffle", r.Shuffle)
	add("http", r.HTTP)
	return dash(out)
}

// printMembers is the HA group's table: each namenode's role (as HDFS's
// haadmin -getAllServiceState says it), term, applied txid and the active
// it follows.
func (s *Status) printMembers(w io.Writer) {
	fmt.Fprintf(w, "HA group (%d namenodes):\n", len(s.Members))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMENODE\tRPC\tROLE\tTERM\tAPPLIED TXID\tACTIVE")
	for _, m := range s.Members {
		if m.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t%v\n", m.Name, dash(m.Addr), m.Role(), m.Err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", m.Name, m.Addr, m.Role(), m.HA.GetTerm(), m.HA.GetAppliedTxid(), dash(m.HA.GetActiveId()))
	}
	tw.Flush()
	fmt.Fprintln(w)
}
