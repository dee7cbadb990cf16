package cachemgr

import (
	"cmp"
	"slices"
	"time"
)

// Learned cache affinity (beyond seed 003). The paper measures an
// application's cache affinity once, offline: CA = 1 - T_hot/T_cold,
// its run time with its input in memory against from disk (Table 1), and
// `smarth job affinity` does the same. Those numbers describe the paper's
// cluster, not this one (Aggregation measured 0.55 here against the
// paper's 0.32), so the namenode also learns CA online from what every
// map task already reports with its cache access: how long the read of
// its input took, and whether the datanode that served it held the block
// in memory at the time (the namenode's own cache reports decide which,
// never the task).
//
// Per (user, application) it keeps the newest samples of read time per
// byte, hot and cold apart, within a window, each with the time per byte
// its task had run when it reported (reads and map function). The
// estimate is the paper's 1 - T_hot/T_cold for a map task: a cold task
// takes t_cold per byte, of which it reads for r_cold; the same task hot
// reads for r_hot instead, so CA = (r_cold - r_hot) / t_cold, with the
// medians of each, clamped to [0,1]. Read times alone (1 - r_hot/r_cold,
// what the estimate was first, and still is for reports without a task
// time) saturate: from a disk throttled to 30 MB/s every app's reads are
// 10-20x faster from memory, so every app estimated 0.87-0.95 and BG
// could not tell an app that spends its time reading from one that spends
// it computing (session 17's W1: 1.5x slower than Table 1's affinities).
// Medians, because a map read shares the machine with everything else and
// one slow read (a straggler, a GC pause) must not swing it. Estimates
// are per user, not per application name alone: the name is the caller's
// choice, so keyed by name any user could report fake read times under
// another user's "wordcount" and steer which of that user's blocks the
// cache keeps. A user can only move their own estimate, which is no more
// than the cache_affinity job parameter already lets them do.

// Bounds of the estimator. Everything a caller sends grows it, so each
// part is capped: samples per kind per (user, app), (user, app) pairs
// per user, and pairs in all.
const (
	// AffinitySamples is how many of the newest samples of each kind
	// (hot, cold) one (user, app) keeps.
	AffinitySamples = 64
	// AffinityMinSamples is how many samples of each kind an estimate
	// needs before the cache uses it; below that the configured (or the
	// job's) affinity stands.
	AffinityMinSamples = 3
	// MaxAffinityAppsPerUser bounds one user's estimates: their least
	// recently reported one goes to make room, never another user's.
	MaxAffinityAppsPerUser = 16
	// MaxAffinityApps bounds all estimates (the least recently reported
	// goes). With MaxAffinityAppsPerUser, one user alone can never push
	// another's estimates out.
	MaxAffinityApps = MaxApps
	// minSampleBytes: a shorter read is latency, not throughput, and
	// says nothing about how the app gains from memory.
	minSampleBytes = 64 << 10
)

// Affinity sources (cache_affinity_source).
const (
	AffinityLearned = "learned" // the estimate once backed by enough samples, else the table's
	AffinityTable   = "table"   // the paper's: the job's cache_affinity, else the configured table
)

type affinityKey struct{ user, app string }

type readSample struct {
	at         time.Time
	secPerMiB  float64 // the read
	taskPerMiB float64 // the task so far, reads included; 0: not reported
}

// sampleRing holds the newest AffinitySamples samples, oldest first.
type sampleRing []readSample

func (r *sampleRing) add(s readSample) {
	if len(*r) == AffinitySamples {
		*r = slices.Delete(*r, 0, 1)
	}
	*r = append(*r, s)
}

// expire drops the samples older than the window.
func (r *sampleRing) expire(cutoff time.Time) {
	i := 0
	for i < len(*r) && (*r)[i].at.Before(cutoff) {
		i++
	}
	*r = slices.Delete(*r, 0, i)
}

// medianSince is the median of of(s) over the samples s taken at or
// after cutoff (zeros, values not reported, left out), and how many
// there are. It does not change the ring: Stats reads under the
// namenode's read lock.
func (r sampleRing) medianSince(cutoff time.Time, of func(readSample) float64) (float64, int) {
	var v []float64
	for _, s := range r {
		if x := of(s); !s.at.Before(cutoff) && x > 0 {
			v = append(v, x)
		}
	}
	slices.Sort(v)
	switch n := len(v); {
	case n == 0:
		return 0, 0
	case n%2 == 1:
		return v[n/2], n
	default:
		return (v[n/2-1] + v[n/2]) / 2, n
	}
}

type affinitySamples struct {
	hot, cold sampleRing
	last      time.Time
}

