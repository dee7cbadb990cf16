package namenode

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestManyOwnersSurviveRestart: inodes hold owner and group serials of an
// in-memory table; the image and the edit log hold names. Many distinct
// owners and groups, set before a checkpoint (loaded from the image) and
// after it (replayed from edits), read back by name after a restart, over
// RPC and in the namespace.
func TestManyOwnersSurviveRestart(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	const files = 300
	owner := func(i int) (string, string) { return fmt.Sprintf("owner-%03d", i), fmt.Sprintf("grp-%02d", i%37) }
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/u", Permission: 0o755, CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if i == files/2 {
			if err := nn.checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
		p := fmt.Sprintf("/u/f%03d", i)
		if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: p, Permission: 0o750}); err != nil {
			t.Fatal(err)
		}
		o, g := owner(i)
		if _, err := c.cp.SetOwner(c.ctx(), &dfspb.SetOwnerRequest{Path: p, Owner: o, Group: g}); err != nil {
			t.Fatal(err)
		}
	}
	before := dumpState(nn)
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, cfg)
	if after := dumpState(nn2); after != before {
		t.Fatalf("namespace changed across a restart\nbefore:\n%s\nafter:\n%s", before, after)
	}
	c2 := dial(t, nn2.Addr(), "hdfs")
	for i := range files {
		p := fmt.Sprintf("/u/f%03d", i)
		st, err := c2.cp.GetFileInfo(c2.ctx(), &dfspb.GetFileInfoRequest{Path: p})
		if err != nil {
			t.Fatal(err)
		}
		o, g := owner(i)
		if fs := st.GetStatus(); fs.GetOwner() != o || fs.GetGroup() != g || fs.GetPermission() != 0o750 {
			t.Fatalf("%s after restart: %s:%s %o; want %s:%s 750", p, fs.GetOwner(), fs.GetGroup(), fs.GetPermission(), o, g)
		}
	}
}

// TestCreateBlockSizeBound: a file's preferred block size is 48 bits of
// its inode's header word (as HDFS's); a larger one is refused at create,
// naming the path, rather than cut short.
func TestCreateBlockSizeBound(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxBlockSize = 1<<48 - 512
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	_, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/big", ClientName: "w", BlockSize: 1 << 48})
	wantErr(t, err, codes.InvalidArgument, "create /big: block size")
	st, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/max", ClientName: "w", BlockSize: 1<<48 - 512})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetStatus().GetBlockSize() != 1<<48-512 {
		t.Errorf("block size %d, want %d", st.GetStatus().GetBlockSize(), uint64(1<<48-512))
	}
}

// TestCreateMaxBlockSize: a create above max_block_size (default 32 GiB,
// HDFS's dfs.namenode.fs-limits.max-block-size) is refused naming the
// path and the key; at the limit it is accepted.
func TestCreateMaxBlockSize(t *testing.T) {
	nn := startNN(t, testConfig(t))
	c := dial(t, nn.Addr(), "hdfs")
	_, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/over", ClientName: "w", BlockSize: 32<<30 + 512})
	wantErr(t, err, codes.InvalidArgument, "create /over: block size 34359738880 is greater than the configured maximum (max_block_size")
	if _, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/at", ClientName: "w", BlockSize: 32 << 30}); err != nil {
		t.Fatal(err)
	}
}
