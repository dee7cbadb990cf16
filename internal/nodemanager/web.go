package nodemanager

import (
	"errors"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"smarth/internal/units"
	"smarth/internal/webui"
)

// The node manager's web console: its running tasks and slots (/), the
// task attempts' logs (/logs/JOB/ATTEMPT/stderr|stdout), /healthz, /conf,
// /metrics and the Go profiles of the tasks it runs.

func (nm *NodeManager) console() webui.Console {
	return webui.Console{Daemon: "node manager " + nm.cfg.Hostname, Nav: []webui.Link{
		{Name: "tasks", Href: "/"}, {Name: "logs", Href: "/logs/"}, {Name: "conf", Href: "/conf"},
		{Name: "metrics", Href: "/metrics"}, {Name: "health", Href: "/healthz"}}}
}

func (nm *NodeManager) httpHandler() http.Handler {
	mux := http.NewServeMux()
	c := nm.console()
	c.Handle(mux, func() any { return nm.cfg }, nm.health)
	mux.Handle("/metrics", promhttp.HandlerFor(nm.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/logs/", nm.serveLogs)
	mux.HandleFunc("/{$}", nm.serveTasks)
	// Profiles of the tasks this process runs (map, sort, spill,
	// shuffle, merge, reduce all run here), when asked for.
	if nm.cfg.Pprof {
		webui.HandlePprof(mux)
	}
	return mux
}

// health: serving, and the resource manager answered a recent heartbeat.
func (nm *NodeManager) health() error {
	select {
	case <-nm.stop:
		return errors.New("stopping")
	default:
	}
	nm.mu.Lock()
	last, d := nm.lastHeartbeat, nm.interval
	nm.mu.Unlock()
	if last.IsZero() || time.Since(last) > 10*d+10*time.Second {
		return errors.New("no heartbeat answered by the resource manager recently")
	}
	return nil
}

func (nm *NodeManager) logDir() string {
	if nm.cfg.LogDir != "" {
		return nm.cfg.LogDir
	}
	return filepath.Join(nm.cfg.WorkDir, "userlogs")
}

// logJanitor removes expired job logs now and then.
func (nm *NodeManager) logJanitor() {
	t := time.NewTicker(max(time.Minute, nm.cfg.LogRetention/24))
	defer t.Stop()
	for {
		expireLogs(nm.logDir(), nm.cfg.LogRetention, time.Now())
		select {
		case <-nm.stop:
			return
		case <-t.C:
		}
	}
}

// serveLogs serves /logs/ (jobs), /logs/JOB/ (attempts), /logs/JOB/ATTEMPT/
// (files) and /logs/JOB/ATTEMPT/FILE (its bytes, as text).
func (nm *NodeManager) serveLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/logs/"), "/"), "/")
	if parts[0] == "" {
		parts = nil
	}
	if len(parts) > 0 {
		if !validID(parts[0], "job_") {
			http.NotFound(w, r)
			return
		}
		if err := nm.mayViewJob(r, parts[0]); err != nil {
			webui.DenyCaller(w, err)
			return
		}
	}
	switch len(parts) {
	case 0, 1, 2:
		nm.serveLogIndex(w, r, parts)
	case 3:
		f, err := openLogFile(nm.logDir(), parts[0], parts[1], parts[2])
		if err != nil {
			http.Error(w, "no such log: "+r.URL.Path, http.StatusNotFound)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.Copy(w, f)
	default:
		http.NotFound(w, r)
	}
}

var logIndexPage = template.Must(template.New("logs").Parse(`
<p>{{.Where}}</p>
<table><tr><th>name</th><th>modified</th></tr>
{{range .Entries}}<tr><td><a href="{{.Href}}">{{.Name}}</a></td><td>{{.Mod}}</td></tr>
{{else}}<tr><td colspan=2>none kept</td></tr>{{end}}</table>`))

type logEntry struct{ Name, Href, Mod string }

func (nm *NodeManager) serveLogIndex(w http.ResponseWriter, r *http.Request, parts []string) {
	dir := nm.logDir()
	prefixes := []string{"job_", "attempt_"}
	for i, p := range parts {
		if !validID(p, prefixes[i]) {
			http.NotFound(w, r)
			return
		}
		dir = filepath.Join(dir, p)
	}
	ents, err := readDirSorted(dir)
	if err != nil && len(parts) > 0 {
		http.Error(w, "no logs kept for "+strings.Join(parts, "/"), http.StatusNotFound)
		return
	}
	if len(parts) == 0 {
		// The jobs kept here: only those the caller may view.
		mine, err := nm.viewableJobs(r)
		if err != nil {
			webui.DenyCaller(w, err)
			return
		}
		ents = slices.DeleteFunc(ents, func(e dirEntry) bool { return !mine[e.name] })
	}
	base := "/logs/" + strings.Join(parts, "/")
	if len(parts) > 0 {
		base += "/"
	}
	var data struct {
		Where   string
		Entries []logEntry
	}
	data.Where = "task attempt logs kept in " + dir
	for _, e := range ents {
		data.Entries = append(data.Entries, logEntry{Name: e.name, Href: base + e.name, Mod: e.mod.Format(time.RFC3339)})
	}
	nm.console().Page(w, "logs "+strings.Join(parts, " / "), webui.Render(logIndexPage, data))
}

type dirEntry struct {
	name string
	mod  time.Time
}

// readDirSorted lists dir, newest first.
func readDirSorted(dir string) ([]dirEntry, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, dirEntry{e.Name(), info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].mod.After(out[j].mod) })
	return out, nil
}

