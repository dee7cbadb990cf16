package namenode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// firstRacks creates files as client (reporting host as its name) and
// counts the rack of each block's first target.
func firstRacks(t *testing.T, c *rpcClient, client, host string, files int) map[string]int {
	t.Helper()
	racks := map[string]int{}
	for i := 0; i < files; i++ {
		path := fmt.Sprintf("/%s-%d", client, i)
		cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: client})
		if err != nil {
			t.Fatal(err)
		}
		ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: path, ClientName: client, ClientHost: host, FileId: cr.GetStatus().GetFileId()})
		if err != nil {
			t.Fatal(err)
		}
		racks[ab.GetBlock().GetLocations()[0].GetRack()]++
	}
	return racks
}

// An off-cluster writer whose host the topology table file places writes
// its first replicas in its rack, as HDFS does; one the mapping does not
// place gets random first nodes.
func TestOffClusterWriterRack(t *testing.T) {
	cfg := testConfig(t)
	cfg.TopologyTableFile = filepath.Join(t.TempDir(), "topology.table")
	if err := os.WriteFile(cfg.TopologyTableFile, []byte("# clients\nlaptop /rack-b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 6; i++ {
		fc.add(fmt.Sprintf("dn%d", i), []string{"/rack-a", "/rack-b"}[i%2])
	}
	c := dial(t, nn.Addr(), "hdfs")
	if got := firstRacks(t, c, "c1", "laptop", 20); got["/rack-b"] != 20 {
		t.Errorf("first replicas of a writer mapped to /rack-b: %v", got)
	}
	if got := firstRacks(t, c, "c2", "elsewhere", 40); got["/rack-a"] == 0 || got["/rack-b"] == 0 {
		t.Errorf("first replicas of an unplaced writer: %v; want both racks", got)
	}
	// Readers are placed by the same mapping: the rack-b replica first.
	lbs, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/c2-0", ClientHost: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if locs := lbs.GetLocations().GetBlocks()[0].GetLocations(); locs[0].GetRack() != "/rack-b" {
		t.Errorf("reader in /rack-b got %v first", locs[0].GetRack())
	}
}

// addBlock tells the writer the rack its placement put it in, which a
// concurrent client uses as its prior for datanodes it never measured:
// the mapping's rack for an off-cluster host, the datanode's rack for a
// writer on a datanode's host, none for a host the mapping does not place.
func TestAddBlockNamesWriterRack(t *testing.T) {
	cfg := testConfig(t)
	cfg.TopologyTableFile = filepath.Join(t.TempDir(), "topology.table")
	if err := os.WriteFile(cfg.TopologyTableFile, []byte("laptop /rack-b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 6; i++ {
		fc.add(fmt.Sprintf("dn%d", i), []string{"/rack-a", "/rack-c"}[i%2])
	}
	c := dial(t, nn.Addr(), "hdfs")
	for i, tc := range []struct{ host, want string }{{"laptop", "/rack-b"}, {"dn2", "/rack-a"}, {"dn3", "/rack-c"}, {"elsewhere", ""}} {
		path := fmt.Sprintf("/w%d", i)
		cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: "w"})
		if err != nil {
			t.Fatal(err)
		}
		ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: path, ClientName: "w", ClientHost: tc.host, FileId: cr.GetStatus().GetFileId()})
		if err != nil {
			t.Fatal(err)
		}
		if got := ab.GetWriterRack(); got != tc.want {
			t.Errorf("writer on %s: addBlock says rack %q, want %q", tc.host, got, tc.want)
		}
	}
}

func TestTopologyScript(t *testing.T) {
	cfg := testConfig(t)
	cfg.TopologyScript = filepath.Join(t.TempDir(), "topology.sh")
	script := "#!/bin/sh\nfor a in \"$@\"; do case $a in lap*) echo /rack-a;; *) echo /default-rack;; esac; done\n"
	if err := os.WriteFile(cfg.TopologyScript, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 4; i++ {
		fc.add(fmt.Sprintf("dn%d", i), []string{"/rack-a", "/rack-b"}[i%2])
	}
	c := dial(t, nn.Addr(), "hdfs")
	if got := firstRacks(t, c, "c1", "laptop7", 10); got["/rack-a"] != 10 {
		t.Errorf("first replicas of a writer the script puts in /rack-a: %v", got)
	}
}

func TestTopologyConfigErrors(t *testing.T) {
	cfg := testConfig(t)
	cfg.TopologyTableFile = filepath.Join(t.TempDir(), "missing.table")
	cfg.TopologyScript = filepath.Join(t.TempDir(), "missing.sh")
	cfg.TopologyScriptTimeout = -1
	err := cfg.Validate()
	for _, want := range []string{"topology_table_file:", "topology_script:", "topology_script_timeout:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want a %q error", err, want)
		}
	}
}

// Speed records belong to the host: a second client process on the same
// host reads what the first measured, and the status page has one row.
func TestSpeedRecordsPerHost(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	for _, name := range []string{"put-1", "put-2"} {
		if _, err := c.cp.ClientHeartbeat(c.ctx(), &dfspb.ClientHeartbeatRequest{ClientName: name, ClientHost: "host7",
			Samples: []*dfspb.SpeedSample{{DatanodeId: "id-dn1", Bytes: 64 << 20, Nanos: 1e9}}}); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := c.cp.GetSpeeds(c.ctx(), &dfspb.GetSpeedsRequest{ClientName: "put-1"})
	if err != nil || len(sp.GetRecords()) != 1 || sp.GetRecords()[0].GetSamples() != 2 || sp.GetRecords()[0].GetClientName() != "host7" {
		t.Fatalf("speeds of put-1: %v %v; want host7's one record with both samples", sp, err)
	}
	if got := nn.speeds.Recent("host7"); len(got) != 1 {
		t.Errorf("host7's records %v", got)
	}
}
