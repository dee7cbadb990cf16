package namenode

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed web/status.html
var webFS embed.FS

var statusPage = template.Must(template.ParseFS(webFS, "web/status.html"))

func (nn *NameNode) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(nn.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := statusPage.Execute(w, nn.statusData()); err != nil {
			nn.logger.Warn("status page", "error", err)
		}
	})
	return mux
}

type statusNode struct {
	ID, Host, Addr, State               string
	Capacity, Used, Remaining, LastSeen string
	Blocks                              int
	Xceivers                            int32
	Dead                                bool
}

type statusRack struct {
	Name  string
	Nodes []statusNode
}

type statusSpeed struct {
	Client, Datanode, Recent, Historical, Last string
	Samples                                    int64
}

type statusData struct {
	Addr, Placement, Started, SafeModeReason   string
	SafeMode                                   bool
	LastTxID                                   uint64
	Files, Dirs, Blocks, OpenFiles             int
	UnderReplicated, Missing, Corrupt, Pending int
	Live, Dead                                 int
	Racks                                      []statusRack
	Speeds                                     []statusSpeed
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
		}
		racks[dn.info.Rack] = append(racks[dn.info.Rack], statusNode{
			ID: id, Host: dn.info.Hostname, Addr: fmt.Sprintf("%s:%d", dn.info.IpAddr, dn.info.DataPort),
			State: state, Dead: !dn.live, Capacity: bytesString(dn.info.Capacity), Used: bytesString(dn.info.DfsUsed),
			Remaining: bytesString(dn.info.Remaining), Blocks: nn.state.blocks.NodeBlockCount(id),
			Xceivers: dn.info.XceiverCount, LastSeen: now.Sub(dn.lastSeen).Round(time.Second).String(),
		})
	}
	nn.mu.RUnlock()
	for name, nodes := range racks {
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Host+nodes[i].ID < nodes[j].Host+nodes[j].ID })
		d.Racks = append(d.Racks, statusRack{Name: name, Nodes: nodes})
	}
	sort.Slice(d.Racks, func(i, j int) bool { return d.Racks[i].Name < d.Racks[j].Name })
	for _, r := range nn.speeds.Records("") {
		dn := r.Datanode
		if h := hosts[dn]; h != "" {
			dn = h + " (" + dn + ")"
		}
		d.Speeds = append(d.Speeds, statusSpeed{
			Client: r.Client, Datanode: dn, Recent: fmt.Sprintf("%.1f", r.Recent/1e6),
			Historical: fmt.Sprintf("%.1f", r.Historical/1e6), Samples: r.Samples,
			Last: time.UnixMilli(r.LastUnixMs).Format("15:04:05"),
		})
	}
	return d
}

// bytesString renders a byte count with a binary unit.
func bytesString(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
