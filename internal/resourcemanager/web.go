package resourcemanager

import (
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/units"
	"smarth/internal/webui"
)

// The resource manager's web console: jobs (/, filterable by state), one
// page per job (/job/ID: counters, map locality, tasks and attempts with
// links to their logs on the node managers), node managers (/nodes), the
// YARN-shaped REST API (web_rest.go), /healthz, /conf and /metrics.

func (rm *ResourceManager) console() webui.Console {
	return webui.Console{Daemon: "resource manager", Nav: []webui.Link{
		{Name: "jobs", Href: "/"}, {Name: "running", Href: "/?state=RUNNING"}, {Name: "nodes", Href: "/nodes"},
		{Name: "REST", Href: "/ws/v1/cluster/apps"}, {Name: "conf", Href: "/conf"}, {Name: "metrics", Href: "/metrics"},
		{Name: "health", Href: "/healthz"}}}
}

func (rm *ResourceManager) httpHandler() http.Handler {
	mux := http.NewServeMux()
	rm.console().Handle(mux, func() any { return rm.cfg }, nil)
	mux.Handle("/metrics", promhttp.HandlerFor(rm.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", rm.serveJobs)
	mux.HandleFunc("GET /job/{id}", rm.serveJob)
	mux.HandleFunc("GET /nodes", rm.serveNodes)
	mux.HandleFunc("GET /ws/v1/cluster/apps", rm.serveApps)
	mux.HandleFunc("GET /ws/v1/cluster/apps/{id}", rm.serveApp)
	mux.HandleFunc("GET /ws/v1/cluster/metrics", rm.serveClusterMetrics)
	mux.HandleFunc("GET /ws/v1/cluster/info", rm.serveClusterInfo)
	mux.HandleFunc("GET /ws/v1/cluster", rm.serveClusterInfo)
	return mux
}

var jobsPage = template.Must(template.New("jobs").Funcs(funcs).Parse(`
<p>scheduler <b>{{.Scheduler}}</b>, {{.Nodes}} node manager(s), map slots {{.MapsUsed}}/{{.MapSlots}} used,
reduce slots {{.ReducesUsed}}/{{.ReduceSlots}} used</p>
<p>show: <a href="/">all</a>{{range .States}} · <a href="/?state={{.}}">{{.}}</a>{{end}}</p>
<table><tr><th>job</th><th>name</th><th>app</th><th>user</th><th>state</th><th>maps</th><th>reduces</th>
<th>submitted</th><th>elapsed</th><th>diagnostics</th></tr>
{{range .Jobs}}<tr><td><a href="/job/{{.JobId}}">{{.JobId}}</a></td><td>{{.Name}}</td><td>{{.App}}</td><td>{{.User}}</td>
<td class="{{.State}}">{{.State}}</td><td class=n>{{.MapsDone}}/{{.MapsTotal}}</td><td class=n>{{.ReducesDone}}/{{.ReducesTotal}}</td>
<td>{{ms .SubmitTimeMs}}</td><td>{{elapsed .}}</td><td>{{.Error}}</td></tr>
{{else}}<tr><td colspan=10>no jobs</td></tr>{{end}}</table>`))

var funcs = template.FuncMap{
	"ms": func(ms int64) string {
		if ms == 0 {
			return "-"
		}
		return time.UnixMilli(ms).Format("2006-01-02 15:04:05")
	},
	"elapsed": func(st *mrpb.JobStatus) string {
		end := st.GetFinishTimeMs()
		if end == 0 {
			end = time.Now().UnixMilli()
		}
		return (time.Duration(end-st.GetSubmitTimeMs()) * time.Millisecond).Round(time.Millisecond).String()
	},
	"dur": func(from, to int64) string {
		if from == 0 {
			return "-"
		}
		if to == 0 {
			to = time.Now().UnixMilli()
		}
		return (time.Duration(to-from) * time.Millisecond).Round(time.Millisecond).String()
	},
	"kind": func(isMap bool) string {
		if isMap {
			return "map"
		}
		return "reduce"
	},
}

// serveJobs renders the job list, newest first, optionally one state.
func (rm *ResourceManager) serveJobs(w http.ResponseWriter, r *http.Request) {
	var states []string
	if s := r.URL.Query().Get("state"); s != "" {
		states = []string{s}
	}
	list, err := rm.ListJobs(webui.CallerContext(r), &mrpb.ListJobsRequest{States: states})
	if err != nil {
		webui.DenyCaller(w, err)
		return
	}
	m := rm.snapshotMetrics()
	data := struct {
		Scheduler                                           string
		Nodes, MapSlots, ReduceSlots, MapsUsed, ReducesUsed int
		States                                              []string
		Jobs                                                []*mrpb.JobStatus
	}{rm.cfg.Scheduler, m.nodes, m.mapSlots, m.reduceSlots, m.mapsUsed, m.reducesUsed,
		[]string{mapreduce.StateRunning, mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled}, list.GetJobs()}
	title := "Jobs"
	if len(states) > 0 {
		title += " " + states[0]
	}
	rm.console().LivePage(w, r, title, webui.Render(jobsPage, data))
}

var jobPage = template.Must(template.New("job").Funcs(funcs).Parse(`
<table class=kv>
<tr><td>state</td><td class="{{.St.State}}">{{.St.State}}</td></tr>
{{if .St.Error}}<tr><td>diagnostics</td><td class=err>{{.St.Error}}</td></tr>{{end}}
<tr><td>name / app</td><td>{{.St.Name}} / {{.St.App}}</td></tr><tr><td>user</td><td>{{.St.User}}</td></tr>
<tr><td>output</td><td>{{.St.Output}}</td></tr>
<tr><td>submitted</td><td>{{ms .St.SubmitTimeMs}}</td></tr><tr><td>started</td><td>{{ms .St.StartTimeMs}}</td></tr>
<tr><td>finished</td><td>{{ms .St.FinishTimeMs}}</td></tr><tr><td>elapsed</td><td>{{elapsed .St}}</td></tr>
<tr><td>maps</td><td>{{.St.MapsDone}}/{{.St.MapsTotal}} done, {{.St.MapsRunning}} running</td></tr>
<tr><td>reduces</td><td>{{.St.ReducesDone}}/{{.St.ReducesTotal}} done, {{.St.ReducesRunning}} running</td></tr>
<tr><td>input</td><td>{{.Input}} ({{.Read}} read)</td></tr>
<tr><td>input cached (R<sub>j</sub>)</td><td>{{.Cached}}</td></tr>
<tr><td>REST</td><td><a href="/ws/v1/cluster/apps/{{.St.JobId}}">/ws/v1/cluster/apps/{{.St.JobId}}</a></td></tr>
{{if .St.AggregatedLogDir}}<tr><td>aggregated logs</td><td>{{.St.AggregatedLogDir}} in the DFS, one file per node
(<code>smarth job logs {{.St.JobId}}</code>); the node links below last while the nodes keep the logs</td></tr>{{end}}
</table>
<h2>Map locality</h2>
<table><tr><th>cache-local</th><th>node-local (not cached)</th><th>rack-local</th><th>off-rack</th></tr>
<tr><td class=n>{{.Loc.Cache}}</td><td class=n>{{.Loc.Node}}</td><td class=n>{{.Loc.Rack}}</td><td class=n>{{.Loc.Other}}</td></tr></table>
<h2>Counters</h2>
<table><tr><th>group</th><th>counter</th><th>value</th></tr>
{{range .St.Counters}}<tr><td>{{.Group}}</td><td>{{.Name}}</td><td class=n>{{.Value}}</td></tr>
{{else}}<tr><td colspan=3>none yet</td></tr>{{end}}</table>
<h2>Tasks and attempts</h2>
<table><tr><th>task</th><th>state</th><th>attempt</th><th>node</th><th>attempt state</th><th>started</th><th>took</th><th>logs</th><th>error</th></tr>
{{range .St.Tasks}}{{$t := .}}{{range $i, $a := .Attempts}}<tr>{{if eq $i 0}}<td rowspan="{{len $t.Attempts}}">{{kind $t.IsMap}} {{$t.Index}}</td>
<td rowspan="{{len $t.Attempts}}" class="{{$t.State}}">{{$t.State}}</td>{{end}}
<td>{{$a.AttemptId}}</td><td>{{$a.NodeHost}}</td><td class="{{$a.State}}">{{$a.State}}</td><td>{{ms $a.StartTimeMs}}</td>
<td>{{dur $a.StartTimeMs $a.FinishTimeMs}}</td>
<td>{{if $a.NodeHttpAddr}}<a href="http://{{$a.NodeHttpAddr}}/logs/{{$.St.JobId}}/{{$a.AttemptId}}/stderr">stderr</a>
<a href="http://{{$a.NodeHttpAddr}}/logs/{{$.St.JobId}}/{{$a.AttemptId}}/stdout">stdout</a>{{end}}</td><td>{{$a.Error}}</td></tr>
{{else}}<tr><td>{{kind .IsMap}} {{.Index}}</td><td class="{{.State}}">{{.State}}</td><td colspan=7>not launched yet</td></tr>{{end}}
{{end}}</table>`))

type locality struct{ Cache, Node, Rack, Other int64 }

// serveJob renders one job's page.
func (rm *ResourceManager) serveJob(w http.ResponseWriter, r *http.Request) {
	st, err := rm.GetJob(webui.CallerContext(r), &mrpb.GetJobRequest{JobId: r.PathValue("id")})
	if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
		webui.DenyCaller(w, err)
		return
	}
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		rm.console().Page(w, "No such job", template.HTML("<p class=err>"+template.HTMLEscapeString(err.Error())+
			" (finished jobs beyond retain_jobs are forgotten)</p>"))
		return
	}
	c := map[string]int64{}
	for _, x := range st.GetCounters() {
		if x.GetGroup() == mapreduce.GroupJob {
			c[x.GetName()] = x.GetValue()
		}
	}
	data := struct {
		St                  *mrpb.JobStatus
		Input, Read, Cached string
		Loc                 locality
	}{St: st, Input: units.FormatSize(st.GetInputBytes()), Read: units.FormatSize(st.GetBytesRead()),
		Cached: fmt.Sprintf("%.0f%%", 100*st.GetCachedFraction()),
		// DATA_LOCAL_MAPS counts cache-local maps too (they are node-local).
		Loc: locality{c[mapreduce.CacheLocalMaps], c[mapreduce.DataLocalMaps] - c[mapreduce.CacheLocalMaps],
			c[mapreduce.RackLocalMaps], c[mapreduce.OtherLocalMaps]}}
	if terminalState(st.GetState()) {
		rm.console().Page(w, "Job "+st.GetJobId(), webui.Render(jobPage, data)) // nothing will change
		return
	}
	rm.console().LivePage(w, r, "Job "+st.GetJobId(), webui.Render(jobPage, data))
}

