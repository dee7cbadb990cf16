package namenode

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestTypeQuotas: SetQuota with a storage type sets a DISK quota that
// addBlock hits with HDFS's QuotaByStorageTypeExceededException wording;
// the content summary shows each type's quota and consumption; the quotas
// survive a restart from the edits and from an image; -1 clears one; the
// name quota must be left unset and RAM_DISK is refused.
func TestTypeQuotas(t *testing.T) {
	cfg := testConfig(t) // 1 MiB blocks
	nn := startNN(t, cfg)
	var fc *fakeCluster
	// A restarted namenode knows no datanodes until they register again.
	datanodes := func(nn *NameNode) {
		fc = newFakeCluster(t, nn)
		for i := 1; i <= 2; i++ {
			fc.add(fmt.Sprintf("dn%d", i), "/r")
		}
	}
	datanodes(nn)
	c := dial(t, nn.Addr(), "hdfs")
	const keep = math.MaxInt64
	setType := func(c *rpcClient, p, typ string, q int64) error {
		_, err := c.cp.SetQuota(c.ctx(), &dfspb.SetQuotaRequest{Path: p, NsQuota: keep, DsQuota: q, StorageType: typ})
		return err
	}
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/q", Permission: 0o777})
	if err := setType(c, "/q", "DISK", 2<<20); err != nil {
		t.Fatal(err)
	}
	if err := setType(c, "/q", "ssd", 10); err != nil { // HDFS parses the name in any case
		t.Fatal(err)
	}
	writeFile(t, c, fc, "/q/a", 2, 100)

	addBlock := func(c *rpcClient) error {
		cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/q/big", ClientName: "w", Replication: 2, Overwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/q/big", ClientName: "w", FileId: cr.GetStatus().GetFileId()})
		_, err = c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/q/big", ClientName: "w", FileId: cr.GetStatus().GetFileId()})
		return err
	}
	check := func(when string, c *rpcClient) {
		t.Helper()
		c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_LEAVE})
		s := summary(t, c, "/q")
		tq := s.GetTypeQuotas()
		if len(tq) != 2 || tq[0].GetStorageType() != "SSD" || tq[0].GetQuota() != 10 || tq[0].GetConsumed() != 0 ||
			tq[1].GetStorageType() != "DISK" || tq[1].GetQuota() != 2<<20 || tq[1].GetConsumed() != 200 ||
			s.GetQuota() != -1 || s.GetSpaceQuota() != -1 {
			t.Fatalf("%s: summary of /q %v", when, s)
		}
		// 200 B used + a 1 MiB block x 2 replicas > 2 MiB on DISK.
		wantErr(t, addBlock(c), codes.FailedPrecondition,
			"Quota by storage type : DISK on path : /q is exceeded. quota = 2 MB but space consumed = 2.00 MB")
	}
	check("live", c)
	nn.Close()
	nn = startNN(t, cfg)
	datanodes(nn)
	check("after replaying the edits", dial(t, nn.Addr(), "hdfs"))
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	nn = startNN(t, cfg)
	datanodes(nn)
	c = dial(t, nn.Addr(), "hdfs")
	check("after loading the image", c)

	if err := setType(c, "/q", "DISK", -1); err != nil {
		t.Fatal(err)
	}
	if err := addBlock(c); err != nil {
		t.Fatalf("after clearing the DISK quota: %v", err)
	}
	if tq := summary(t, c, "/q").GetTypeQuotas(); len(tq) != 1 || tq[0].GetStorageType() != "SSD" {
		t.Fatalf("after clearing DISK: %v", tq)
	}
	_, err := c.cp.SetQuota(c.ctx(), &dfspb.SetQuotaRequest{Path: "/q", NsQuota: 5, DsQuota: 5, StorageType: "DISK"})
	wantErr(t, err, codes.InvalidArgument, "leaves the name quota unset")
	wantErr(t, setType(c, "/q", "RAM_DISK", 5), codes.InvalidArgument, "not supported for RAM_DISK")
	wantErr(t, setType(c, "/q", "TAPE", 5), codes.InvalidArgument, "unknown storage type")
	alice := dial(t, nn.Addr(), "alice")
	wantErr(t, setType(alice, "/q", "DISK", 5), codes.PermissionDenied, "superuser")
}
