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

// Record is the state of one (client, datanode) pair.
type Record struct {
	Client     string
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
}

type client struct {
	host  string
	seen  time.Time
	nodes map[string]*pair
}

// Table holds the records of all clients.
type Table struct {
	mu      sync.Mutex
	clients map[string]*client // guarded by mu
}

// New returns an empty table.
func New() *Table { return &Table{clients: map[string]*client{}} }

// Record adds a client heartbeat's samples; samples with no bytes or no
// time are ignored. A heartbeat without samples only keeps the client alive.
func (t *Table) Record(clientName, host string, samples []Sample, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[clientName]
	if c == nil {
		c = &client{nodes: map[string]*pair{}}
		t.clients[clientName] = c
	}
	c.host, c.seen = host, now
	for _, s := range samples {
		if s.Bytes <= 0 || s.Nanos <= 0 || s.Datanode == "" {
			continue
		}
		speed := float64(s.Bytes) / (float64(s.Nanos) / 1e9)
		p := c.nodes[s.Datanode]
		if p == nil {
			p = &pair{recent: speed}
			c.nodes[s.Datanode] = p
		} else {
			p.recent = Alpha*speed + (1-Alpha)*p.recent
		}
		p.bytes += s.Bytes
		p.nanos += s.Nanos
		p.samples++
		p.lastMs = max(p.lastMs, s.EndUnixMs)
		if p.lastMs == 0 {
			p.lastMs = now.UnixMilli()
		}
	}
}

// Recent returns the client's recent speed to each datanode it has
// records for (nil if none).
func (t *Table) Recent(clientName string) map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[clientName]
	if c == nil || len(c.nodes) == 0 {
		return nil
	}
	out := make(map[string]float64, len(c.nodes))
	for dn, p := range c.nodes {
		out[dn] = p.recent
	}
	return out
}

// Records lists the records of one client, or of all when clientName is
// empty, sorted by client and then by recent speed, fastest first.
func (t *Table) Records(clientName string) []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Record
	for name, c := range t.clients {
		if clientName != "" && name != clientName {
			continue
		}
		for dn, p := range c.nodes {
			out = append(out, Record{
				Client: name, Datanode: dn, Recent: p.recent,
				Historical: float64(p.bytes) / (float64(p.nanos) / 1e9),
				Samples:    p.samples, LastUnixMs: p.lastMs,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Client != out[j].Client {
			return out[i].Client < out[j].Client
		}
		if out[i].Recent != out[j].Recent {
			return out[i].Recent > out[j].Recent
		}
		return out[i].Datanode < out[j].Datanode
	})
	return out
}

// Expire forgets clients not heard from within ttl and returns how many.
func (t *Table) Expire(now time.Time, ttl time.Duration) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for name, c := range t.clients {
		if now.Sub(c.seen) > ttl {
			delete(t.clients, name)
			n++
		}
	}
	return n
}

// Clients is the number of clients with a record or a recent heartbeat.
func (t *Table) Clients() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients)
}
