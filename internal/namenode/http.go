package namenode

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
	"smarth/internal/webui"
)

//go:embed web/status.html
var webFS embed.FS

var statusPage = template.Must(template.ParseFS(webFS, "web/status.html"))

func (nn *NameNode) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(nn.metrics.reg, promhttp.HandlerOpts{}))
	nn.consoleRoutes(mux)
	nn.webhdfsRoutes(mux)
	if nn.cfg.Pprof {
		webui.HandlePprof(mux)
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		nn.console().Page(w, "Overview", webui.Render(statusPage, nn.statusData()))
	})
	return mux
}

type statusNode struct {
	ID, Host, Addr, State, Web          string
	Capacity, Used, Remaining, LastSeen string
	// Speed is the median of the clients' recent write speeds to this
	// node (SMARTH's records), so an operator sees the slow node in the
	// rack table itself rather than hunting through per-client rows.
	Speed    string
	Blocks   int
	Xceivers int32
	Dead     bool
}

type statusRack struct {
	Name  string
	Nodes []statusNode
}

// statusSpeed is one speed record as the public overview shows it: by
// client host, never the client's name (issue 23, hole 2: a writer's
// client name was all another user needed to write into its open file).
type statusSpeed struct {
	Host, Datanode, Recent, Historical, Last string
	Samples                                  int64
}

type statusData struct {
	Addr, Placement, Started, SafeModeReason    string
	SafeMode                                    bool
	LastTxID                                    uint64
	Files, Dirs, Blocks, OpenFiles              int
	UnderReplicated, Missing, Corrupt, Pending  int
	Live, Dead                                  int
	Racks                                       []statusRack
	Speeds                                      []statusSpeed
	Cache                                       statusCache
	CapTotal, CapUsed, CapRemaining, CapPercent string
	Health, RMWeb                               string
}

