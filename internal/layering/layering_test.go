package layering

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden maps a package to module packages it must never depend on,
// directly or not. Both sides cover subpackages: the rule for
// "smarth/internal/mapreduce" binds mapreduce/jobclient and every other
// package under it too (a test harness under an engine that imports the
// daemons broke the layering unseen when only the top package was
// checked), and "smarth/internal/datanode" as a forbidden dependency also
// forbids its subpackages.
var forbidden = map[string][]string{
	// Pure decisions: no daemon, client, wire or harness.
	"smarth/internal/topology":  {"smarth/internal/rpc", "smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/client"},
	"smarth/internal/placement": {"smarth/internal/rpc", "smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/client"},
	"smarth/internal/sched":     {"smarth/internal/rpc", "smarth/internal/resourcemanager", "smarth/internal/nodemanager", "smarth/internal/client"},
	"smarth/internal/cache":     {"smarth/internal/rpc", "smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/client"},
	"smarth/internal/trash":     {"smarth/internal/rpc", "smarth/internal/namenode", "smarth/internal/client"},
	// The consoles' shared frame: each daemon renders its own pages and
	// hands them over; webui knows none of them.
	"smarth/internal/webui": {"smarth/internal/rpc", "smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/client", "smarth/internal/resourcemanager", "smarth/internal/nodemanager", "smarth/internal/mapreduce"},
	// Wire format: knows only the protobuf messages.
	"smarth/internal/datatransfer": {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/client"},
	// The namenode's lean transport carries any generated service: it
	// knows no message of ours.
	"smarth/internal/ipc": {"smarth/internal/rpc", "smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/client"},
	// Daemons never import each other.
	"smarth/internal/namenode":        {"smarth/internal/datanode", "smarth/internal/client", "smarth/internal/resourcemanager", "smarth/internal/nodemanager", "smarth/internal/testcluster", "smarth/internal/bench"},
	"smarth/internal/datanode":        {"smarth/internal/namenode", "smarth/internal/client", "smarth/internal/resourcemanager", "smarth/internal/nodemanager", "smarth/internal/testcluster", "smarth/internal/bench"},
	"smarth/internal/client":          {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/resourcemanager", "smarth/internal/nodemanager", "smarth/internal/testcluster", "smarth/internal/bench"},
	"smarth/internal/resourcemanager": {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/nodemanager", "smarth/internal/testcluster"},
	"smarth/internal/nodemanager":     {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/resourcemanager", "smarth/internal/testcluster"},
	"smarth/internal/mapreduce":       {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/resourcemanager", "smarth/internal/nodemanager", "smarth/internal/testcluster"},
	// The local launcher reaches daemons only through the binary and RPCs.
	"smarth/internal/cluster": {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/resourcemanager", "smarth/internal/nodemanager"},
	"smarth/internal/testbed": {"smarth/internal/namenode", "smarth/internal/datanode", "smarth/internal/resourcemanager", "smarth/internal/nodemanager"},
}

func TestLayering(t *testing.T) {
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", pkg+"/...").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s/...: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range bad {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s (or a package under it) depends on %s; the layering in docs/architecture.md forbids it", pkg, dep)
				}
			}
		}
	}
}
