package datanode

import (
	"path/filepath"
	"testing"

	"smarth/internal/tune"
)

// A received block is logged to the transfer log with its packets, packet
// size and the net profile's settings as read back from the socket.
func TestTransferLogRecordsProfileInForce(t *testing.T) {
	nn := startFakeNameNode(t)
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.json")
	p := tune.Profile{Name: "test", Settings: map[string]string{"so_rcvbuf": "262144", "tcp_congestion": "reno", "so_busy_poll": "50"}}
	if err := tune.WriteProfileFile(profile, p); err != nil {
		t.Fatal(err)
	}
	dn, _ := startDataNode(t, nn, filepath.Join(dir, "data"), func(c *Config) { c.NetProfile = profile })
	data := randomData(3*64<<10+100, 1)
	writeBlock(t, 1, 1, data, dn)
	var recs []tune.Record
	waitFor(t, "a transfer log record", func() bool {
		recs, _, _ = tune.ReadLogFile(filepath.Join(dir, "data", "transfer.jsonl"), 0)
		return len(recs) == 1
	})
	r := recs[0]
	if r.Bytes != int64(len(data)) || r.Packets != 4 || r.PacketSize != 64<<10 || r.Profile != "test" || r.CPUScope != "process" || r.Client != "test-client" {
		t.Fatalf("record %+v", r)
	}
	got := map[string]tune.State{}
	for _, s := range r.Settings {
		got[s.Setting] = s
	}
	if s := got["so_rcvbuf"]; !s.InForce || s.Got != "524288" {
		t.Errorf("so_rcvbuf read back %+v, want 524288 in force", s)
	}
	if s := got["tcp_congestion"]; !s.InForce || s.Got != "reno" {
		t.Errorf("tcp_congestion read back %+v", s)
	}
	if s := got["so_busy_poll"]; s.InForce {
		t.Errorf("busy polling on loopback counted as in force: %+v", s)
	}
}
