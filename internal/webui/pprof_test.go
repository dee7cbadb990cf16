package webui

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPprofLoopbackOnly: profiles go to a loopback peer, a request from
// another host is refused (403), and a mux without HandlePprof has none.
func TestPprofLoopbackOnly(t *testing.T) {
	mux := http.NewServeMux()
	HandlePprof(mux)
	for remote, want := range map[string]int{
		"127.0.0.1:5000": http.StatusOK, "[::1]:5000": http.StatusOK,
		"10.1.2.3:5000": http.StatusForbidden, "[2001:db8::1]:5000": http.StatusForbidden,
	} {
		req := httptest.NewRequest("GET", "/debug/pprof/cmdline", nil)
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("from %s: %d, want %d", remote, rec.Code, want)
		}
	}
	rec := httptest.NewRecorder()
	http.NewServeMux().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("without HandlePprof: %d, want 404", rec.Code)
	}
}