var nodesPage = template.Must(template.New("nodes").Parse(`
<table><tr><th>node</th><th>host</th><th>rack</th><th>map slots</th><th>reduce slots</th><th>last heartbeat</th><th>console</th></tr>
{{range .}}<tr><td>{{.ID}}</td><td>{{.Host}}</td><td>{{.Rack}}</td><td class=n>{{.Maps}}</td><td class=n>{{.Reduces}}</td><td>{{.Seen}}</td>
<td>{{if .HTTP}}<a href="http://{{.HTTP}}/">{{.HTTP}}</a>{{end}}</td></tr>
{{else}}<tr><td colspan=7>no node manager has reported</td></tr>{{end}}</table>`))

type pageNode struct{ ID, Host, Rack, Maps, Reduces, Seen, HTTP string }

// serveNodes lists the live node managers with links to their consoles.
func (rm *ResourceManager) serveNodes(w http.ResponseWriter, r *http.Request) {
	var nodes []pageNode
	now := time.Now()
	rm.mu.Lock()
	reports := rm.nodeReports(false)
	rm.mu.Unlock()
	for _, n := range reports {
		nodes = append(nodes, pageNode{n.NodeId, n.Hostname, n.Rack, fmt.Sprintf("%d/%d", n.RunningMaps, n.MapSlots),
			fmt.Sprintf("%d/%d", n.RunningReduces, n.ReduceSlots), webui.Ago(time.UnixMilli(n.LastHeartbeatMs), now), n.HttpAddr})
	}
	rm.console().LivePage(w, r, "Node managers", webui.Render(nodesPage, nodes))
}
