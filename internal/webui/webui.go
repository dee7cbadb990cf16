package webui

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed assets/console.css
var assets embed.FS

// CSSPath is where Handle serves the shared stylesheet.
const CSSPath = "/static/console.css"

// Link is one entry of a page's navigation bar.
type Link struct{ Name, Href string }

// frame wraps a page body: every console page has the same head, the
// daemon's name and its navigation, so pages differ only in content.
var frame = template.Must(template.New("frame").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">{{if .Refresh}}<meta http-equiv="refresh" content="{{.Refresh}}">{{end}}<title>{{.Title}} · smarth {{.Daemon}}</title>
<link rel="stylesheet" href="` + CSSPath + `"><link rel="icon" href="data:,">
</head><body>
<header><b>smarth {{.Daemon}}</b>{{range .Nav}} <a href="{{.Href}}">{{.Name}}</a>{{end}}</header>
<main><h1>{{.Title}}</h1>
{{.Body}}
</main>
<footer>rendered {{.Now}}{{if .Refresh}} · reloads every {{.Refresh}} s (?refresh=0 stops it){{end}}</footer>
</body></html>
`))

// Console is one daemon's web console: its name and navigation.
type Console struct {
	Daemon string
	Nav    []Link
}

// Handle registers the stylesheet, /favicon.ico, /healthz (health reports
// whether the daemon considers itself serving; nil means always) and /conf
// (cfg as the daemon runs with it, secrets redacted) on mux.
func (c Console) Handle(mux *http.ServeMux, cfg func() any, health func() error) {
	mux.HandleFunc(CSSPath, func(w http.ResponseWriter, r *http.Request) {
		b, _ := assets.ReadFile("assets/console.css")
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(b)
	})
	// Console pages name no icon (data:), but a browser showing a text
	// page (/conf, /healthz, logs, REST, metrics) asks for /favicon.ico;
	// a 404 there is an error in the browser's console on every daemon.
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=86400")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if health != nil {
			if err := health(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "unhealthy: %v\n", err)
				return
			}
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/conf", func(w http.ResponseWriter, r *http.Request) { ServeConf(w, r, cfg()) })
}

// Page renders body (already safe HTML) inside the console frame.
func (c Console) Page(w http.ResponseWriter, title string, body template.HTML) {
	c.page(w, title, body, 0)
}

// LiveRefresh is how often a live page (one whose figures change while
// it is watched: running jobs, nodes, the namenode's overview) reloads
// itself, unless the URL says otherwise (?refresh=SECONDS, 0 to stop).
const LiveRefresh = 5

// maxRefresh bounds ?refresh: an hour.
const maxRefresh = 3600

// LivePage is Page for a live page: it reloads every LiveRefresh seconds,
// or as r's ?refresh=SECONDS asks (0: not at all).
func (c Console) LivePage(w http.ResponseWriter, r *http.Request, title string, body template.HTML) {
	every := LiveRefresh
	if v := r.URL.Query().Get("refresh"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			every = min(n, maxRefresh)
		}
	}
	c.page(w, title, body, every)
}

func (c Console) page(w http.ResponseWriter, title string, body template.HTML, refresh int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	frame.Execute(w, struct {
		Daemon, Title, Now string
		Nav                []Link
		Body               template.HTML
		Refresh            int
	}{c.Daemon, title, time.Now().Format(time.RFC3339), c.Nav, body, refresh})
}

// Render executes t with data into safe HTML for Page; an error is shown
// in the page rather than half a page.
func Render(t *template.Template, data any) template.HTML {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return template.HTML("<p class=err>" + template.HTMLEscapeString(err.Error()) + "</p>")
	}
	return template.HTML(b.String())
}

// ServeConf writes cfg as YAML, or JSON when ?format=json or the client
// asks for application/json. Fields tagged yaml:"-" (functions, test
// hooks) are never shown; values of secret-looking keys are redacted.
func ServeConf(w http.ResponseWriter, r *http.Request, cfg any) {
	m := Redact(cfg)
	if r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(m)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	yaml.NewEncoder(w).Encode(m)
}

// Redact turns cfg into a map by its YAML names (durations as text) with
// the values of secret-looking keys replaced.
func Redact(cfg any) map[string]any {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return map[string]any{"error": err.Error()}
	}
	redactMap(m)
	return m
}

// secretWords mark keys whose values are not shown (as Hadoop's
// hadoop.security.sensitive-config-keys does by pattern).
var secretWords = []string{"secret", "password", "passwd", "credential", "private_key", "keytab"}

func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return strings.HasSuffix(k, "_token") || k == "token"
}

func redactMap(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			redactMap(x)
		default:
			if secretKey(k) && v != nil && !reflect.ValueOf(v).IsZero() {
				m[k] = "<redacted>"
			}
		}
	}
}

// Ago renders how long ago t was, or "-" for the zero time.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}
