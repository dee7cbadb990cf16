package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"smarth/internal/rpc/mrpb"
)

// TestPrintNodesAsYarnNodeList: `smarth job nodes` prints YARN's
// "Total Nodes:N" and its four columns in NodeCLI's widths, then each
// node's slots in use of total, last heartbeat and health report.
func TestPrintNodesAsYarnNodeList(t *testing.T) {
	hb := time.Date(2026, 11, 28, 19, 10, 5, 123e6, time.UTC)
	var b bytes.Buffer
	printNodes(&b, []*mrpb.NodeReport{
		{NodeId: "nm-dn1", State: "RUNNING", HttpAddr: "dn1:8042", MapSlots: 2, ReduceSlots: 1, RunningMaps: 2, RunningReduces: 1, LastHeartbeatMs: hb.UnixMilli()},
		{NodeId: "nm-dn2", State: "LOST", HttpAddr: "dn2:8042", MapSlots: 2, ReduceSlots: 1, HealthReport: "no heartbeat for 12s (node_timeout)"},
	})
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "Total Nodes:2" {
		t.Errorf("first line %q, want Total Nodes:2", lines[0])
	}
	if want := "         Node-Id\t     Node-State\tNode-Http-Address\tNumber-of-Running-Containers\t"; !strings.HasPrefix(lines[1], want) {
		t.Errorf("header %q, want YARN's %q first", lines[1], want)
	}
	if want := "          nm-dn1\t        RUNNING\t         dn1:8042\t                           3\t      2/2\t         1/1\t"; !strings.HasPrefix(lines[2], want) {
		t.Errorf("row %q, want %q first", lines[2], want)
	}
	if !strings.Contains(lines[2], time.UnixMilli(hb.UnixMilli()).Format("Mon 02 Jan 15:04:05:000 MST 2006")) {
		t.Errorf("row %q lacks the last heartbeat in YARN's Last-Health-Update format", lines[2])
	}
	if !strings.HasSuffix(lines[3], "\tno heartbeat for 12s (node_timeout)") || !strings.Contains(lines[3], "LOST") {
		t.Errorf("lost row %q, want LOST with its health report last", lines[3])
	}
}

func TestJobNodesRefusesUnknownState(t *testing.T) {
	code, _, errText := runSmarth("job", "nodes", "--states", "SHUTDOWN", "--resourcemanager", "127.0.0.1:1")
	if code == 0 || !strings.Contains(errText, `--states "SHUTDOWN": want one of RUNNING, DECOMMISSIONING, DECOMMISSIONED, LOST`) {
		t.Errorf("job nodes --states SHUTDOWN: exit %d, %q; want a usage error naming the states", code, errText)
	}
}
