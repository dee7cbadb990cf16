package cluster

import "testing"

// The namenode's console links to the resource manager's job pages
// (resourcemanager_web) whenever the launcher knows the resource
// manager's web address before the namenode starts, and never points at
// an address the resource manager does not listen on.
func TestNameNodeLinksToResourceManagerWeb(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		wantWeb string // "" = no resourcemanager_web key; "*" = the RM's own http_addr
	}{
		{"given address", Options{NodeManagers: true, ResourceManagerHTTP: "127.0.0.1:18088"}, "127.0.0.1:18088"},
		// Default: 8088 when free (a concrete port, linked), else port 0 (not linked).
		{"default", Options{NodeManagers: true}, "*"},
		// A namenode kept off well-known ports keeps the RM off them too:
		// port 0, unknown when the namenode starts.
		{"isolated", Options{NodeManagers: true, NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0"}, ""},
		{"no MapReduce", Options{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Home, o.Binary, o.DataNodes = t.TempDir(), "/bin/true", 2
			if err := o.setDefaults(); err != nil {
				t.Fatal(err)
			}
			nn := o.nameNodeConfig(layout{o.Home})
			rmHTTP, _ := o.resourceManagerConfig(layout{o.Home}, "127.0.0.1:8020")["http_addr"].(string)
			web, has := nn["resourcemanager_web"].(string)
			want := tc.wantWeb
			if want == "*" && anyPort(rmHTTP) {
				want = ""
			} else if want == "*" {
				want = rmHTTP
			}
			if want == "" && has {
				t.Errorf("namenode resourcemanager_web = %q, want none (resource manager http_addr %q)", web, rmHTTP)
			}
			if want != "" && (web != want || rmHTTP != want) {
				t.Errorf("namenode resourcemanager_web = %q, resource manager http_addr = %q; want both %q", web, rmHTTP, want)
			}
			if tc.name == "isolated" && rmHTTP != "127.0.0.1:0" {
				t.Errorf("resource manager http_addr = %q beside a port-0 namenode, want 127.0.0.1:0", rmHTTP)
			}
		})
	}
}
