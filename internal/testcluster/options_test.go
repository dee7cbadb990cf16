package testcluster

import (
	"strings"
	"testing"
	"time"
)

type fakeConfig struct {
	RPCAddr   string            `yaml:"rpc_addr"`
	Heartbeat time.Duration     `yaml:"heartbeat_interval"`
	BlockSize int64             `yaml:"block_size"`
	Racks     map[string]string `yaml:"racks"`
	Keep      string            `yaml:"keep"`
}

func TestDecodeKeys(t *testing.T) {
	cfg := fakeConfig{Keep: "default"}
	err := decodeKeys(map[string]any{
		"rpc_addr": "127.0.0.1:0", "heartbeat_interval": (200 * time.Millisecond).String(),
		"block_size": int64(1 << 20), "racks": map[string]string{"dn1": "/r1"},
	}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RPCAddr != "127.0.0.1:0" || cfg.Heartbeat != 200*time.Millisecond || cfg.BlockSize != 1<<20 || cfg.Racks["dn1"] != "/r1" {
		t.Errorf("decoded %+v", cfg)
	}
	if cfg.Keep != "default" {
		t.Errorf("a default not named in the keys was lost: %+v", cfg)
	}
	err = decodeKeys(map[string]any{"no_such_key": 1}, &cfg)
	if err == nil || !strings.Contains(err.Error(), "no_such_key") {
		t.Errorf("unknown key: %v", err)
	}
}

func TestOptionsDefaultsAndKeys(t *testing.T) {
	o := Options{DataNodes: 2, Racks: []string{"/a", "/b"}, NameNode: map[string]any{"placement": "speedaware"},
		DataNodeFor: func(i int) map[string]any { return map[string]any{"sync_on_close": i == 1} }}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if o.Replication != 2 || o.BlockSize != 1<<20 || o.HeartbeatInterval != 200*time.Millisecond {
		t.Errorf("defaults %+v", o)
	}
	nn := o.nameNodeKeys("/m", "127.0.0.1:0", "127.0.0.1:0")
	if nn["placement"] != "speedaware" || nn["racks"].(map[string]string)["dn2"] != "/b" || nn["dead_node_timeout"] != "3s" {
		t.Errorf("namenode keys %v", nn)
	}
	dn := o.dataNodeKeys(1, "127.0.0.1:9", "/d")
	if dn["hostname"] != "dn2" || dn["rack"] != "/b" || dn["sync_on_close"] != true || dn["namenode"] != "127.0.0.1:9" {
		t.Errorf("datanode keys %v", dn)
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
