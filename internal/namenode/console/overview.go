package console

import (
	"embed"
	"fmt"
	"html/template"
	"slices"
	"sort"
	"time"

	"smarth/internal/namenode/speeds"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
)

// The overview (/, web/status.html): capacity, health, safe mode,
// datanodes by rack with their transfers and speeds, the clients' speed
// records and the cache.

//go:embed web/status.html
var webFS embed.FS

var statusPage = template.Must(template.ParseFS(webFS, "web/status.html"))

type statusNode struct {
	ID, Host, Addr, State, Web                  string
	Capacity, Used, NonDFS, Remaining, LastSeen string
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
	CapNonDFS                                   string // HDFS's "Non DFS Used"
	Health, RMWeb                               string
	HA                                          *statusHA // nil without HA
}

// Overview is what the overview page shows of the namenode, as figures:
// the console formats them.
type Overview struct {
	Addr, Placement                            string // bound RPC address, placement policy
	Started                                    time.Time
	SafeMode                                   bool
	SafeModeReason                             string
	LastTxID                                   uint64
	Files, Dirs, Blocks, OpenFiles             int
	UnderReplicated, Missing, Corrupt, Pending int // from the last replication scan; transfers in flight
	Datanodes                                  []Datanode
	Health                                     error // the namenode's health check (nil: healthy)
	Cache                                      *dfspb.GetCacheStatsResponse
	Speeds                                     []speeds.Record // the clients' speed records
	HA                                         *HA             // nil without HA (ha.go)
}

// Datanode is one row of the datanode table.
type Datanode struct {
	Info     *dfspb.DatanodeInfo
	Live     bool
	LastSeen time.Time // its last heartbeat
	Blocks   int       // replicas the block map has on it
}

func (c *console) statusData() statusData {
	now := c.cfg.Clock()
	o := c.nn.Overview()
	d := statusData{
		Addr: o.Addr, Placement: o.Placement, Started: o.Started.Format(time.RFC3339),
		SafeMode: o.SafeMode, SafeModeReason: o.SafeModeReason, LastTxID: o.LastTxID,
		Files: o.Files, Dirs: o.Dirs, Blocks: o.Blocks,
		OpenFiles: o.OpenFiles, UnderReplicated: o.UnderReplicated, Missing: o.Missing,
		Corrupt: o.Corrupt, Pending: o.Pending, HA: haStatus(o.HA),
	}
	var capTotal, capUsed, capRemaining, capNonDFS int64
	racks := map[string][]statusNode{}
	hosts := map[string]string{}
	for _, dn := range o.Datanodes {
		id := dn.Info.Id
		hosts[id] = dn.Info.Hostname
		state := "live"
		if !dn.Live {
			state = "dead"
			if dn.Info.AdminState == dfspb.AdminState_IN_MAINTENANCE {
				state = "dead, in maintenance" // its replicas are kept
			}
			d.Dead++
		} else {
			switch dn.Info.AdminState { // HDFS's console says the same
			case dfspb.AdminState_DECOMMISSION_IN_PROGRESS:
				state = "decommission in progress"
			case dfspb.AdminState_DECOMMISSIONED:
				state = "decommissioned"
			case dfspb.AdminState_ENTERING_MAINTENANCE:
				state = "entering maintenance"
			case dfspb.AdminState_IN_MAINTENANCE:
				state = "in maintenance"
			}
			d.Live++
			capTotal, capUsed, capRemaining = capTotal+dn.Info.Capacity, capUsed+dn.Info.DfsUsed, capRemaining+dn.Info.Remaining
			capNonDFS += dn.Info.NonDfsUsed()
		}
		web := ""
		if dn.Info.HttpPort != 0 {
			web = fmt.Sprintf("%s:%d", dn.Info.IpAddr, dn.Info.HttpPort)
		}
		racks[dn.Info.Rack] = append(racks[dn.Info.Rack], statusNode{
			ID: id, Host: dn.Info.Hostname, Addr: fmt.Sprintf("%s:%d", dn.Info.IpAddr, dn.Info.DataPort),
			State: state, Web: web, Dead: !dn.Live, Capacity: units.FormatSize(dn.Info.Capacity), Used: units.FormatSize(dn.Info.DfsUsed),
			NonDFS: units.FormatSize(dn.Info.NonDfsUsed()), Remaining: units.FormatSize(dn.Info.Remaining), Blocks: dn.Blocks,
			Xceivers: dn.Info.XceiverCount, LastSeen: now.Sub(dn.LastSeen).Round(time.Second).String(),
		})
	}
	d.CapTotal, d.CapUsed, d.CapRemaining = units.FormatSize(capTotal), units.FormatSize(capUsed), units.FormatSize(capRemaining)
	d.CapNonDFS = units.FormatSize(capNonDFS)
	d.CapPercent = "-"
	if capTotal > 0 {
		d.CapPercent = fmt.Sprintf("%.1f%%", 100*float64(capUsed)/float64(capTotal))
	}
	if err := o.Health; err != nil {
		d.Health = err.Error()
	} else if d.Missing > 0 || d.Corrupt > 0 {
		d.Health = fmt.Sprintf("%d missing and %d corrupt blocks", d.Missing, d.Corrupt)
	}
	d.RMWeb = c.cfg.ResourceManagerWeb
	for name, nodes := range racks {
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Host+nodes[i].ID < nodes[j].Host+nodes[j].ID })
		d.Racks = append(d.Racks, statusRack{Name: name, Nodes: nodes})
	}
	sort.Slice(d.Racks, func(i, j int) bool { return d.Racks[i].Name < d.Racks[j].Name })
	d.Cache = cacheStatus(o.Cache)
	// The overview is public: no job ids (the resource manager shows a
	// user their own jobs, with their cached input).
	d.Cache.Jobs = nil
	records := o.Speeds
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
