package namenode

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/ipc"
)

// metrics are the namenode's Prometheus metrics, in a registry of its own
// so that several namenodes can live in one process.
type metrics struct {
	reg            *prometheus.Registry
	rpcs           *prometheus.CounterVec
	rpcLatency     *prometheus.HistogramVec
	rpcMethods     sync.Map // full method name -> *rpcMethodMetrics
	edits          *prometheus.CounterVec
	syncLatency    prometheus.Histogram
	syncBatch      prometheus.Histogram
	checkpoints    prometheus.Counter
	invalidations  prometheus.Counter
	transfers      prometheus.Counter
	recoveries     prometheus.Counter
	corruptReports prometheus.Counter
	speedSamples   prometheus.Counter
	earlyDropped   prometheus.Counter
}

func newMetrics(nn *NameNode) *metrics {
	const ns = "smarth_namenode"
	m := &metrics{
		reg: prometheus.NewRegistry(),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "rpc_total",
			Help: "RPCs served, by method and gRPC status code."}, []string{"method", "code"}),
		rpcLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "rpc_duration_seconds",
			Help: "RPC latency by method, including waiting for the edit log.", Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18)}, []string{"method"}),
		edits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "edits_total",
			Help: "Edit log records written, by operation."}, []string{"op"}),
		syncLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "edit_log_sync_seconds",
			Help: "Time of one group commit (write + fdatasync).", Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)}),
		syncBatch: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "edit_log_sync_batch_records",
			Help: "Records made durable by one group commit.", Buckets: prometheus.ExponentialBuckets(1, 2, 12)}),
		checkpoints:    prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "checkpoints_total", Help: "Checkpoint images saved."}),
		invalidations:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "invalidations_total", Help: "Replica deletions sent to datanodes."}),
		transfers:      prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "replications_scheduled_total", Help: "Re-replication transfers sent to datanodes."}),
		recoveries:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "block_recoveries_total", Help: "Lease recovery commands sent."}),
		corruptReports: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "corrupt_replica_reports_total", Help: "Corrupt replicas reported by readers and datanodes."}),
		speedSamples:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "speed_samples_total", Help: "Block transfer speed samples received from clients."}),
		earlyDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "standby_early_reports_dropped_total",
			Help: "Replica reports a standby received before the edit of their block and could not hold (its table full); the next full report finds them."}),
	}
	m.reg.MustRegister(m.rpcs, m.rpcLatency, m.edits, m.syncLatency, m.syncBatch, m.checkpoints,
		m.invalidations, m.transfers, m.recoveries, m.corruptReports, m.speedSamples, m.earlyDropped)
	gauge := func(name, help string, labels prometheus.Labels, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help, ConstLabels: labels}, f))
	}
	locked := func(f func() float64) func() float64 {
		return func() float64 {
			nn.mu.RLock()
			defer nn.mu.RUnlock()
			return f()
		}
	}
	gauge("files", "Files in the namespace.", nil, locked(func() float64 { return float64(nn.state.Tree().Files()) }))
	gauge("directories", "Directories in the namespace, including /.", nil, locked(func() float64 { return float64(nn.state.Tree().Dirs()) }))
	gauge("blocks", "Blocks in the block map.", nil, locked(func() float64 { return float64(nn.state.Blocks().Len()) }))
	gauge("standby_early_reports", "Replica reports a standby holds until the edit of their block is applied.", nil, locked(func() float64 { return float64(nn.early.n) }))
	gauge("open_files", "Files open for writing (under a lease).", nil, locked(func() float64 { return float64(nn.leases.files()) }))
	for _, st := range []string{"live", "dead"} {
		live := st == "live"
		gauge("datanodes", "Datanodes by state.", prometheus.Labels{"state": st}, locked(func() float64 {
			n := 0
			for _, dn := range nn.nodes {
				if dn.live == live {
					n++
				}
			}
			return float64(n)
		}))
	}
	gauge("under_replicated_blocks", "Complete blocks with fewer good live replicas than their replication (last scan).", nil,
		locked(func() float64 { return float64(nn.stats.underReplicated) }))
	gauge("missing_blocks", "Complete blocks with no good live replica (last scan).", nil,
		locked(func() float64 { return float64(nn.stats.missing) }))
	gauge("corrupt_blocks", "Complete blocks with at least one corrupt replica (last scan).", nil,
		locked(func() float64 { return float64(nn.stats.corrupt) }))
	gauge("pending_replications", "Re-replication transfers in flight.", nil, locked(func() float64 { return float64(len(nn.pending)) }))
	gauge("safe_mode", "1 while in safe mode.", nil, locked(func() float64 {
		if nn.safe.on {
			return 1
		}
		return 0
	}))
	nn.cache.Register(m.reg)
	nn.registerCapacityGauges(m.reg, locked)
	gauge("speed_clients", "Client hosts with speed records.", nil, func() float64 { return float64(nn.speeds.Hosts()) })
	m.reg.MustRegister(haCollector{nn}) // nothing without HA (haview.go)
	return m
}

// registerPort adds the RPC port's connection series; Start calls it
// once, with the port's mux.
func (m *metrics) registerPort(mux *ipc.Mux) {
	const ns = "smarth_namenode"
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "rpc_connections",
			Help: "Connections open on the RPC port, gRPC and IPC."}, func() float64 { return float64(mux.Conns()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: ns, Name: "rpc_connections_refused_total",
			Help: "Connections to the RPC port reset at accept: the port (rpc_max_connections) or the peer (rpc_max_connections_per_host) had its maximum open."},
			func() float64 { return float64(mux.Refused()) }))
}

func (m *metrics) observeSync(d time.Duration, records int) {
	m.syncLatency.Observe(d.Seconds())
	m.syncBatch.Observe(float64(records))
}

// registerCapacityGauges exports the live datanodes' capacity totals, as
// HDFS's CapacityTotal/CapacityUsed/CapacityRemaining.
func (nn *NameNode) registerCapacityGauges(reg *prometheus.Registry, locked func(func() float64) func() float64) {
	sum := func(f func(d *datanode) int64) func() float64 {
		return locked(func() float64 {
			var n int64
			for _, dn := range nn.nodes {
				if dn.live {
					n += f(dn)
				}
			}
			return float64(n)
		})
	}
	for name, f := range map[string]func(*datanode) int64{
		"capacity_total_bytes":     func(d *datanode) int64 { return d.info.Capacity },
		"capacity_used_bytes":      func(d *datanode) int64 { return d.info.DfsUsed },
		"capacity_remaining_bytes": func(d *datanode) int64 { return d.info.Remaining },
	} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "smarth_namenode", Name: name,
			Help: "Sum over live datanodes (" + name + ")."}, sum(f)))
	}
}
