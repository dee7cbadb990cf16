package speeds

import (
	"sort"
	"sync"
	"time"
)

// Alpha is the weight of a new sample in the recent speed: about the last
// five blocks matter, so a node that got slow is noticed within one or two
// heartbeats of a busy writer.
const Alpha = 0.3

// Sample is one block transfer to a first datanode.
type Sample struct {
	Datanode  string
	Bytes     int64
	Nanos     int64
	EndUnixMs int64
}

// Record is the state of one (host, datanode) pair.
type Record struct {
	Host       string // the writing host (its network position)
	Client     string // the latest client of that host that reported
	Datanode   string
	Recent     float64 // bytes/s, moving average
	Historical float64 // bytes/s over all samples
	Samples    int64
	LastUnixMs int64
}

type pair struct {
	recent       float64
	bytes, nanos int64
	samples      int64
	lastMs       int64
	updated      time.Time // namenode clock at the latest sample: records age out from it
}

type host struct {
	client string // latest reporting client's name
	seen   time.Time
	nodes  map[string]*pair
}

type clientSeen struct {
	host string
	seen time.Time
}

// Table holds the records of all writing hosts. Records are kept per host,
// not per client process: the link from a host to a datanode is the same
// whichever process on it writes, so each `smarth fs put` starts from what
// the ones before it measured.
type Table struct {
	mu      sync.Mutex
	hosts   map[string]*host      // guarded by mu: by host key
	clients map[string]clientSeen // guarded by mu: client name -> its host, for lookups by name
}

// New returns an empty table.
func New() *Table { return &Table{hosts: map[string]*host{}, clients: map[string]clientSeen{}} }

// Record adds the samples a client on hostKey reported; samples with no
// bytes or no time are ignored. A heartbeat without samples only keeps the
// client and its host alive.
func (t *Table) Record(clientName, hostKey string, samples []Sample, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if hostKey == "" {
		hostKey = clientName // nothing better known: the client is its own host
	}
	t.clients[clientName] = clientSeen{host: hostKey, seen: now}
	h := t.hosts[hostKey]
	if h == nil {
		h = &host{nodes: map[string]*pair{}}
		t.hosts[hostKey] = h
	}
	h.client, h.seen = clientName, now
	for _, s := range samples {
		if s.Bytes <= 0 || s.Nanos <= 0 || s.Datanode == "" {
			continue
		}
		speed := float64(s.Bytes) / (float64(s.Nanos) / 1e9)
		p := h.nodes[s.Datanode]
		if p == nil {
			p = &pair{recent: speed}
			h.nodes[s.Datanode] = p
		} else {
			p.recent = Alpha*speed + (1-Alpha)*p.recent
		}
		p.bytes += s.Bytes
		p.nanos += s.Nanos
		p.samples++
		p.updated = now
		p.lastMs = max(p.lastMs, s.EndUnixMs)
		if p.lastMs == 0 {
			p.lastMs = now.UnixMilli()
		}
	}
}

// Recent returns the host's recent speed to each datanode it has a record
// for (nil if none).
func (t *Table) Recent(hostKey string) map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[hostKey]
	if h == nil || len(h.nodes) == 0 {
		return nil
	}
	out := make(map[string]float64, len(h.nodes))
	for dn, p := range h.nodes {
		out[dn] = p.recent
	}
	return out
}

// HostOf is the host a client last reported from ("" if unknown).
func (t *Table) HostOf(clientName string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.clients[clientName].host
}

// Records lists the records of one host, or of the host of the client
// named so, or of all hosts when filter is empty; sorted by host and then
// by recent speed, fastest first.
func (t *Table) Records(filter string) []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.clients[filter]; ok && t.hosts[filter] == nil {
		filter = c.host
	}
	var out []Record
	for key, h := range t.hosts {
		if filter != "" && key != filter {
			continue
		}
		for dn, p := range h.nodes {
			out = append(out, Record{
				Host: key, Client: h.client, Datanode: dn, Recent: p.recent,
				Historical: float64(p.bytes) / (float64(p.nanos) / 1e9),
				Samples:    p.samples, LastUnixMs: p.lastMs,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		if out[i].Recent != out[j].Recent {
			return out[i].Recent > out[j].Recent
		}
		return out[i].Datanode < out[j].Datanode
	})
	return out
}

// Expire ages records out: a (host, datanode) record with no sample within
// ttl is forgotten, so a datanode measured slow is tried again once its
// record is that old; a host with no records left and no heartbeat within
// ttl is forgotten. It returns how many records went.
func (t *Table) Expire(now time.Time, ttl time.Duration) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for key, h := range t.hosts {
		for dn, p := range h.nodes {
			if now.Sub(p.updated) > ttl {
				delete(h.nodes, dn)
				n++
			}
		}
		if len(h.nodes) == 0 && now.Sub(h.seen) > ttl {
			delete(t.hosts, key)
		}
	}
	for name, c := range t.clients {
		if now.Sub(c.seen) > ttl {
			delete(t.clients, name)
		}
	}
	return n
}

// Hosts is the number of hosts with a record or a recent heartbeat.
func (t *Table) Hosts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.hosts)
}
