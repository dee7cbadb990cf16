package sched

// Defaults of the cachelocal policy (seed 003, section IV-A).
const (
	DefaultCacheSkips     = 3 // C: the paper's experiments use 3 (Fig. 10 tries 1, 3, 5)
	DefaultMaxAllocations = 2 // the paper's MaxAllocations
)

// CacheDelay is seed 003's adaptive cache-local delay scheduling
// (Alg. 1). On each heartbeat it runs rounds; in each round every job, by
// fewest running tasks, may launch one map on the node:
//
//   - a cache-local map (the block is in the node's datanode memory) at
//     once, resetting the job's skip count;
//   - a node-local map once the job has skipped C_j = R_j x C times
//     (R_j: the job's cached input fraction), resetting the count;
//   - a rack-local map after NodeSkips skips, any map after RackSkips
//     (delay scheduling's D, split in two levels as Delay does);
//   - a map whose split has no replicas at once, without touching the
//     count (there is no locality to wait for);
//
// and a job that launches nothing counts a skip.
//
// The first MaxAllocations rounds are the paper's "for i = 1 to
// MaxAllocations" loop: they bound how many skips a job counts per
// heartbeat, and interleave the jobs so that each gets at most that many
// maps on the node before the others have had their turn. The paper stops
// there, leaving any slot beyond jobs x MaxAllocations idle until the
// next heartbeat so that a lone job spreads over more nodes. We do not:
// while a round launched something and slots are free, further rounds run
// under the same rules but count no skips, so a job alone in the cluster
// takes every free slot it is willing to take. What can still idle is
// deliberate delay scheduling: a slot every job declines because it is
// still waiting for a better-placed one (skip count below C_j, NodeSkips
// or RackSkips). That wait is bounded: each heartbeat advances a
// declining job's count by MaxAllocations, and jobs with nothing cached
// left to wait for (no pending map cached anywhere) have C_j = 0.
type CacheDelay struct {
	NodeSkips      int // D1
	RackSkips      int // D2
	CacheSkips     int // C
	MaxAllocations int
	skips          map[string]int // job ID -> skips since its last cache- or node-local launch
}

var _ Policy = (*CacheDelay)(nil)

// NewCacheDelay returns Alg. 1 with o's thresholds (zero values take the
// defaults; NodeSkips and RackSkips as NewDelay takes them).
func NewCacheDelay(o Options) *CacheDelay {
	d := NewDelay(o.NodeSkips, o.RackSkips)
	c := &CacheDelay{NodeSkips: d.NodeSkips, RackSkips: d.RackSkips, CacheSkips: o.CacheSkips,
		MaxAllocations: o.MaxAllocations, skips: map[string]int{}}
	switch {
	case c.CacheSkips == 0:
		c.CacheSkips = DefaultCacheSkips
	case c.CacheSkips < 0:
		c.CacheSkips = 0
	}
	if c.MaxAllocations <= 0 {
		c.MaxAllocations = DefaultMaxAllocations
	}
	return c
}

// Skips reports a job's current skip count (for tests and the web page).
func (c *CacheDelay) Skips(jobID string) int { return c.skips[jobID] }

// Assign fills the node's free reduce slots, then its map slots in
// rounds (see CacheDelay).
func (c *CacheDelay) Assign(n Node, jobs []Job) []Assignment {
	forgetGone(c.skips, jobs)
	out := assignReduces(n, jobs)
	p := newPending(jobs, LocalityOf)
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	free := n.FreeMapSlots
	for round := 1; free > 0; round++ {
		got := c.round(n, p, order, free, round <= c.MaxAllocations)
		out = append(out, got...)
		free -= len(got)
		if len(got) == 0 && round >= c.MaxAllocations {
			break // nothing more will launch: the next round would see the same
		}
	}
	return out
}

// round visits every job once, fewest running tasks first, and launches
// at most one map of each on n while slots last. countSkips is false in
// the rounds past MaxAllocations, which only fill slots.
func (c *CacheDelay) round(n Node, p *pending, order []int, free int, countSkips bool) []Assignment {
	var out []Assignment
	p.fairOrder(order)
	for _, i := range order {
		if len(out) == free {
			break
		}
		j := &p.jobs[i]
		if !p.hasMaps(j) {
			continue
		}
		if t, l, ok := p.best(j, n, c.allowed(c.skips[j.ID], c.cacheWait(j, p))); ok {
			out = append(out, p.take(j, t, l))
			if l <= NodeLocal {
				c.skips[j.ID] = 0
			}
			continue
		}
		if countSkips {
			c.skips[j.ID]++
		}
	}
	return out
}

// allowed is the worst locality a job may take at skip count s with
// cache wait cj. A node-local map is allowed once either wait is over:
// when C exceeds NodeSkips, a job may take a rack-local map, so it must
// not refuse a node-local one.
func (c *CacheDelay) allowed(s int, cj float64) Locality {
	switch {
	case s >= c.RackSkips:
		return OffRack
	case s >= c.NodeSkips:
		return RackLocal
	case float64(s) >= cj:
		return NodeLocal
	}
	return CacheLocal
}

// cacheWait is C_j = R_j x C, the skips j spends waiting for a
// cache-local slot. The paper launches a node-local map when skip > C_j;
// we use >= so that a job with nothing cached (R_j = 0) takes node-local
// slots at once instead of skipping one first. When none of j's untaken
// maps is cached anywhere (R_j counts blocks already processed too),
// no cache-local slot can come, and the wait is 0.
func (c *CacheDelay) cacheWait(j *Job, p *pending) float64 {
	for _, t := range j.PendingMaps {
		if len(t.CachedHosts) > 0 && !p.taken[j.ID][t.Index] {
			return j.CachedFraction * float64(c.CacheSkips)
		}
	}
	return 0
}
