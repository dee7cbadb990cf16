package webui

import (
	"net"
	"net/http"
	"net/http/pprof"
)

// HandlePprof serves Go profiles under /debug/pprof/ to loopback callers
// only. Profiles show memory contents (heap), command lines and let a
// caller burn a CPU for a profile's duration, so a daemon serves them only
// when its config asks (pprof: true) and, even then, never to another host:
// reach them from the node itself or through an SSH tunnel.
func HandlePprof(mux *http.ServeMux) {
	for path, h := range map[string]http.HandlerFunc{
		"/debug/pprof/":        pprof.Index,
		"/debug/pprof/profile": pprof.Profile,
		"/debug/pprof/trace":   pprof.Trace,
		"/debug/pprof/symbol":  pprof.Symbol,
		"/debug/pprof/cmdline": pprof.Cmdline,
	} {
		mux.Handle(path, loopbackOnly(h))
	}
}

// loopbackOnly refuses requests whose peer is not a loopback address.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			http.Error(w, "profiles are served to loopback clients only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
