package console

import (
	_ "embed"
	"html/template"
	"net/http"

	"smarth/internal/webui"
)

// The console's file manager (/files): list, view, download, upload,
// mkdir and delete, done by the page itself over WebHDFS (web/files.js,
// embedded; no CDN). File bytes go between the browser and a datanode, as
// in HDFS's own UI: the namenode only redirects. The page acts as the user
// the browser names (simple mode: user.name) or proves (secure mode: the
// user's credential, exchanged once for a delegation token kept in the
// tab's sessionStorage), so it can do exactly what that user may.

//go:embed web/files.js
var filesJS []byte

var filesPage = template.Must(template.New("files").Parse(`
<div id=files data-secure="{{.Secure}}">
<form id=who class=bar>{{if .Secure}}
<label>credential <input id=cred type=password size=40 placeholder="contents of your token file" autocomplete=off></label>
<button id=signin type=submit>sign in</button>{{else}}
<label>user <input id=user size=12 value="dr.who"></label> <button id=signin type=submit>use</button>{{end}}
<span id=whoami></span></form>
<p id=crumbs></p>
<form id=mkdir class=bar><label>new directory <input id=dirname size=20></label> <button type=submit>create</button></form>
<form id=upload class=bar><label>upload <input id=file type=file></label> <button id=uploadbtn type=submit>upload</button></form>
<p id=msg role=status></p>
<table id=listing><thead><tr><th>name</th><th>permission</th><th>owner</th><th>group</th><th>size</th><th>replication</th><th>modified</th><th></th></tr></thead>
<tbody></tbody></table>
<h2 id=viewtitle hidden></h2><pre id=view hidden></pre>
</div>
<script src="/static/files.js"></script>`))

func (c *console) filesRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /static/files.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(filesJS)
	})
	mux.HandleFunc("GET /files", func(w http.ResponseWriter, r *http.Request) {
		c.page().Page(w, "Files", webui.Render(filesPage, struct{ Secure bool }{c.cfg.Secure}))
	})
}
