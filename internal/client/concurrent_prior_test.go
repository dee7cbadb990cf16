package client

import (
	"bytes"
	"testing"
)

// A new cluster's first upload in multipipeline-concurrent mode has no
// speed records: where the namenode says the client is, its rack-mates are
// presumed fast and datanodes across racks slow. The fake namenode places
// block 1 on dn1 dn2 dn3 and block 2 on dn4 dn5 dn6; block 1's datanodes
// read nothing (no FNFA can come), and nothing was ever measured. Block 2
// must still start and be stored in full:
//   - "rack-mate in flight": dn1 is in the client's rack, so its first
//     hop in progress is not behind the client's cross-rack link;
//   - "free rack-mate": dn1-dn3 are across racks (presumed slow) but dn4, a
//     rack-mate, is free, so the second block does not share the
//     client's cross-rack link.
//
// Without the prior every unmeasured first hop counts as slow and no
// datanode as fast, so block 2 waits for block 1's FNFA in both cases.
func TestConcurrentFirstUploadRackPrior(t *testing.T) {
	for _, tc := range []struct {
		name  string
		racks [6]string
	}{
		{"rack-mate in flight", [6]string{"/a", "/b", "/b", "/b", "/b", "/b"}},
		{"free rack-mate", [6]string{"/b", "/b", "/b", "/a", "/b", "/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFake(t, 6, "multipipeline-concurrent") // n = 6/3 = 2 pipelines
			c.nn.WriterRack = "/a"
			for i, d := range c.dns {
				d.Info.Rack = tc.racks[i]
			}
			// Block 1's datanodes read nothing, whichever of them the
			// client puts first (Algorithm 2 may swap a rack-mate of dn1
			// forward).
			var releases []func()
			for _, d := range c.dns[:3] {
				r := d.HoldReceive()
				releases = append(releases, r)
				t.Cleanup(r)
			}
			data := testData(2*testBlock+7, 5)
			done := asyncPut(t, c.fs, "/p", data)
			waitFor(t, "block 2 stored in full on dn4 while block 1's first datanode, never measured, reads nothing", func() bool {
				blocks, _ := c.nn.FileBlocks("/p")
				if len(blocks) < 2 {
					return false
				}
				got, _, _, ok := c.dns[3].Replica(blocks[1].GetBlockId())
				return ok && len(got) == testBlock
			})
			for _, r := range releases {
				r()
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			c.checkReplicas(t, "/p", data)
			if got := readAll(t, c.fs, "/p"); !bytes.Equal(got, data) {
				t.Fatal("read back differs")
			}
		})
	}
}
