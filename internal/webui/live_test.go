package webui

import (
	"html/template"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLivePageRefreshes: a live page reloads itself every LiveRefresh
// seconds, ?refresh=N changes it (bounded), ?refresh=0 and plain pages do
// not reload, and a bad value falls back to the default.
func TestLivePageRefreshes(t *testing.T) {
	c := Console{Daemon: "test"}
	render := func(url string, live bool) string {
		w := httptest.NewRecorder()
		if live {
			c.LivePage(w, httptest.NewRequest("GET", url, nil), "T", template.HTML("<p>x</p>"))
		} else {
			c.Page(w, "T", template.HTML("<p>x</p>"))
		}
		return w.Body.String()
	}
	meta := func(n string) string { return `<meta http-equiv="refresh" content="` + n + `">` }
	for _, tc := range []struct {
		url  string
		live bool
		want string // "" = no refresh
	}{
		{"/", true, meta("5")},
		{"/?refresh=30", true, meta("30")},
		{"/?refresh=999999", true, meta("3600")},
		{"/?refresh=bad", true, meta("5")},
		{"/?refresh=-3", true, meta("5")},
		{"/?refresh=0", true, ""},
		{"/", false, ""},
	} {
		body := render(tc.url, tc.live)
		has := strings.Contains(body, `http-equiv="refresh"`)
		switch {
		case tc.want == "" && has:
			t.Errorf("%s (live %v) reloads: %s", tc.url, tc.live, body)
		case tc.want != "" && !strings.Contains(body, tc.want):
			t.Errorf("%s (live %v): want %s in %s", tc.url, tc.live, tc.want, body)
		}
	}
}