// AffinityEstimate is one (user, app)'s learned cache affinity.
type AffinityEstimate struct {
	User, App string
	// (cold - hot read time) / cold task time in [0,1], or 1 - hot/cold
	// read time while no cold sample has a task time; 0 until both kinds
	// have a sample.
	Affinity            float64
	Hot, Cold           int     // samples in the window behind it
	HotMiBps, ColdMiBps float64 // median read throughputs
	// ColdTaskMiBps is the median rate at which cold tasks got through
	// their input, reads and map function (0: no task times); ColdTasks
	// how many cold samples have a task time.
	ColdTaskMiBps float64
	ColdTasks     int
	Used          bool // enough samples of both kinds for the cache to use it
}

// affinityEstimator learns CA per (user, app). Not safe for concurrent
// use: the manager calls it under the namenode's lock.
type affinityEstimator struct {
	window time.Duration
	apps   map[affinityKey]*affinitySamples
}

func newAffinityEstimator(window time.Duration) *affinityEstimator {
	return &affinityEstimator{window: window, apps: map[affinityKey]*affinitySamples{}}
}

// add records one read of bytes in d, from memory (hot) or not, by a
// task that had run for task (0: not reported). A read too short to
// measure throughput is ignored; a task time shorter than its read is
// not one and is left out.
func (e *affinityEstimator) add(user, app string, hot bool, bytes int64, d, task time.Duration, now time.Time) {
	if bytes < minSampleBytes || d <= 0 {
		return
	}
	if task < d {
		task = 0
	}
	k := affinityKey{user, app}
	s := e.apps[k]
	if s == nil {
		e.makeRoom(user, now)
		s = &affinitySamples{}
		e.apps[k] = s
	}
	s.last = now
	cutoff := now.Add(-e.window)
	s.hot.expire(cutoff)
	s.cold.expire(cutoff)
	r := &s.cold
	if hot {
		r = &s.hot
	}
	mib := float64(bytes) / (1 << 20)
	r.add(readSample{at: now, secPerMiB: d.Seconds() / mib, taskPerMiB: task.Seconds() / mib})
}

// makeRoom drops the least recently reported estimates so that one more
// of user's fits: first among user's own when they hold their share,
// then among all.
func (e *affinityEstimator) makeRoom(user string, now time.Time) {
	mine := 0
	for k := range e.apps {
		if k.user == user {
			mine++
		}
	}
	if mine >= MaxAffinityAppsPerUser {
		e.dropOldest(func(k affinityKey) bool { return k.user == user }, now)
	}
	for len(e.apps) >= MaxAffinityApps {
		e.dropOldest(func(affinityKey) bool { return true }, now)
	}
}

func (e *affinityEstimator) dropOldest(match func(affinityKey) bool, now time.Time) {
	var oldest affinityKey
	at, found := now, false
	for k, s := range e.apps {
		if match(k) && (!found || s.last.Before(at)) {
			oldest, at, found = k, s.last, true
		}
	}
	if found {
		delete(e.apps, oldest)
	}
}

// estimate is (user, app)'s estimate at now from the samples within the
// window.
func (e *affinityEstimator) estimate(user, app string, now time.Time) (AffinityEstimate, bool) {
	s := e.apps[affinityKey{user, app}]
	if s == nil {
		return AffinityEstimate{User: user, App: app}, false
	}
	cutoff := now.Add(-e.window)
	read := func(s readSample) float64 { return s.secPerMiB }
	hot, nh := s.hot.medianSince(cutoff, read)
	cold, nc := s.cold.medianSince(cutoff, read)
	task, nt := s.cold.medianSince(cutoff, func(s readSample) float64 { return s.taskPerMiB })
	out := AffinityEstimate{User: user, App: app, Hot: nh, Cold: nc, ColdTasks: nt}
	if nh > 0 {
		out.HotMiBps = 1 / hot
	}
	if nc > 0 {
		out.ColdMiBps = 1 / cold
	}
	if nt > 0 {
		out.ColdTaskMiBps = 1 / task
	}
	switch {
	case nh == 0 || nc == 0:
	case nt > 0:
		out.Affinity = max(0, min(1, (cold-hot)/task))
	default:
		out.Affinity = max(0, min(1, 1-hot/cold))
	}
	out.Used = nh >= AffinityMinSamples && nc >= AffinityMinSamples
	return out, true
}

// all lists every estimate, by user then app.
func (e *affinityEstimator) all(now time.Time) []AffinityEstimate {
	out := make([]AffinityEstimate, 0, len(e.apps))
	for k := range e.apps {
		est, _ := e.estimate(k.user, k.app, now)
		out = append(out, est)
	}
	slices.SortFunc(out, func(a, b AffinityEstimate) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.App, b.App))
	})
	return out
}
