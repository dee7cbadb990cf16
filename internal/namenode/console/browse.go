package console

import (
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
	"smarth/internal/webui"
)

// The console's explorer is read-only and goes through the same
// handlers as ClientProtocol's GetListing, GetFileInfo and
// GetBlockLocations, as the web user: it sees what the permissions show to
// "others", nothing more, and works without JavaScript. Upload, download,
// mkdir and delete are on /files (files.go), which does them over
// WebHDFS as the signed-in user: file bytes are served by datanodes
// there, as in HDFS, where the namenode only redirects.

// WebUser is who the console browses as: Hadoop's default
// hadoop.http.staticuser.user, a user who owns nothing and is in no group.
// The namenode answers the console's FileInfo, Listing and BlockLocations
// as this user.
const WebUser = "dr.who"

// browsePath reads ?path=, defaulting to /.
func browsePath(r *http.Request) string {
	p := r.URL.Query().Get("path")
	if p == "" {
		return "/"
	}
	return path.Clean("/" + p)
}

var explorerPage = template.Must(template.New("explorer").Parse(`
<p>{{range .Crumbs}}<a href="/explorer?path={{.Path}}">{{.Name}}</a> / {{end}}</p>
<p>Browsing as <b>{{.User}}</b>, read-only; to act as yourself (upload, download, mkdir, delete) use <a href="/files?path={{.Path}}">files</a>, which works over WebHDFS.</p>
{{if .Err}}<p class=err>{{.Err}}</p>{{else}}
<table><tr><th>name</th><th>permission</th><th>owner</th><th>group</th><th>size</th><th>replication</th><th>block size</th><th>modified</th></tr>
{{range .Entries}}<tr><td>{{if .Href}}<a href="{{.Href}}">{{.Name}}</a>{{else}}<span title="not readable as {{$.User}}">{{.Name}}</span>{{end}}</td><td>{{.Perm}}</td><td>{{.Owner}}</td><td>{{.Group}}</td><td class=n>{{.Size}}</td>
<td class=n>{{.Repl}}</td><td class=n>{{.BlockSize}}</td><td>{{.Mod}}</td></tr>
{{else}}<tr><td colspan=8>empty directory</td></tr>{{end}}</table>
{{if .More}}<p><a href="{{.More}}">next page</a></p>{{end}}{{end}}`))

// crumb is one step of the path above a listing. Path is the raw DFS
// path: the template query-escapes it where it lands in the URL, so it
// must not be escaped here too (that made "/user" into path=%252Fuser).
type crumb struct{ Name, Path string }

type browseEntry struct {
	Name, Href, Perm, Owner, Group, Size, Repl, BlockSize, Mod string
}

func crumbs(p string) []crumb {
	out := []crumb{{"(root)", "/"}}
	acc := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		acc += "/" + part
		out = append(out, crumb{part, acc})
	}
	return out
}

func modeString(st *dfspb.FileStatus) string {
	m := fs.FileMode(st.GetPermission() & 0o777)
	if st.GetType() == dfspb.FileType_DIRECTORY {
		m |= fs.ModeDir
	}
	return m.String()
}

func statusEntry(st *dfspb.FileStatus) browseEntry {
	e := browseEntry{Name: path.Base(st.GetPath()), Perm: modeString(st), Owner: st.GetOwner(), Group: st.GetGroup(),
		Mod: time.UnixMilli(st.GetModificationTimeMs()).Format("2006-01-02 15:04:05")}
	if st.GetType() == dfspb.FileType_DIRECTORY {
		e.Href, e.Size, e.Repl, e.BlockSize = "/explorer?path="+url.QueryEscape(st.GetPath()), "-", "-", "-"
		e.Name += "/"
	} else {
		e.Href = "/file?path=" + url.QueryEscape(st.GetPath())
		e.Size, e.Repl, e.BlockSize = units.FormatSize(st.GetLength()), fmt.Sprint(st.GetReplication()), units.FormatSize(st.GetBlockSize())
	}
	if !webUserMay(st) {
		e.Href = "" // a link that could only answer 403: the name alone
	}
	return e
}

// webUserMay reports whether WebUser, who is in no group, may open st:
// list a directory (r and x) or read a file (r), by the owner's bits if
// it is WebUser's, else the others' (ACLs aside: the namenode decides on
// the click all the same).
func webUserMay(st *dfspb.FileStatus) bool {
	bits := st.GetPermission() & 0o7
	if st.GetOwner() == WebUser {
		bits = st.GetPermission() >> 6 & 0o7
	}
	if st.GetType() == dfspb.FileType_DIRECTORY {
		return bits&0o5 == 0o5
	}
	return bits&0o4 != 0
}