func (nn *NameNode) statusData() statusData {
	now := nn.clock()
	nn.mu.RLock()
	d := statusData{
		Addr: nn.Addr(), Placement: nn.cfg.Placement, Started: nn.startedAt.Format(time.RFC3339),
		SafeMode: nn.safe.on, SafeModeReason: nn.safe.reason(nn.cfg), LastTxID: nn.journal.LastTxID(),
		Files: nn.state.tree.Files(), Dirs: nn.state.tree.Dirs(), Blocks: nn.state.blocks.Len(),
		OpenFiles: nn.leases.files(), UnderReplicated: nn.stats.underReplicated, Missing: nn.stats.missing,
		Corrupt: nn.stats.corrupt, Pending: len(nn.pending),
	}
	var capTotal, capUsed, capRemaining int64
	racks := map[string][]statusNode{}
	hosts := map[string]string{}
	for id, dn := range nn.nodes {
		hosts[id] = dn.info.Hostname
		state := "live"
		if !dn.live {
			state = "dead"
			d.Dead++
		} else {
			d.Live++
			capTotal, capUsed, capRemaining = capTotal+dn.info.Capacity, capUsed+dn.info.DfsUsed, capRemaining+dn.info.Remaining
		}
		web := ""
		if dn.info.HttpPort != 0 {
			web = fmt.Sprintf("%s:%d", dn.info.IpAddr, dn.info.HttpPort)
		}
		racks[dn.info.Rack] = append(racks[dn.info.Rack], statusNode{
			ID: id, Host: dn.info.Hostname, Addr: fmt.Sprintf("%s:%d", dn.info.IpAddr, dn.info.DataPort),
			State: state, Web: web, Dead: !dn.live, Capacity: units.FormatSize(dn.info.Capacity), Used: units.FormatSize(dn.info.DfsUsed),
			Remaining: units.FormatSize(dn.info.Remaining), Blocks: nn.state.blocks.NodeBlockCount(id),
			Xceivers: dn.info.XceiverCount, LastSeen: now.Sub(dn.lastSeen).Round(time.Second).String(),
		})
	}
	nn.mu.RUnlock()
	d.CapTotal, d.CapUsed, d.CapRemaining = units.FormatSize(capTotal), units.FormatSize(capUsed), units.FormatSize(capRemaining)
	d.CapPercent = "-"
	if capTotal > 0 {
		d.CapPercent = fmt.Sprintf("%.1f%%", 100*float64(capUsed)/float64(capTotal))
	}
	if err := nn.health(); err != nil {
		d.Health = err.Error()
	} else if d.Missing > 0 || d.Corrupt > 0 {
		d.Health = fmt.Sprintf("%d missing and %d corrupt blocks", d.Missing, d.Corrupt)
	}
	d.RMWeb = nn.cfg.ResourceManagerWeb
	for name, nodes := range racks {
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Host+nodes[i].ID < nodes[j].Host+nodes[j].ID })
		d.Racks = append(d.Racks, statusRack{Name: name, Nodes: nodes})
	}
	sort.Slice(d.Racks, func(i, j int) bool { return d.Racks[i].Name < d.Racks[j].Name })
	d.Cache = cacheStatus(nn.cacheStats())
	// The overview is public: no job ids (the resource manager shows a
	// user their own jobs, with their cached input).
	d.Cache.Jobs = nil
	records := nn.speeds.Records("")
	byNode := map[string][]float64{}
	for _, r := range records {
		byNode[r.Datanode] = append(byNode[r.Datanode], r.Recent)
	}
	for _, rack := range d.Racks {
		for i := range rack.Nodes {
			n := &rack.Nodes[i]
			n.Speed = "-"
			if v := byNode[n.ID]; len(v) > 0 {
				slices.Sort(v)
				n.Speed = fmt.Sprintf("%.1f MB/s (n=%d)", v[len(v)/2]/1e6, len(v))
			}
		}
	}
	for _, r := range records {
		dn := r.Datanode
		if h := hosts[dn]; h != "" {
			dn = h + " (" + dn + ")"
		}
		d.Speeds = append(d.Speeds, statusSpeed{
			Host: r.Host, Datanode: dn, Recent: fmt.Sprintf("%.1f", r.Recent/1e6),
			Historical: fmt.Sprintf("%.1f", r.Historical/1e6), Samples: r.Samples,
			Last: time.UnixMilli(r.LastUnixMs).Format("15:04:05"),
		})
	}
	return d
}

// statusCache is the cache section of the status page.
type statusCache struct {
	Policy                  string
	Hits, Misses, Evictions int64
	Nodes                   []statusCacheNode
	Apps                    []statusCacheApp
	Jobs                    []struct{ ID, R string }
}

type statusCacheNode struct {
	Host, ID, Capacity, Used             string
	Blocks, PendingCache, PendingUncache int64
}

type statusCacheApp struct {
	App, Affinity, Bytes   string
	Blocks, Accesses, Hits int64
}

func cacheStatus(s *dfspb.GetCacheStatsResponse) statusCache {
	c := statusCache{Policy: s.GetPolicy(), Hits: s.GetHits(), Misses: s.GetMisses(), Evictions: s.GetEvictions()}
	for _, n := range s.GetNodes() {
		c.Nodes = append(c.Nodes, statusCacheNode{Host: n.GetHostname(), ID: n.GetDatanodeId(), Capacity: units.FormatSize(n.GetCapacity()),
			Used: units.FormatSize(n.GetUsed()), Blocks: n.GetBlocks(), PendingCache: n.GetPendingCache(), PendingUncache: n.GetPendingUncache()})
	}
	for _, a := range s.GetApps() {
		c.Apps = append(c.Apps, statusCacheApp{App: a.GetApp(), Affinity: fmt.Sprintf("%.3f", a.GetAffinity()),
			Bytes: units.FormatSize(a.GetCachedBytes()), Blocks: a.GetCachedBlocks(), Accesses: a.GetAccesses(), Hits: a.GetHits()})
	}
	for _, j := range s.GetJobs() {
		c.Jobs = append(c.Jobs, struct{ ID, R string }{j.GetJobId(), fmt.Sprintf("%.0f%%", 100*j.GetCachedFraction())})
	}
	return c
}
