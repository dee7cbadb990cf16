package testcluster

import (
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/datanode"
	"smarth/internal/namenode"
)

func TestOptionsDefaultsAndKeys(t *testing.T) {
	o := Options{DataNodes: 2, Racks: []string{"/a", "/b"}, NameNode: map[string]any{"placement": "speedaware"},
		DataNodeFor: func(i int) map[string]any { return map[string]any{"sync_on_close": i == 1} }}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if o.Replication != 2 || o.BlockSize != 1<<20 || o.HeartbeatInterval != 200*time.Millisecond {
		t.Errorf("defaults %+v", o)
	}
	// As the daemons load their files: over their defaults.
	nn := namenode.DefaultConfig()
	b, err := o.nameNodeConfig("/m", "127.0.0.1:0", "127.0.0.1:0")
	if err == nil {
		err = daemonconf.Decode(b, &nn)
	}
	if err != nil || nn.Placement != "speedaware" || nn.Racks["dn2"] != "/b" || nn.DeadNodeTimeout != 3*time.Second ||
		nn.Auth != auth.Simple || nn.MetaDir != "/m" || nn.BlockSize != 1<<20 || nn.MaxReplication != namenode.DefaultConfig().MaxReplication {
		t.Errorf("namenode config %+v (%v)", nn, err)
	}
	dn := datanode.DefaultConfig()
	b, err = o.dataNodeConfig(1, "127.0.0.1:9", "/d")
	if err == nil {
		err = daemonconf.Decode(b, &dn)
	}
	if err != nil || dn.Hostname != "dn2" || dn.Rack != "/b" || !dn.SyncOnClose || dn.NameNode != "127.0.0.1:9" || dn.BlockReportInterval != time.Hour {
		t.Errorf("datanode config %+v (%v)", dn, err)
	}
	// A misspelt extra key is refused naming it (before: yaml's "field
	// replicaton not found in type namenode.Config").
	o.NameNode = map[string]any{"replicaton": 2}
	if _, err := o.nameNodeConfig("/m", "127.0.0.1:0", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), `unknown config key "replicaton" (did you mean replication?`) {
		t.Errorf("misspelt namenode key: %v", err)
	}
	bad := Options{DataNodes: 3, Racks: []string{"/a"}}
	if err := bad.setDefaults(); err == nil {
		t.Error("3 datanodes with 1 rack accepted")
	}
}

func TestLogRingKeepsTheLastLines(t *testing.T) {
	r := &logRing{name: "x"}
	for i := range logKeep + 5 {
		r.Write([]byte("line " + string(rune('a'+i%26)) + "\n"))
	}
	r.Write([]byte("partial"))
	lines := strings.Split(r.tail(), "\n")
	if len(lines) != logKeep {
		t.Fatalf("kept %d lines, want %d", len(lines), logKeep)
	}
	if lines[len(lines)-1] != "line "+string(rune('a'+(logKeep+4)%26)) {
		t.Errorf("last kept line %q", lines[len(lines)-1])
	}
}

func TestWaitForSaysWhatItWaitedFor(t *testing.T) {
	b := &base{opts: Options{WaitTimeout: 50 * time.Millisecond}}
	err := b.waitFor("the moon", func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "timed out waiting for the moon") {
		t.Errorf("waitFor: %v", err)
	}
	n := 0
	if err := b.waitFor("three calls", func() bool { n++; return n == 3 }); err != nil || n != 3 {
		t.Errorf("waitFor of a condition that comes true: %v after %d calls", err, n)
	}
}

func TestNoDataNodes(t *testing.T) {
	c := Start(t, Options{NoDataNodes: true, DataNodes: 5})
	if n := c.NumDataNodes(); n != 0 {
		t.Fatalf("NumDataNodes() = %d, want 0", n)
	}
	c.WaitLive(t, 0)
}
