package resourcemanager

import (
	"fmt"
	"html/template"
	"net/http"
	"time"
)

var jobsPage = template.Must(template.New("jobs").Parse(`<!doctype html>
<html><head><title>smarth resource manager</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style>
</head><body>
<h1>smarth resource manager</h1>
<p>scheduler <b>{{.Scheduler}}</b>, {{len .Nodes}} node manager(s)</p>
<h2>Nodes</h2>
<table><tr><th>node</th><th>host</th><th>rack</th><th>slots (map/reduce)</th><th>last heartbeat</th></tr>
{{range .Nodes}}<tr><td>{{.ID}}</td><td>{{.Host}}</td><td>{{.Rack}}</td><td>{{.Slots}}</td><td>{{.Seen}}</td></tr>{{end}}
</table>
<h2>Jobs</h2>
<table><tr><th>job</th><th>name</th><th>user</th><th>state</th><th>maps</th><th>reduces</th><th>elapsed</th><th>error</th></tr>
{{range .Jobs}}<tr><td>{{.ID}}</td><td>{{.Name}}</td><td>{{.User}}</td><td>{{.State}}</td><td>{{.Maps}}</td><td>{{.Reduces}}</td><td>{{.Elapsed}}</td><td>{{.Error}}</td></tr>{{end}}
</table></body></html>`))

type pageJob struct{ ID, Name, User, State, Maps, Reduces, Elapsed, Error string }
type pageNode struct{ ID, Host, Rack, Slots, Seen string }

// serveJobs renders the job list page.
func (rm *ResourceManager) serveJobs(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	data := struct {
		Scheduler string
		Nodes     []pageNode
		Jobs      []pageJob
	}{Scheduler: rm.cfg.Scheduler}
	rm.mu.Lock()
	for _, n := range rm.nodes {
		data.Nodes = append(data.Nodes, pageNode{n.id, n.host, n.rack, fmt.Sprintf("%d/%d", n.mapSlots, n.reduceSlots),
			time.Since(n.lastSeen).Round(time.Millisecond).String() + " ago"})
	}
	for i := len(rm.order) - 1; i >= 0; i-- {
		j := rm.order[i]
		st := j.status()
		end := j.finished
		if end.IsZero() {
			end = time.Now()
		}
		data.Jobs = append(data.Jobs, pageJob{j.id, j.name, j.user, j.state,
			fmt.Sprintf("%d/%d", st.MapsDone, st.MapsTotal), fmt.Sprintf("%d/%d", st.ReducesDone, st.ReducesTotal),
			end.Sub(j.submitted).Round(time.Millisecond).String(), j.err})
	}
	rm.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	jobsPage.Execute(w, data)
}
