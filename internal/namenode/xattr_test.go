package namenode

import (
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestXAttrsSurviveRestarts: extended attributes set and removed over RPC
// are journaled and imaged; flags and namespaces are enforced.
func TestXAttrsSurviveRestarts(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	emptyFile(t, c, "/x/f")
	set := func(c *rpcClient, name string, value []byte, flags uint32) error {
		_, err := c.cp.SetXAttr(c.ctx(), &dfspb.SetXAttrRequest{Path: "/x/f", Xattr: &dfspb.XAttr{Name: name, Value: value}, Flags: flags})
		return err
	}
	for _, x := range []struct {
		name  string
		value []byte
	}{{"user.a", []byte("1")}, {"USER.bin", []byte{0, 0xff}}, {"trusted.t", []byte("t")}, {"user.gone", nil}} {
		if err := set(c, x.name, x.value, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.cp.RemoveXAttr(c.ctx(), &dfspb.RemoveXAttrRequest{Path: "/x/f", Name: "user.gone"}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, set(c, "user.a", nil, 1), codes.FailedPrecondition, "The REPLACE flag must be specified")
	wantErr(t, set(c, "user.a", nil, 0), codes.InvalidArgument, "a flag must be specified")
	alice := dial(t, nn.Addr(), "alice")
	_, err := alice.cp.SetXAttr(alice.ctx(), &dfspb.SetXAttrRequest{Path: "/x/f", Xattr: &dfspb.XAttr{Name: "user.a", Value: []byte("2")}, Flags: 2})
	wantErr(t, err, codes.PermissionDenied, "/x/f")

	check := func(when string, c *rpcClient) {
		t.Helper()
		r, err := c.cp.GetXAttrs(c.ctx(), &dfspb.GetXAttrsRequest{Path: "/x/f"})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, x := range r.GetXattrs() {
			got += x.GetName() + "=" + string(x.GetValue()) + ";"
		}
		if want := "trusted.t=t;user.a=1;user.bin=\x00\xff;"; got != want {
			t.Fatalf("%s: xattrs %q, want %q", when, got, want)
		}
		l, err := alice.cp.ListXAttrs(alice.ctx(), &dfspb.ListXAttrsRequest{Path: "/x/f"})
		if err != nil || len(l.GetNames()) != 2 {
			t.Fatalf("%s: alice lists %v %v (trusted ones are hidden from her)", when, l.GetNames(), err)
		}
	}
	check("live", c)
	nn.Close()
	nn = startNN(t, cfg)
	alice = dial(t, nn.Addr(), "alice")
	check("after replaying the edits", dial(t, nn.Addr(), "hdfs"))
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	nn = startNN(t, cfg)
	alice = dial(t, nn.Addr(), "alice")
	check("after loading the image", dial(t, nn.Addr(), "hdfs"))
}
