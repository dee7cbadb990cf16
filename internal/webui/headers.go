package webui

import "net/http"

// ContentSecurityPolicy is what every console page may load: its own
// daemon's stylesheet and script, icons inlined as data: URLs, and (for
// the namenode's file manager, which streams file bytes to and from the
// datanodes WebHDFS redirects it to) fetches to other cluster daemons.
// No inline script or style, no plugins, no framing by any page, no
// <base> rewriting, forms only to the daemon itself.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self' http: https:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// SecureHeaders sets the browser security headers on every response of
// h (issue 23, hole 9), the one place every daemon's HTTP handler passes
// through: a console page cannot be framed (clickjacking), a response is
// never sniffed into another type (a task log rendered as HTML), pages
// carry the CSP above, and links to other daemons do not leak the URL
// (its query may hold a path or a delegation token) as a Referer.
func SecureHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}
