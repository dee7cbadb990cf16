package namenode

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// The console's pages: the file browser (a listing, a file, a directory
// the web user may not read, a missing path), the journal, /healthz,
// /conf and the capacity metrics.
func TestConsolePages(t *testing.T) {
	cfg := testConfig(t)
	cfg.ResourceManagerWeb = "rm.example:8088"
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	fc.add("dn1", "/rack-a")
	c := dial(t, nn.Addr(), "hdfs")
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/d/e", Permission: 0o755, CreateParent: true})
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/d/f", ClientName: "c1", Permission: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/d/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()})
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/private", Permission: 0o700})
	// Redirects are checked, not followed.
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		resp, err := hc.Get("http://" + nn.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	cases := []struct {
		path string
		code int
		want []string
	}{
		{"/", 200, []string{"Capacity", "100.0 GiB", "healthy", "http://rm.example:8088/", "/explorer?path=/"}},
		{"/explorer?path=/d", 200, []string{`href="/explorer?path=%2Fd%2Fe"`, "e/", `href="/file?path=%2Fd%2Ff"`, "-rw-r--r--", "hdfs", "dr.who"}},
		{"/explorer?path=/d/f", 302, nil},
		{"/file?path=/d/f", 200, []string{"/d/f", "complete", "no blocks"}},
		{"/file?path=/nope", 404, []string{"/nope"}},
		{"/explorer?path=/private", 403, []string{"ermission"}},
		{"/journal", 200, []string{"last transaction id", "writable"}},
		{"/healthz", 200, []string{"ok"}},
		{"/conf", 200, []string{"meta_dir:", "resourcemanager_web: rm.example:8088"}},
		{"/conf?format=json", 200, []string{`"rpc_addr"`}},
		{"/metrics", 200, []string{"smarth_namenode_capacity_total_bytes 1.073741824e+11", "smarth_namenode_capacity_remaining_bytes"}},
		{"/static/console.css", 200, []string{"table"}},
		{"/nosuchpage", 404, nil},
	}
	for _, tc := range cases {
		code, page := get(tc.path)
		if code != tc.code {
			t.Errorf("GET %s: %d, want %d\n%s", tc.path, code, tc.code, page)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(page, w) {
				t.Errorf("GET %s lacks %q:\n%s", tc.path, w, page)
			}
		}
	}
}
