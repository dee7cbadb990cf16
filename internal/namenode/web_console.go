package namenode

import (
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/webui"
)

// The namenode's web console: overview (/, status.html: capacity, health,
// safe mode, datanodes by rack with their transfers and speeds, cache), the
// read-only file browser (/explorer, /file: web_browse.go), the journal
// (/journal), and /healthz, /conf, /metrics. Links lead to each datanode's
// console and, with resourcemanager_web set, to the resource manager's.

func (nn *NameNode) console() webui.Console {
	nav := []webui.Link{{Name: "overview", Href: "/"}, {Name: "browse", Href: "/explorer?path=/"},
		{Name: "files", Href: "/files?path=/"},
		{Name: "journal", Href: "/journal"}, {Name: "conf", Href: "/conf"}, {Name: "metrics", Href: "/metrics"},
		{Name: "health", Href: "/healthz"}}
	if rm := nn.cfg.ResourceManagerWeb; rm != "" {
		nav = append(nav, webui.Link{Name: "jobs", Href: "http://" + rm + "/"})
	}
	return webui.Console{Daemon: "namenode", Nav: nav}
}

func (nn *NameNode) consoleRoutes(mux *http.ServeMux) {
	nn.console().Handle(mux, func() any { return nn.cfg }, nn.health)
	mux.HandleFunc("GET /explorer", nn.serveExplorer)
	mux.HandleFunc("GET /file", nn.serveFile)
	mux.HandleFunc("GET /journal", nn.serveJournal)
	nn.filesRoutes(mux)
}

// health: the edit log can be written (a namenode that cannot journal
// refuses every change). Safe mode is healthy: it is a state, not a fault.
func (nn *NameNode) health() error {
	if err := nn.journal.Err(); err != nil {
		return errors.New("edit log failed: " + err.Error())
	}
	return nil
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
func (nn *NameNode) serveJournal(w http.ResponseWriter, r *http.Request) {
	nn.mu.RLock()
	last, ckptTx, ckptAt := nn.journal.LastTxID(), nn.ckptTx, nn.ckptAt
	nn.mu.RUnlock()
	data := struct {
		Dir, CkptAt, Ago, Every, Err string
		Last, CkptTx, Since          uint64
		EveryTx                      any
	}{Dir: nn.cfg.MetaDir, Last: last, CkptTx: ckptTx, CkptAt: ckptAt.Format(time.RFC3339),
		Ago: webui.Ago(ckptAt, nn.clock()), Since: last - min(last, ckptTx), Every: nn.cfg.CheckpointPeriod.String(),
		EveryTx: nn.cfg.CheckpointTxns}
	if err := nn.journal.Err(); err != nil {
		data.Err = err.Error()
	}
	nn.console().Page(w, "Journal", webui.Render(journalPage, data))
}

// registerCapacityGauges exports the live datanodes' capacity totals, as
// HDFS's CapacityTotal/CapacityUsed/CapacityRemaining.
func (nn *NameNode) registerCapacityGauges(reg *prometheus.Registry, locked func(func() float64) func() float64) {
	sum := func(f func(d *datanode) int64) func() float64 {
		return locked(func() float64 {
			var n int64
			for _, dn := range nn.nodes {
				if dn.live {
					n += f(dn)
				}
			}
			return float64(n)
		})
	}
	for name, f := range map[string]func(*datanode) int64{
		"capacity_total_bytes":     func(d *datanode) int64 { return d.info.Capacity },
		"capacity_used_bytes":      func(d *datanode) int64 { return d.info.DfsUsed },
		"capacity_remaining_bytes": func(d *datanode) int64 { return d.info.Remaining },
	} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "smarth_namenode", Name: name,
			Help: "Sum over live datanodes (" + name + ")."}, sum(f)))
	}
}
