package console

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/webui"
)

// Config is what the console shows that does not change while the
// namenode runs.
type Config struct {
	ResourceManagerWeb string // resourcemanager_web: the nav links to its jobs
	Secure             bool   // secure mode: the file manager asks for a credential
	Clock              func() time.Time
}

// Namenode is what the console reads of the namenode.
type Namenode interface {
	Overview() Overview
	Journal() Journal
	// Health is nil when the namenode is healthy (/healthz).
	Health() error
	// Conf is the running configuration (/conf).
	Conf() any
	// DatanodeHosts maps datanode ids to hostnames.
	DatanodeHosts() map[string]string
	// FileInfo, Listing and BlockLocations are ClientProtocol's
	// GetFileInfo, GetListing and GetBlockLocations, through the same
	// handlers, as the web user (WebUser): the permissions decide.
	FileInfo(ctx context.Context, path string) (*dfspb.FileStatus, error)
	Listing(ctx context.Context, req *dfspb.GetListingRequest) (*dfspb.GetListingResponse, error)
	BlockLocations(ctx context.Context, req *dfspb.GetBlockLocationsRequest) (*dfspb.LocatedBlocks, error)
}

// Journal is the edit log and checkpoint state the journal page shows.
type Journal struct {
	Dir                string // meta_dir
	LastTxID, CkptTxID uint64
	CkptAt             time.Time
	EveryTxns          uint64        // checkpoint_txns
	Every              time.Duration // checkpoint_period
	Err                error         // why the edit log cannot be written; nil: writable
}

type console struct {
	cfg Config
	nn  Namenode
}

// Register adds the console's pages to mux: the overview (/, overview.go),
// the read-only file browser (/explorer, /file: browse.go), the file
// manager (/files: files.go), the journal (/journal), and /healthz and
// /conf. Links lead to each datanode's console and, with
// resourcemanager_web set, to the resource manager's.
func Register(mux *http.ServeMux, cfg Config, nn Namenode) {
	c := &console{cfg: cfg, nn: nn}
	c.page().Handle(mux, nn.Conf, nn.Health)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		c.page().LivePage(w, r, "Overview", webui.Render(statusPage, c.statusData()))
	})
	mux.HandleFunc("GET /explorer", c.serveExplorer)
	mux.HandleFunc("GET /file", c.serveFile)
	mux.HandleFunc("GET /journal", c.serveJournal)
	c.filesRoutes(mux)
}

// page is the console's frame: its name and navigation.
func (c *console) page() webui.Console {
	nav := []webui.Link{{Name: "overview", Href: "/"}, {Name: "browse", Href: "/explorer?path=/"},
		{Name: "files", Href: "/files?path=/"},
		{Name: "journal", Href: "/journal"}, {Name: "conf", Href: "/conf"}, {Name: "metrics", Href: "/metrics"},
		{Name: "health", Href: "/healthz"}}
	if rm := c.cfg.ResourceManagerWeb; rm != "" {
		nav = append(nav, webui.Link{Name: "jobs", Href: "http://" + rm + "/"})
	}
	return webui.Console{Daemon: "namenode", Nav: nav}
}

var journalPage = template.Must(template.New("journal").Parse(`
<table class=kv>
<tr><td>meta dir</td><td>{{.Dir}}</td></tr>
<tr><td>last transaction id</td><td>{{.Last}}</td></tr>
<tr><td>last checkpoint</td><td>txid {{.CkptTx}} at {{.CkptAt}} ({{.Ago}})</td></tr>
<tr><td>edits since the checkpoint</td><td>{{.Since}}</td></tr>
<tr><td>next checkpoint</td><td>after {{.EveryTx}} edits or {{.Every}}, whichever comes first (with edits)</td></tr>
<tr><td>edit log state</td><td>{{if .Err}}<span class=err>{{.Err}}</span>{{else}}writable{{end}}</td></tr>
</table>`))

// serveJournal shows the edit log and checkpoint state.
func (c *console) serveJournal(w http.ResponseWriter, r *http.Request) {
	j := c.nn.Journal()
	last, ckptTx, ckptAt := j.LastTxID, j.CkptTxID, j.CkptAt
	data := struct {
		Dir, CkptAt, Ago, Every, Err string
		Last, CkptTx, Since          uint64
		EveryTx                      any
	}{Dir: j.Dir, Last: last, CkptTx: ckptTx, CkptAt: ckptAt.Format(time.RFC3339),
		Ago: webui.Ago(ckptAt, c.cfg.Clock()), Since: last - min(last, ckptTx), Every: j.Every.String(),
		EveryTx: j.EveryTxns}
	if err := j.Err; err != nil {
		data.Err = err.Error()
	}
	c.page().Page(w, "Journal", webui.Render(journalPage, data))
}
