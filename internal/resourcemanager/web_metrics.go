package resourcemanager

import (
	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/mapreduce"
)

// clusterMetrics is a snapshot of what operators count the cluster by.
type clusterMetrics struct {
	submitted                    int64
	byState                      map[string]int
	nodes, mapSlots, reduceSlots int
	mapsUsed, reducesUsed        int
}

func (rm *ResourceManager) snapshotMetrics() clusterMetrics {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	m := clusterMetrics{submitted: rm.seq, byState: map[string]int{}, nodes: len(rm.nodes)}
	for _, j := range rm.order {
		m.byState[j.state]++
		for _, t := range j.maps {
			m.mapsUsed += len(t.running)
		}
		for _, t := range j.reduces {
			m.reducesUsed += len(t.running)
		}
	}
	for _, n := range rm.nodes {
		m.mapSlots += n.mapSlots
		m.reduceSlots += n.reduceSlots
	}
	return m
}

// metricsCollector exports the snapshot: jobs by state, slots used and
// free, running task attempts. One snapshot per scrape keeps the figures
// of a scrape consistent with each other.
type metricsCollector struct {
	rm                                *ResourceManager
	jobs, slots, slotsUsed, slotsFree *prometheus.Desc
	running, subm                     *prometheus.Desc
}

func newMetricsCollector(rm *ResourceManager) *metricsCollector {
	return &metricsCollector{rm: rm,
		jobs:      prometheus.NewDesc("smarth_rm_jobs", "Remembered jobs by state.", []string{"state"}, nil),
		slots:     prometheus.NewDesc("smarth_rm_slots", "Task slots of the live node managers, by kind (map, reduce).", []string{"kind"}, nil),
		slotsUsed: prometheus.NewDesc("smarth_rm_slots_used", "Task slots running an attempt, by kind.", []string{"kind"}, nil),
		slotsFree: prometheus.NewDesc("smarth_rm_slots_free", "Task slots free, by kind.", []string{"kind"}, nil),
		running:   prometheus.NewDesc("smarth_rm_running_tasks", "Task attempts running on the cluster.", nil, nil),
		subm:      prometheus.NewDesc("smarth_rm_jobs_submitted_total", "Jobs submitted since start.", nil, nil),
	}
}

func (c *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.slots, c.slotsUsed, c.slotsFree, c.running, c.subm} {
		ch <- d
	}
}

func (c *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.rm.snapshotMetrics()
	for _, s := range []string{mapreduce.StatePending, mapreduce.StateRunning, mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled} {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(m.byState[s]), s)
	}
	ch <- prometheus.MustNewConstMetric(c.slots, prometheus.GaugeValue, float64(m.mapSlots), "map")
	ch <- prometheus.MustNewConstMetric(c.slots, prometheus.GaugeValue, float64(m.reduceSlots), "reduce")
	ch <- prometheus.MustNewConstMetric(c.slotsUsed, prometheus.GaugeValue, float64(m.mapsUsed), "map")
	ch <- prometheus.MustNewConstMetric(c.slotsUsed, prometheus.GaugeValue, float64(m.reducesUsed), "reduce")
	ch <- prometheus.MustNewConstMetric(c.slotsFree, prometheus.GaugeValue, float64(max(0, m.mapSlots-m.mapsUsed)), "map")
	ch <- prometheus.MustNewConstMetric(c.slotsFree, prometheus.GaugeValue, float64(max(0, m.reduceSlots-m.reducesUsed)), "reduce")
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(m.mapsUsed+m.reducesUsed))
	ch <- prometheus.MustNewConstMetric(c.subm, prometheus.CounterValue, float64(m.submitted))
}
