package sched

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Locality of a map task relative to the node it is launched on.
type Locality int

// Locality levels, best first.
const (
	CacheLocal Locality = iota // the split's block is in the node's datanode memory (seed 003)
	NodeLocal                  // a replica of the split is on the node
	RackLocal                  // a replica is on the node's rack
	OffRack                    // anywhere else
)

func (l Locality) String() string {
	return [...]string{"cache", "node", "rack", "any"}[l]
}

// Node is the heartbeating node manager.
type Node struct {
	ID              string
	Host            string // matched against task Hosts and CachedHosts (datanode hostnames)
	Rack            string
	FreeMapSlots    int
	FreeReduceSlots int
}

// MapTask is a pending map task.
type MapTask struct {
	Index       int
	Hosts       []string // hosts holding the split's block
	Racks       []string // their racks
	CachedHosts []string // hosts holding the block in memory (seed 003)
}

// Job is a running job as a policy sees it.
type Job struct {
	ID             string
	Seq            int64 // submission order
	PendingMaps    []MapTask
	PendingReduces []int // reduce indexes ready to launch
	RunningTasks   int
	// CachedFraction is R_j of seed 003: the fraction of the job's input
	// blocks held in datanode memory, as the namenode last reported it.
	// Unused by fifo and delay.
	CachedFraction float64
	// MapLimit is the most maps the job may launch in this heartbeat (its
	// share of the slots, seed 003 section 5.4: each of four apps gets
	// 25%); 0 = no limit. A job at its share is given no PendingMaps.
	MapLimit int
}

// Assignment is one task to launch on the heartbeating node.
type Assignment struct {
	JobID    string
	IsMap    bool
	Index    int
	Locality Locality // maps only
}

func (a Assignment) String() string {
	if a.IsMap {
		return fmt.Sprintf("%s:m%d:%s", a.JobID, a.Index, a.Locality)
	}
	return fmt.Sprintf("%s:r%d", a.JobID, a.Index)
}

// Policy decides, for one heartbeat, which tasks the node runs. jobs is
// in submission order and must not be modified; a policy may keep its own
// per-job state (skip counts) keyed by job ID.
type Policy interface {
	Assign(node Node, jobs []Job) []Assignment
}

// Options tune the policies that take them.
type Options struct {
	NodeSkips int // delay, cachelocal: skips before rack-local (D1); default 3
	RackSkips int // delay, cachelocal: skips before off-rack (D2 >= D1); default 6
	// CacheSkips is cachelocal's C: a job waits R_j x C skips for a
	// cache-local slot before taking a node-local one. 0 takes the
	// default 3; a negative value means no wait (cached tasks are still
	// preferred where they are local).
	CacheSkips int
	// MaxAllocations is how many rounds of Alg. 1 (at most one map per job
	// per round, skip counts advance) a heartbeat runs before the rounds
	// that only fill slots left free; default 2.
	MaxAllocations int
}

// Policies maps policy names to constructors.
var Policies = map[string]func(Options) Policy{
	"fifo":       func(Options) Policy { return &FIFO{} },
	"delay":      func(o Options) Policy { return NewDelay(o.NodeSkips, o.RackSkips) },
	"cachelocal": func(o Options) Policy { return NewCacheDelay(o) },
}

