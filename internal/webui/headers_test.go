package webui_test

import (
	"net/http"
	"os/user"
	"testing"

	"smarth/internal/webui"
)

// TestAttackConsolePagesCarrySecurityHeaders is issue 23's hole 9 (the
// headers): every page the console test visits, on every daemon, must
// forbid framing (clickjacking a signed-in operator), content sniffing
// and inline script, and keep its URL out of Referer headers. Before the
// fix no page sent any of them.
func TestAttackConsolePagesCarrySecurityHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and runs a job; skipped in -short mode")
	}
	cl := startConsoleCluster(t)
	me := "smarth"
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	cred := cl.dfs.Credential(me)
	want := map[string]string{
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": webui.ContentSecurityPolicy,
		"Referrer-Policy":         "no-referrer",
	}
	for _, p := range cl.pages() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+cred)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", p.url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s (%s): %s", p.shot, p.url, resp.Status)
		}
		for h, v := range want {
			if got := resp.Header.Get(h); got != v {
				t.Errorf("%s (%s): %s is %q, want %q", p.shot, p.url, h, got, v)
			}
		}
	}
}
