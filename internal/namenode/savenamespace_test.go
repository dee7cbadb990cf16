package namenode

import (
	"fmt"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestSaveNamespace: saveNamespace is a superuser's (HDFS's access
// denied text for anyone else), needs safe mode (HDFS's text), and then
// writes an image holding every edit so far, which a restart loads.
func TestSaveNamespace(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	su := dial(t, nn.Addr(), "hdfs")
	alice := dial(t, nn.Addr(), "alice")
	for i := range 5 {
		if _, err := su.cp.Mkdirs(su.ctx(), &dfspb.MkdirsRequest{Path: fmt.Sprintf("/d%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := alice.cp.SaveNamespace(alice.ctx(), &dfspb.SaveNamespaceRequest{})
	wantErr(t, err, codes.PermissionDenied, "Access denied for user alice. Superuser privilege is required")

	_, err = su.cp.SaveNamespace(su.ctx(), &dfspb.SaveNamespaceRequest{})
	wantErr(t, err, codes.FailedPrecondition, "Safe mode should be turned ON in order to create namespace image.")

	if _, err := su.cp.SetSafeMode(su.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER}); err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(cfg.MetaDir, "image_*"))
	r, err := su.cp.SaveNamespace(su.ctx(), &dfspb.SaveNamespaceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if last := nn.journal.LastTxID(); r.GetTxid() != last || last < 5 {
		t.Errorf("saved image at txid %d, want the last transaction %d (five mkdirs at least)", r.GetTxid(), last)
	}
	images, _ := filepath.Glob(filepath.Join(cfg.MetaDir, "image_*"))
	if len(images) != 1 || fmt.Sprint(images) == fmt.Sprint(before) {
		t.Fatalf("images after saveNamespace: %v (before: %v); want one new image", images, before)
	}
	nn.Close()

	nn2 := startNN(t, cfg)
	c := dial(t, nn2.Addr(), "hdfs")
	for i := range 5 {
		fi, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: fmt.Sprintf("/d%d", i)})
		if err != nil || fi.GetStatus() == nil {
			t.Errorf("after a restart from the saved image, /d%d: %v %v", i, fi, err)
		}
	}
}