// New returns the named policy.
func New(name string, o Options) (Policy, error) {
	f, ok := Policies[name]
	if !ok {
		return nil, fmt.Errorf("unknown scheduler %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return f(o), nil
}

// Names lists the policy names, sorted.
func Names() []string { return slices.Sorted(maps.Keys(Policies)) }

// LocalityOf says how local task t is to node n, memory caches included:
// CacheLocal when n's datanode holds the split's block in memory.
func LocalityOf(t MapTask, n Node) Locality {
	if slices.Contains(t.CachedHosts, n.Host) {
		return CacheLocal
	}
	return DataLocality(t, n)
}

// DataLocality says how local task t's replicas are to node n, ignoring
// memory caches: fifo and delay are the no-cache/DL baselines and place
// by data locality alone (the resource manager still counts their
// launches on a caching node as cache-local).
func DataLocality(t MapTask, n Node) Locality {
	if slices.Contains(t.Hosts, n.Host) {
		return NodeLocal
	}
	if n.Rack != "" && slices.Contains(t.Racks, n.Rack) {
		return RackLocal
	}
	return OffRack
}

// pending tracks what a policy has handed out during one heartbeat, so
// it never gives the same task twice.
type pending struct {
	jobs  []Job
	taken map[string]map[int]bool // job ID -> map index -> taken
	run   map[string]int          // extra running tasks this heartbeat
	// locality rates a task for a node: LocalityOf for cache-aware
	// policies, DataLocality for the baselines.
	locality func(MapTask, Node) Locality
}

func newPending(jobs []Job, locality func(MapTask, Node) Locality) *pending {
	return &pending{jobs: jobs, taken: map[string]map[int]bool{}, run: map[string]int{}, locality: locality}
}

// best returns j's untaken map task closest to n, preferring lower
// levels. A task whose split has no replicas (generated input) has no
// locality to wait for: it is allowed at any level, after the tasks local
// enough to n.
func (p *pending) best(j *Job, n Node, allowed Locality) (MapTask, Locality, bool) {
	if j.MapLimit > 0 && p.run[j.ID] >= j.MapLimit {
		return MapTask{}, 0, false
	}
	var found, anywhere MapTask
	level, haveAnywhere := OffRack+1, false
	for _, t := range j.PendingMaps {
		if p.taken[j.ID][t.Index] {
			continue
		}
		if len(t.Hosts) == 0 && len(t.CachedHosts) == 0 {
			if !haveAnywhere {
				anywhere, haveAnywhere = t, true
			}
			continue
		}
		l := p.locality(t, n)
		if l < level {
			found, level = t, l
			if l == CacheLocal {
				break
			}
		}
	}
	switch {
	case level <= allowed:
		return found, level, true
	case haveAnywhere:
		return anywhere, OffRack, true
	}
	return MapTask{}, 0, false
}

func (p *pending) take(j *Job, t MapTask, l Locality) Assignment {
	if p.taken[j.ID] == nil {
		p.taken[j.ID] = map[int]bool{}
	}
	p.taken[j.ID][t.Index] = true
	p.run[j.ID]++
	return Assignment{JobID: j.ID, IsMap: true, Index: t.Index, Locality: l}
}

func (p *pending) hasMaps(j *Job) bool {
	if j.MapLimit > 0 && p.run[j.ID] >= j.MapLimit {
		return false
	}
	return len(j.PendingMaps) > len(p.taken[j.ID])
}

// assignReduces fills free reduce slots with ready reduces, jobs in order.
func assignReduces(n Node, jobs []Job) []Assignment {
	var out []Assignment
	free := n.FreeReduceSlots
	for _, j := range jobs {
		for _, r := range j.PendingReduces {
			if free == 0 {
				return out
			}
			out = append(out, Assignment{JobID: j.ID, Index: r})
			free--
		}
	}
	return out
}

// FIFO serves jobs strictly in submission order, picking the most local
// task of the first job that has one.
type FIFO struct{}

var _ Policy = (*FIFO)(nil)

// Assign fills the node's free slots.
func (*FIFO) Assign(n Node, jobs []Job) []Assignment {
	out := assignReduces(n, jobs)
	p := newPending(jobs, DataLocality)
	for range n.FreeMapSlots {
		launched := false
		for i := range jobs {
			j := &jobs[i]
			if t, l, ok := p.best(j, n, OffRack); ok {
				out = append(out, p.take(j, t, l))
				launched = true
				break
			}
		}
		if !launched {
			break
		}
	}
	return out
}

// Delay is delay scheduling with node and rack levels.
type Delay struct {
	NodeSkips int
	RackSkips int
	skips     map[string]int // job ID -> heartbeats skipped since its last node-local launch
}

var _ Policy = (*Delay)(nil)

// NewDelay returns delay scheduling with the given skip thresholds.
func NewDelay(nodeSkips, rackSkips int) *Delay {
	if nodeSkips <= 0 {
		nodeSkips = 3
	}
	if rackSkips < nodeSkips {
		rackSkips = max(2*nodeSkips, rackSkips)
	}
	return &Delay{NodeSkips: nodeSkips, RackSkips: rackSkips, skips: map[string]int{}}
}

// Skips reports a job's current skip count (for tests and the web page).
func (d *Delay) Skips(jobID string) int { return d.skips[jobID] }

// Assign fills the node's free map slots, skipping jobs without a
// local-enough task.
func (d *Delay) Assign(n Node, jobs []Job) []Assignment {
	forgetGone(d.skips, jobs)
	out := assignReduces(n, jobs)
	p := newPending(jobs, DataLocality)
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	for range n.FreeMapSlots {
		p.fairOrder(order)
		launched := false
		for _, i := range order {
			j := &jobs[i]
			if !p.hasMaps(j) {
				continue
			}
			allowed := NodeLocal
			if s := d.skips[j.ID]; s >= d.RackSkips {
				allowed = OffRack
			} else if s >= d.NodeSkips {
				allowed = RackLocal
			}
			if t, l, ok := p.best(j, n, allowed); ok {
				out = append(out, p.take(j, t, l))
				if l == NodeLocal {
					d.skips[j.ID] = 0
				}
				launched = true
				break
			}
			d.skips[j.ID]++
		}
		if !launched {
			break
		}
	}
	return out
}

// fairOrder sorts order (indexes into p.jobs) by fewest running tasks
// first, counting this heartbeat's launches, ties by submission.
func (p *pending) fairOrder(order []int) {
	sort.SliceStable(order, func(a, b int) bool {
		ja, jb := &p.jobs[order[a]], &p.jobs[order[b]]
		ra, rb := ja.RunningTasks+p.run[ja.ID], jb.RunningTasks+p.run[jb.ID]
		if ra != rb {
			return ra < rb
		}
		return ja.Seq < jb.Seq
	})
}

// forgetGone drops the skip counts of jobs no longer running.
func forgetGone(skips map[string]int, jobs []Job) {
	if len(skips) <= len(jobs) {
		return
	}
	live := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		live[j.ID] = true
	}
	for id := range skips {
		if !live[id] {
			delete(skips, id)
		}
	}
}
