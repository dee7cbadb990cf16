package datanode

import "github.com/prometheus/client_golang/prometheus"

// metrics are one datanode's Prometheus metrics, in its own registry so
// that many datanodes can live in one process.
type metrics struct {
	reg *prometheus.Registry

	bytesWritten     prometheus.Counter
	bytesRead        prometheus.Counter
	blocksWritten    prometheus.Counter
	blocksRead       prometheus.Counter
	blocksReplicated prometheus.Counter
	blocksRemoved    prometheus.Counter
	blocksVerified   prometheus.Counter
	checksumFailures prometheus.Counter
	xceivers         prometheus.Gauge
	bufferedBytes    prometheus.Gauge
	writeThroughput  prometheus.Histogram
	readThroughput   prometheus.Histogram
	ackLatency       prometheus.Histogram
	heartbeatLatency prometheus.Histogram
}

func newMetrics() *metrics {
	const ns, sub = "smarth", "datanode"
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help})
	}
	// Throughput buckets from 1 MiB/s to 8 GiB/s.
	tput := prometheus.ExponentialBuckets(1<<20, 2, 14)
	m := &metrics{
		reg:              prometheus.NewRegistry(),
		bytesWritten:     counter("bytes_written_total", "Block bytes received and stored."),
		bytesRead:        counter("bytes_read_total", "Block bytes sent to readers."),
		blocksWritten:    counter("blocks_written_total", "Replicas finalized after a write or transfer."),
		blocksRead:       counter("blocks_read_total", "READ_BLOCK requests served to the end."),
		blocksReplicated: counter("blocks_replicated_total", "Replicas copied to other datanodes (transfer)."),
		blocksRemoved:    counter("blocks_removed_total", "Replicas deleted on the namenode's order."),
		blocksVerified:   counter("blocks_verified_total", "Replicas verified by the block scanner."),
		checksumFailures: counter("checksum_failures_total", "Checksum mismatches found on receive, read or scan."),
		xceivers: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "xceivers_active",
			Help: "Open data-transfer connections."}),
		bufferedBytes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "multipipeline_buffered_bytes",
			Help: "Bytes received from multi-pipeline clients and not yet forwarded downstream."}),
		writeThroughput: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "write_throughput_bytes_per_second",
			Help: "Per-block receive throughput.", Buckets: tput}),
		readThroughput: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "read_throughput_bytes_per_second",
			Help: "Per-request read throughput.", Buckets: tput}),
		ackLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "packet_ack_latency_seconds",
			Help:    "From a packet's arrival to its ack going upstream (includes the downstream).",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)}),
		heartbeatLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "heartbeat_latency_seconds",
			Help: "Heartbeat round trips to the namenode.", Buckets: prometheus.ExponentialBuckets(1e-4, 2, 16)}),
	}
	m.reg.MustRegister(m.bytesWritten, m.bytesRead, m.blocksWritten, m.blocksRead, m.blocksReplicated,
		m.blocksRemoved, m.blocksVerified, m.checksumFailures, m.xceivers, m.bufferedBytes,
		m.writeThroughput, m.readThroughput, m.ackLatency, m.heartbeatLatency)
	return m
}
