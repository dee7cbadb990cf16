package namenode

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

func summary(t *testing.T, c *rpcClient, p string) *dfspb.GetContentSummaryResponse {
	t.Helper()
	s, err := c.cp.GetContentSummary(c.ctx(), &dfspb.GetContentSummaryRequest{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestQuotas: name quotas stop mkdir, create and rename into the
// directory; space quotas stop addBlock and setReplication, counting a
// block being written at its full size; messages are HDFS's; only a
// superuser sets quotas; quotas and their usage survive restarts (edits,
// then image).
func TestQuotas(t *testing.T) {
	cfg := testConfig(t) // 1 MiB blocks
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	setQuota := func(p string, ns, ds int64) error {
		_, err := c.cp.SetQuota(c.ctx(), &dfspb.SetQuotaRequest{Path: p, NsQuota: ns, DsQuota: ds})
		return err
	}
	const keep = math.MaxInt64
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/q", Permission: 0o777})
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/other/sub", CreateParent: true})
	if err := setQuota("/q", 3, keep); err != nil {
		t.Fatal(err)
	}
	alice := dial(t, nn.Addr(), "alice")
	_, err := alice.cp.SetQuota(alice.ctx(), &dfspb.SetQuotaRequest{Path: "/q", NsQuota: 10, DsQuota: keep})
	wantErr(t, err, codes.PermissionDenied, "superuser")

	writeFile(t, c, fc, "/q/a", 2, 100)
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/q/d"})
	_, err = c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/q/b", ClientName: "w"})
	wantErr(t, err, codes.FailedPrecondition, "The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4")
	_, err = c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/q/d/e"})
	wantErr(t, err, codes.FailedPrecondition, "quota=3 file count=4")
	_, err = c.cp.Rename(c.ctx(), &dfspb.RenameRequest{Src: "/other/sub", Dst: "/q/d"})
	wantErr(t, err, codes.FailedPrecondition, "of directory /q is exceeded")
	if _, err := c.cp.Rename(c.ctx(), &dfspb.RenameRequest{Src: "/q/d", Dst: "/q/d2"}); err != nil {
		t.Fatalf("a rename inside the quota directory needs no room: %v", err)
	}

	// Space: 2 replicas x 100 B are used; a new block charges 1 MiB x 2.
	if err := setQuota("/q", 10, 2<<20); err != nil {
		t.Fatal(err)
	}
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/q/big", ClientName: "w", Replication: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/q/big", ClientName: "w", FileId: cr.GetStatus().GetFileId()})
	wantErr(t, err, codes.FailedPrecondition, "The DiskSpace quota of /q is exceeded: quota = 2097152 B = 2 MB but diskspace consumed = 2097352 B = 2.00 MB")
	c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/q/big", ClientName: "w", FileId: cr.GetStatus().GetFileId()})
	if err := setQuota("/q", keep, 250); err != nil {
		t.Fatal(err)
	}
	_, err = c.cp.SetReplication(c.ctx(), &dfspb.SetReplicationRequest{Path: "/q/a", Replication: 3})
	wantErr(t, err, codes.FailedPrecondition, "The DiskSpace quota of /q is exceeded: quota = 250 B = 250 B but diskspace consumed = 300 B = 300 B")
	// A quota below the usage is allowed; it only stops growth.
	if err := setQuota("/q", 2, keep); err != nil {
		t.Fatal(err)
	}

	check := func(when string, c *rpcClient) {
		t.Helper()
		// No datanodes report after a restart: leave safe mode by hand.
		c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_LEAVE})
		s := summary(t, c, "/q")
		if s.GetQuota() != 2 || s.GetSpaceQuota() != 250 || s.GetSpaceConsumed() != 200 || s.GetFileCount() != 2 || s.GetDirectoryCount() != 2 {
			t.Fatalf("%s: summary of /q %v", when, s)
		}
		if s := summary(t, c, "/other"); s.GetQuota() != -1 || s.GetSpaceQuota() != -1 {
			t.Fatalf("%s: /other has quotas %v", when, s)
		}
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/q/x"})
		wantErr(t, err, codes.FailedPrecondition, "quota=2 file count=5")
	}
	check("live", c)
	nn.Close()
	nn = startNN(t, cfg)
	check("after replaying the edits", dial(t, nn.Addr(), "hdfs"))
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	nn = startNN(t, cfg)
	c = dial(t, nn.Addr(), "hdfs")
	check("after loading the image", c)
	// Clearing both quotas removes them; the root's name quota cannot be cleared.
	if err := setQuota("/q", -1, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/q/x"}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, setQuota("/", -1, keep), codes.InvalidArgument, "cannot clear namespace quota on root")
	wantErr(t, setQuota("/q/a", 5, keep), codes.FailedPrecondition, "not a directory")
	wantErr(t, setQuota("/q", -7, keep), codes.InvalidArgument, "illegal value")
}