// serveExplorer lists a directory (a page of up to 1000 entries).
func (c *console) serveExplorer(w http.ResponseWriter, r *http.Request) {
	p := browsePath(r)
	data := struct {
		Crumbs          []crumb
		User, Err, Path string
		Entries         []browseEntry
		More            string
	}{Crumbs: crumbs(p), User: WebUser, Path: p}
	st, err := c.nn.FileInfo(r.Context(), p)
	if err == nil && st.GetType() != dfspb.FileType_DIRECTORY {
		http.Redirect(w, r, "/file?path="+url.QueryEscape(p), http.StatusFound)
		return
	}
	var resp *dfspb.GetListingResponse
	if err == nil {
		resp, err = c.nn.Listing(r.Context(), &dfspb.GetListingRequest{Path: p, StartAfter: r.URL.Query().Get("after")})
	}
	if err != nil {
		w.WriteHeader(httpStatus(err))
		data.Err = err.Error()
	}
	for _, e := range resp.GetEntries() {
		data.Entries = append(data.Entries, statusEntry(e))
	}
	if resp.GetRemaining() > 0 && len(data.Entries) > 0 {
		data.More = "/explorer?path=" + url.QueryEscape(p) + "&after=" + url.QueryEscape(strings.TrimSuffix(data.Entries[len(data.Entries)-1].Name, "/"))
	}
	c.page().Page(w, "Browse "+p, webui.Render(explorerPage, data))
}

var filePage = template.Must(template.New("file").Parse(`
<p>{{range .Crumbs}}<a href="/explorer?path={{.Path}}">{{.Name}}</a> / {{end}}</p>
{{if .Err}}<p class=err>{{.Err}}</p>{{else}}
<table class=kv>
<tr><td>path</td><td>{{.Path}}</td></tr><tr><td>size</td><td>{{.E.Size}} ({{.Length}} bytes)</td></tr>
<tr><td>permission</td><td>{{.E.Perm}}</td></tr><tr><td>owner / group</td><td>{{.E.Owner}} / {{.E.Group}}</td></tr>
<tr><td>replication</td><td>{{.E.Repl}}</td></tr><tr><td>block size</td><td>{{.E.BlockSize}}</td></tr>
<tr><td>modified</td><td>{{.E.Mod}}</td></tr><tr><td>accessed</td><td>{{.Access}}</td></tr>
<tr><td>file id</td><td>{{.ID}}</td></tr><tr><td>state</td><td>{{if .Open}}open for writing{{else}}complete{{end}}</td></tr>
</table>
<h2>Blocks</h2>
<table><tr><th>#</th><th>block</th><th>generation stamp</th><th>offset</th><th>size</th><th>replicas (host, rack)</th><th>cached on</th><th>corrupt</th></tr>
{{range $i, $b := .Blocks}}<tr><td class=n>{{$i}}</td><td>blk_{{$b.ID}}</td><td class=n>{{$b.Stamp}}</td><td class=n>{{$b.Offset}}</td><td class=n>{{$b.Size}}</td>
<td>{{range $b.Replicas}}{{.}}<br>{{end}}</td><td>{{range $b.Cached}}{{.}} {{end}}</td><td>{{if $b.Corrupt}}<span class=err>yes</span>{{else}}no{{end}}</td></tr>
{{else}}<tr><td colspan=8>no blocks (an empty file)</td></tr>{{end}}</table>{{end}}`))

type browseBlock struct {
	ID, Stamp        uint64
	Offset           int64
	Size             string
	Replicas, Cached []string
	Corrupt          bool
}

// serveFile shows one file's status and where each of its blocks is.
func (c *console) serveFile(w http.ResponseWriter, r *http.Request) {
	p := browsePath(r)
	ctx := r.Context()
	data := struct {
		Crumbs            []crumb
		Path, Err, Access string
		E                 browseEntry
		Length            int64
		ID                uint64
		Open              bool
		Blocks            []browseBlock
	}{Crumbs: crumbs(path.Dir(p)), Path: p}
	st, err := c.nn.FileInfo(ctx, p)
	if err == nil && st.GetType() == dfspb.FileType_DIRECTORY {
		http.Redirect(w, r, "/explorer?path="+url.QueryEscape(p), http.StatusFound)
		return
	}
	var lbs *dfspb.LocatedBlocks
	if err == nil {
		lbs, err = c.nn.BlockLocations(ctx, &dfspb.GetBlockLocationsRequest{Path: p})
	}
	if err != nil {
		w.WriteHeader(httpStatus(err))
		data.Err = err.Error()
		c.page().Page(w, "File "+p, webui.Render(filePage, data))
		return
	}
	data.E, data.Length, data.ID, data.Open = statusEntry(st), st.GetLength(), st.GetFileId(), st.GetUnderConstruction()
	data.Access = time.UnixMilli(st.GetAccessTimeMs()).Format("2006-01-02 15:04:05")
	hosts := c.nn.DatanodeHosts()
	for _, lb := range lbs.GetBlocks() {
		b := browseBlock{ID: lb.GetBlock().GetBlockId(), Stamp: lb.GetBlock().GetGenerationStamp(), Offset: lb.GetOffset(),
			Size: units.FormatSize(lb.GetBlock().GetNumBytes()), Corrupt: lb.GetCorrupt()}
		for _, d := range lb.GetLocations() {
			b.Replicas = append(b.Replicas, fmt.Sprintf("%s (%s)", d.GetHostname(), d.GetRack()))
		}
		for _, id := range lb.GetCachedOn() {
			b.Cached = append(b.Cached, hosts[id])
		}
		data.Blocks = append(data.Blocks, b)
	}
	c.page().Page(w, "File "+p, webui.Render(filePage, data))
}

// httpStatus maps a handler's gRPC error to an HTTP status.
func httpStatus(err error) int {
	switch status.Code(err) {
	case codes.NotFound:
		return http.StatusNotFound
	case codes.PermissionDenied, codes.Unauthenticated:
		return http.StatusForbidden
	case codes.InvalidArgument:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
