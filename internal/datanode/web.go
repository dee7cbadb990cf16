package datanode

import (
	"errors"
	"html/template"
	"net/http"
	"sort"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"smarth/internal/datanode/store"
	"smarth/internal/units"
	"smarth/internal/webui"
)

// The datanode's web console: its volume, replicas by state, transfers
// in progress (data connections and multi-pipeline writers) and memory
// cache (/), /healthz, /conf, /metrics and Go profiles.

func (d *DataNode) console() webui.Console {
	return webui.Console{Daemon: "datanode " + d.cfg.Hostname, Nav: []webui.Link{{Name: "overview", Href: "/"},
		{Name: "conf", Href: "/conf"}, {Name: "metrics", Href: "/metrics"}, {Name: "health", Href: "/healthz"}}}
}

func (d *DataNode) httpHandler() http.Handler {
	mux := http.NewServeMux()
	d.console().Handle(mux, func() any { return d.cfg }, d.health)
	mux.Handle("/metrics", promhttp.HandlerFor(d.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/{$}", d.serveOverview)
	if d.cfg.WebHDFS != nil {
		if u, ok := d.cfg.WebHDFS.(localReplicasUser); ok {
			u.UseLocalReplicas(d) // OPEN reads the blocks held here without a loopback trip
		}
		mux.Handle("/webhdfs/v1/", d.cfg.WebHDFS)
	}
	if d.cfg.Pprof {
		webui.HandlePprof(mux)
	}
	return mux
}

// health: not closed, and the data directory can be measured.
func (d *DataNode) health() error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return errors.New("closed")
	}
	if _, err := d.store.Usage(); err != nil {
		return errors.New("data directory: " + err.Error())
	}
	return nil
}

var overviewPage = template.Must(template.New("dn").Parse(`
<table class=kv>
<tr><td>id</td><td>{{.ID}}</td></tr><tr><td>namenode</td><td>{{.NameNode}}</td></tr>
<tr><td>data transfer</td><td>{{.Data}}</td></tr>
</table>
<h2>Volume</h2>
<table><tr><th>directory</th><th>capacity</th><th>DFS used</th><th>remaining</th><th>replicas</th></tr>
<tr><td>{{.Dir}}</td><td class=n>{{.Capacity}}</td><td class=n>{{.Used}}</td><td class=n>{{.Remaining}}</td><td class=n>{{.Blocks}}</td></tr></table>
{{if .UsageErr}}<p class=err>{{.UsageErr}}</p>{{end}}
<h2>Replicas by state</h2>
<table><tr><th>state</th><th>replicas</th><th>bytes</th></tr>
{{range .States}}<tr><td>{{.Name}}</td><td class=n>{{.N}}</td><td class=n>{{.Bytes}}</td></tr>{{end}}
<tr><td>corrupt</td><td class=n>{{.Corrupt}}</td><td></td></tr></table>
<h2>Transfers in progress</h2>
<p>{{.Conns}} data connection(s) open; multi-pipeline writers:</p>
<table><tr><th>client</th><th>open pipelines (blocks)</th></tr>
{{range .Writers}}<tr><td>{{.Client}}</td><td>{{.Blocks}}</td></tr>{{else}}<tr><td colspan=2>none</td></tr>{{end}}</table>
<h2>Writes being received</h2>
<table><tr><th>block</th><th>state</th><th>bytes so far</th></tr>
{{range .Open}}<tr><td>{{.Name}}</td><td>{{.State}}</td><td class=n>{{.Bytes}}</td></tr>{{else}}<tr><td colspan=3>none</td></tr>{{end}}</table>
<h2>Memory cache</h2>
<p>{{.CacheUsed}} used of {{.CacheCap}}; {{.CacheBlocks}} block(s) cached, {{.CacheLoading}} loading{{if .CacheLockErr}}; <span class=err>{{.CacheLockErr}}</span>{{end}}</p>
{{if .Cached}}<p>cached: {{range .Cached}}blk_{{.}} {{end}}</p>{{end}}`))

type dnState struct {
	Name  string
	N     int
	Bytes string
}

type dnWriter struct {
	Client string
	Blocks int
}

type dnOpen struct{ Name, State, Bytes string }

// serveOverview renders the datanode's page.
func (d *DataNode) serveOverview(w http.ResponseWriter, r *http.Request) {
	data := struct {
		ID, NameNode, Data, Dir, Capacity, Used, Remaining, UsageErr string
		Blocks, Corrupt, Conns                                       int
		States                                                       []dnState
		Writers                                                      []dnWriter
		Open                                                         []dnOpen
		CacheUsed, CacheCap, CacheLockErr                            string
		CacheBlocks, CacheLoading                                    int
		Cached                                                       []uint64
	}{ID: d.ID(), NameNode: d.cfg.NameNode, Data: d.DataAddr(), Dir: d.store.Dir()}
	u, err := d.store.Usage()
	if err != nil {
		data.UsageErr = err.Error()
	}
	data.Capacity, data.Used, data.Remaining, data.Blocks = units.FormatSize(u.Capacity), units.FormatSize(u.Used), units.FormatSize(u.Remaining), u.Blocks
	counts, bytes := map[store.State]int{}, map[store.State]int64{}
	for _, rep := range d.store.Replicas() {
		counts[rep.State]++
		bytes[rep.State] += rep.Visible
		if rep.Corrupt {
			data.Corrupt++
		}
		if rep.State != store.Finalized {
			data.Open = append(data.Open, dnOpen{rep.Name(), rep.State.String(), units.FormatSize(rep.Visible)})
		}
	}
	for st, n := range counts {
		data.States = append(data.States, dnState{st.String(), n, units.FormatSize(bytes[st])})
	}
	sort.Slice(data.States, func(i, j int) bool { return data.States[i].Name < data.States[j].Name })
	sort.Slice(data.Open, func(i, j int) bool { return data.Open[i].Name < data.Open[j].Name })
	d.mu.Lock()
	data.Conns = len(d.conns)
	for c, cs := range d.clients {
		data.Writers = append(data.Writers, dnWriter{c, len(cs.blocks)})
	}
	d.mu.Unlock()
	sort.Slice(data.Writers, func(i, j int) bool { return data.Writers[i].Client < data.Writers[j].Client })
	cs := d.cache.Stats()
	data.CacheUsed, data.CacheCap, data.CacheBlocks, data.CacheLoading = units.FormatSize(cs.Used), units.FormatSize(cs.Capacity), len(cs.IDs), cs.Loading
	data.Cached = cs.IDs
	if cs.LockErr != nil {
		data.CacheLockErr = cs.LockErr.Error()
	}
	d.console().Page(w, "Datanode "+d.cfg.Hostname, webui.Render(overviewPage, data))
}
