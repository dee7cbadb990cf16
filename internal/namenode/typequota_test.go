package namenode

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/namenode/namespace"
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

// TestTypeQuotaImageRecord: a directory's type quotas round-trip through
// its image record; a version 4 record (none) still decodes, also as the
// current version, as snapshot inodes of an old image are decoded.
func TestTypeQuotaImageRecord(t *testing.T) {
	d, err := namespace.NewINode(5, "q", true, 0o755, "", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.SetQuota(&namespace.Quota{NS: 10, DS: -1, Types: map[string]int64{"DISK": 1 << 30, "SSD": 7}})
	var e enc
	encodeINode(&e, d)
	_, got, _, _, err := decodeINode(e.b, imageVersion)
	if err != nil || got.Quota() == nil || !reflect.DeepEqual(got.Quota().Types, d.Quota().Types) || got.Quota().NS != 10 || got.Quota().DS != -1 {
		t.Fatalf("round trip: %+v, %v", got.Quota(), err)
	}
	d.Quota().Types = nil
	e.b = e.b[:0]
	encodeINode(&e, d)
	v4 := e.b[:len(e.b)-1] // without the type count (0), as version 4 wrote it
	for _, v := range []uint64{4, imageVersion} {
		_, got, _, _, err := decodeINode(v4, v)
		if err != nil || got.Quota() == nil || got.Quota().NS != 10 || got.Quota().Types != nil {
			t.Fatalf("version 4 record read as %d: %+v, %v", v, got, err)
		}
	}
	bad := append(append([]byte{}, v4...), 1, 4, 'T', 'A', 'P', 'E', 2)
	if _, _, _, _, err := decodeINode(bad, imageVersion); err == nil {
		t.Fatal("an unknown storage type in an image decoded")
	} else if !strings.Contains(err.Error(), `unknown storage type "TAPE"`) {
		t.Fatalf("unknown storage type: %v", err)
	}
}
