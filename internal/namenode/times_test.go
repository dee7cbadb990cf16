package namenode

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// emptyFile creates and closes a file with no blocks.
func emptyFile(t *testing.T, c *rpcClient, path string) {
	t.Helper()
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: "w", CreateParent: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: path, ClientName: "w", FileId: cr.GetStatus().GetFileId()})
	if err != nil || !r.GetCompleted() {
		t.Fatalf("complete %s: %v %v", path, r, err)
	}
}

func times(t *testing.T, c *rpcClient, path string) (mtime, atime int64) {
	t.Helper()
	st, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return st.GetStatus().GetModificationTimeMs(), st.GetStatus().GetAccessTimeMs()
}

func open(t *testing.T, c *rpcClient, path string) {
	t.Helper()
	if _, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: path}); err != nil {
		t.Fatal(err)
	}
}

// TestSetTimesAndAccessTime: setTimes keeps what -1 names, needs write
// access, works on directories; opening records the access time only when
// the recorded one is older than the precision; all of it survives a
// restart, from the edit log and from an image.
func TestSetTimesAndAccessTime(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	emptyFile(t, c, "/d/f")
	emptyFile(t, c, "/d/g")
	c.cp.SetPermission(c.ctx(), &dfspb.SetPermissionRequest{Path: "/d/f", Permission: 0o644})

	if _, err := c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/d/f", MtimeMs: 1000, AtimeMs: -1}); err != nil {
		t.Fatal(err)
	}
	_, atime0 := times(t, c, "/d/f")
	if m, a := times(t, c, "/d/f"); m != 1000 || a != atime0 {
		t.Fatalf("after setTimes(1000, -1): mtime %d atime %d", m, a)
	}
	if _, err := c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/d", MtimeMs: 7, AtimeMs: 8}); err != nil {
		t.Fatal(err)
	}
	m := dial(t, nn.Addr(), "mallory")
	_, err := m.cp.SetTimes(m.ctx(), &dfspb.SetTimesRequest{Path: "/d/f", MtimeMs: 1, AtimeMs: 1})
	wantErr(t, err, codes.PermissionDenied, "/d/f")
	_, err = c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/d/nope", MtimeMs: 1, AtimeMs: -1})
	wantErr(t, err, codes.NotFound, "/d/nope")

	// An access time older than the precision (1 h) is renewed on open,
	// a recent one is not.
	c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/d/f", MtimeMs: -1, AtimeMs: 5000})
	before := time.Now().UnixMilli()
	open(t, c, "/d/f")
	if _, a := times(t, c, "/d/f"); a < before {
		t.Fatalf("open left access time %d (opened at %d)", a, before)
	}
	recent := time.Now().UnixMilli() - 60_000
	c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/d/g", MtimeMs: -1, AtimeMs: recent})
	open(t, c, "/d/g")
	if _, a := times(t, c, "/d/g"); a != recent {
		t.Fatalf("open within the precision changed the access time %d to %d", recent, a)
	}

	check := func(when string, c *rpcClient) {
		t.Helper()
		if m, a := times(t, c, "/d"); m != 7 || a != 8 {
			t.Fatalf("%s: /d times %d %d, want 7 8", when, m, a)
		}
		if m, a := times(t, c, "/d/f"); m != 1000 || a < before {
			t.Fatalf("%s: /d/f times %d %d", when, m, a)
		}
		if _, a := times(t, c, "/d/g"); a != recent {
			t.Fatalf("%s: /d/g atime %d, want %d", when, a, recent)
		}
	}
	wantState := dumpState(nn)
	nn.Close()
	nn = startNN(t, cfg) // edits replayed
	check("after replaying the edit log", dial(t, nn.Addr(), "hdfs"))
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	nn = startNN(t, cfg) // from the image
	check("after loading the image", dial(t, nn.Addr(), "hdfs"))
	if got := dumpState(nn); got != wantState {
		t.Fatalf("state changed across restarts\nbefore:\n%s\nafter:\n%s", wantState, got)
	}
}

// TestAccessTimeOff: with precision 0 opening never writes and setTimes
// refuses an access time (but takes a modification time).
func TestAccessTimeOff(t *testing.T) {
	cfg := testConfig(t)
	cfg.AccessTimePrecision = 0
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	emptyFile(t, c, "/f")
	_, a0 := times(t, c, "/f")
	tx := nn.journal.LastTxID()
	time.Sleep(5 * time.Millisecond)
	open(t, c, "/f")
	if _, a := times(t, c, "/f"); a != a0 || nn.journal.LastTxID() != tx {
		t.Fatalf("open with access times off: atime %d -> %d, txid %d -> %d", a0, a, tx, nn.journal.LastTxID())
	}
	_, err := c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/f", MtimeMs: 1, AtimeMs: 2})
	wantErr(t, err, codes.InvalidArgument, "access_time_precision")
	if _, err := c.cp.SetTimes(c.ctx(), &dfspb.SetTimesRequest{Path: "/f", MtimeMs: 1, AtimeMs: -1}); err != nil {
		t.Fatal(err)
	}
}
