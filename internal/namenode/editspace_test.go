package namenode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/testfs"
)

// fill leaves about leave bytes free on dir's file system, with a file
// the caller removes to give the space back.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	if err := os.WriteFile(p, make([]byte, max(testfs.Free(t, dir)-leave, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(t *testing.T, c *rpcClient, p string) bool {
	t.Helper()
	resp, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: p})
	if status.Code(err) == codes.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("getFileInfo %s: %v", p, err)
	}
	return resp.GetStatus() != nil
}

// With meta_dir's file system below resource_du_reserved the namenode
// refuses mutations, naming the path and the setting, and applies none of
// them; once space is freed it accepts them again by itself.
func TestNameNodeRefusesMutationsWhenMetaDirIsLow(t *testing.T) {
	meta := testfs.Tmpfs(t, "8m")
	cfg := testConfig(t)
	cfg.MetaDir = filepath.Join(meta, "nn")
	cfg.ResourceDuReserved = 2 << 20
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/before", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, meta, 1<<20)

	var refused string
	waitFor(t, "the namenode to notice meta_dir is below resource_du_reserved and refuse a mkdir", func() bool {
		p := fmt.Sprintf("/low/d%d", len(refused))
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: p, CreateParent: true})
		if err == nil {
			refused += "x" // a new name for the next attempt
			return false
		}
		st, _ := status.FromError(err)
		if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), p) || !strings.Contains(st.Message(), "resource_du_reserved") {
			t.Fatalf("mkdir %s with meta_dir low on space: %v; want Unavailable naming the path and resource_du_reserved", p, err)
		}
		refused = p
		return true
	})
	if exists(t, c, refused) {
		t.Fatalf("refused mkdir %s was applied", refused)
	}
	if !exists(t, c, "/before") {
		t.Fatal("/before is gone")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the namenode to accept a mkdir once space is freed", func() bool {
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/after", CreateParent: true})
		return err == nil
	})
}

// With the free-space check off, the edit log itself runs out of room:
// the mutation whose record found none fails with a clear Unavailable
// (not acknowledged, held in memory), the next is refused outright and
// not applied, the namenode keeps serving reads, and once space is freed
// the held record is written and mutations go through. After a restart
// the log loads whole: the held operation is there, the refused one not.
func TestNameNodeEditLogOutOfSpace(t *testing.T) {
	meta := testfs.Tmpfs(t, "8m")
	cfg := testConfig(t)
	cfg.MetaDir = filepath.Join(meta, "nn")
	cfg.ResourceDuReserved = 0
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/before", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, meta, 0)

	// Long paths make big records, so the preallocated zeros run out
	// after a few hundred calls.
	long := strings.Repeat("n", 200)
	var held string
	for i := range 2000 {
		p := fmt.Sprintf("/full/%d/%s/%s/%s/%s/%s", i, long, long, long, long, long)
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: p, CreateParent: true})
		if err == nil {
			continue
		}
		st, _ := status.FromError(err)
		if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "out of space") || !strings.Contains(st.Message(), "not acknowledged") {
			t.Fatalf("mkdir %d when the edit log's disk is full: %v; want Unavailable saying it is out of space and not acknowledged", i, err)
		}
		held = p
		break
	}
	if held == "" {
		t.Fatal("2000 mkdirs with long paths and the edit log's file system full, and none failed")
	}
	_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/refused", CreateParent: true})
	wantErr(t, err, codes.Unavailable, "/refused: the namenode's edit log is out of space")
	if exists(t, c, "/refused") {
		t.Fatal("a mkdir refused for want of space was applied")
	}
	if !exists(t, c, "/before") {
		t.Fatal("reads stopped working with the edit log out of space")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the namenode to write the held record and accept a mkdir once space is freed", func() bool {
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/after", CreateParent: true})
		return err == nil
	})
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, cfg)
	c2 := dial(t, nn2.Addr(), "hdfs")
	for p, want := range map[string]bool{"/before": true, held: true, "/after": true, "/refused": false} {
		if got := exists(t, c2, p); got != want {
			t.Errorf("after restart, %.60s... exists = %v, want %v", p, got, want)
		}
	}
}