var tasksPage = template.Must(template.New("tasks").Parse(`
<table class=kv>
<tr><td>node</td><td>{{.Node}}</td></tr><tr><td>rack</td><td>{{.Rack}}</td></tr>
<tr><td>resource manager</td><td>{{.RM}}</td></tr><tr><td>shuffle</td><td>{{.Shuffle}}</td></tr>
<tr><td>map slots</td><td>{{.MapsUsed}} used of {{.MapSlots}}</td></tr>
<tr><td>reduce slots</td><td>{{.ReducesUsed}} used of {{.ReduceSlots}}</td></tr>
<tr><td>map output in memory</td><td>{{.Memory}}</td></tr>
<tr><td>jobs with map output held</td><td>{{.HeldJobs}}</td></tr>
</table>
<h2>Running task attempts</h2>
<table><tr><th>attempt</th><th>kind</th><th>app</th><th>user</th><th>input read</th><th>running for</th><th>logs</th></tr>
{{range .Tasks}}<tr><td>{{.ID}}</td><td>{{.Kind}}</td><td>{{.App}}</td><td>{{.User}}</td><td class=n>{{.Read}}</td><td>{{.For}}</td>
<td><a href="/logs/{{.Job}}/{{.ID}}/stderr">stderr</a> <a href="/logs/{{.Job}}/{{.ID}}/stdout">stdout</a></td></tr>
{{else}}<tr><td colspan=7>none</td></tr>{{end}}</table>`))

type pageTask struct{ ID, Job, Kind, App, User, Read, For string }

func (nm *NodeManager) serveTasks(w http.ResponseWriter, r *http.Request) {
	// The slots are the node's; the attempts (job, app, user) only the
	// caller's own, or all for an admin.
	mine, err := nm.viewableJobs(r)
	if err != nil {
		webui.DenyCaller(w, err)
		return
	}
	data := struct {
		Node, Rack, RM, Shuffle, Memory              string
		MapSlots, ReduceSlots, MapsUsed, ReducesUsed int
		HeldJobs                                     int
		Tasks                                        []pageTask
	}{Node: nm.nodeID, RM: nm.cfg.ResourceManager, Shuffle: nm.ShuffleAddr(), Memory: units.FormatSize(nm.memory.Used()),
		MapSlots: nm.cfg.MapSlots, ReduceSlots: nm.cfg.ReduceSlots}
	now := time.Now()
	nm.mu.Lock()
	data.Rack, data.HeldJobs = nm.rack, len(nm.outputs)
	for id, rt := range nm.running {
		kind := "reduce"
		if rt.launch.IsMap {
			kind = "map"
			data.MapsUsed++
		} else {
			data.ReducesUsed++
		}
		if !mine[rt.launch.JobId] {
			continue
		}
		data.Tasks = append(data.Tasks, pageTask{ID: id, Job: rt.launch.JobId, Kind: kind, App: rt.launch.App, User: rt.launch.User,
			Read: units.FormatSize(rt.progress.Load()), For: now.Sub(rt.started).Round(time.Second).String()})
	}
	nm.mu.Unlock()
	sort.Slice(data.Tasks, func(i, j int) bool { return data.Tasks[i].ID < data.Tasks[j].ID })
	nm.console().LivePage(w, r, "Node manager "+nm.cfg.Hostname, webui.Render(tasksPage, data))
}

// slotsUsed counts running map and reduce attempts.
func (nm *NodeManager) slotsUsed() (maps, reduces int) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	for _, rt := range nm.running {
		if rt.launch.IsMap {
			maps++
		} else {
			reduces++
		}
	}
	return maps, reduces
}

// registerWebMetrics adds the gauges operators watch a node by.
func (nm *NodeManager) registerWebMetrics() {
	nm.shuffleBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "smarth_nm_shuffle_bytes_served_total",
		Help: "Map output bytes served to reduces over HTTP."})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	nm.reg.MustRegister(nm.shuffleBytes,
		gauge("smarth_nm_running_tasks", "Task attempts running.", func() float64 { return float64(nm.Running()) }),
		gauge("smarth_nm_map_slots_used", "Map slots running an attempt.", func() float64 { m, _ := nm.slotsUsed(); return float64(m) }),
		gauge("smarth_nm_reduce_slots_used", "Reduce slots running an attempt.", func() float64 { _, r := nm.slotsUsed(); return float64(r) }),
		gauge("smarth_nm_map_slots", "Map slots of this node.", func() float64 { return float64(nm.cfg.MapSlots) }),
		gauge("smarth_nm_reduce_slots", "Reduce slots of this node.", func() float64 { return float64(nm.cfg.ReduceSlots) }))
}

// countShuffle counts the bytes the shuffle server sends.
func (nm *NodeManager) countShuffle(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingResponse{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		nm.shuffleBytes.Add(float64(cw.n))
	})
}

type countingResponse struct {
	http.ResponseWriter
	n int64
}

func (c *countingResponse) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// ReadFrom keeps sendfile for segment files while counting.
func (c *countingResponse) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := c.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(c.ResponseWriter, r)
	}
	c.n += n
	return n, err
}

// Flush passes flushes through (streaming responses).
func (c *countingResponse) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
