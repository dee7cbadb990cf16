package datanode

import (
	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/datanode/memcache"
)

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
	tokenRefusals    prometheus.Counter
	xceivers         prometheus.Gauge
	bufferedBytes    prometheus.Gauge
	receiveBuffers   prometheus.Gauge   // bytes held against receive_buffer_budget
	receiveRefusals  prometheus.Counter // writes refused for want of receive-buffer memory
	writeThroughput  prometheus.Histogram
	readThroughput   prometheus.Histogram
	ackLatency       prometheus.Histogram
	heartbeatLatency prometheus.Histogram

	// In-memory cache (cache capacity, used bytes and cached blocks are
	// read from the cache itself, see watchCache).
	cacheHits       prometheus.Counter
	cacheMisses     prometheus.Counter
	blocksCached    prometheus.Counter
	blocksUncached  prometheus.Counter
	cacheFailures   *prometheus.CounterVec
	bytesReadMemory prometheus.Counter
	bytesReadDisk   prometheus.Counter

	localReadBytes prometheus.Counter // WebHDFS OPEN bytes read from this node's own replicas

	shortCircuitGrants   prometheus.Counter // replicas' descriptors passed to local clients
	shortCircuitRefusals prometheus.Counter // short-circuit requests refused
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
		tokenRefusals:    counter("block_token_refusals_total", "Data-transfer ops refused for a missing, forged, expired or mismatched block access token."),
		xceivers: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "xceivers_active",
			Help: "Open data-transfer connections."}),
		bufferedBytes: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "multipipeline_buffered_bytes",
			Help: "Bytes received from multi-pipeline clients and not yet forwarded downstream."}),
		receiveBuffers: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "receive_buffer_bytes",
			Help: "Packet buffers held by write connections, bounded by receive_buffer_budget."}),
		receiveRefusals: counter("receive_buffer_refusals_total", "Writes refused (busy) because receive_buffer_budget was used up."),
		writeThroughput: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "write_throughput_bytes_per_second",
			Help: "Per-block receive throughput.", Buckets: tput}),
		readThroughput: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "read_throughput_bytes_per_second",
			Help: "Per-request read throughput.", Buckets: tput}),
		ackLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "packet_ack_latency_seconds",
			Help:    "From a packet's arrival to its ack going upstream (includes the downstream).",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)}),
		heartbeatLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "heartbeat_latency_seconds",
			Help: "Heartbeat round trips to the namenode.", Buckets: prometheus.ExponentialBuckets(1e-4, 2, 16)}),
		cacheHits:       counter("cache_hits_total", "READ_BLOCK requests served from the in-memory cache."),
		cacheMisses:     counter("cache_misses_total", "READ_BLOCK requests of finalized replicas not in the in-memory cache (served from disk)."),
		blocksCached:    counter("blocks_cached_total", "Replicas read, verified and put in the in-memory cache."),
		blocksUncached:  counter("blocks_uncached_total", "Replicas removed from the in-memory cache (uncache command, replica changed or deleted)."),
		bytesReadMemory: counter("bytes_read_memory_total", "Block bytes sent to readers from the in-memory cache."),
		bytesReadDisk:   counter("bytes_read_disk_total", "Block bytes sent to readers from replica files."),
		localReadBytes:  counter("webhdfs_local_read_bytes_total", "WebHDFS OPEN bytes read from this node's own replicas (no data-port trip)."),
		shortCircuitGrants: counter("short_circuit_grants_total",
			"Short-circuit local reads granted: a replica's block and meta file descriptors passed to a client on this host (domain_socket_path)."),
		shortCircuitRefusals: counter("short_circuit_refusals_total",
			"Short-circuit local read requests refused (token, replica not finalized or not here, malformed request, socket at its bound); the client reads over TCP."),
		cacheFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "cache_failures_total",
			Help: "Blocks that could not be cached, by reason: checksum (corrupt replica), capacity (no room), io (read error)."},
			[]string{"reason"}),
	}
	m.reg.MustRegister(m.cacheHits, m.cacheMisses, m.blocksCached, m.blocksUncached, m.bytesReadMemory, m.bytesReadDisk, m.localReadBytes,
		m.cacheFailures, newProcIOCollector(ns, sub), m.shortCircuitGrants, m.shortCircuitRefusals)
	m.reg.MustRegister(m.bytesWritten, m.bytesRead, m.blocksWritten, m.blocksRead, m.blocksReplicated,
		m.blocksRemoved, m.blocksVerified, m.checksumFailures, m.tokenRefusals, m.xceivers, m.bufferedBytes, m.receiveBuffers, m.receiveRefusals,
		m.writeThroughput, m.readThroughput, m.ackLatency, m.heartbeatLatency)
	return m
}

// watchCache exports the cache's own counts, read at scrape time.
func (m *metrics) watchCache(c *memcache.Cache) {
	const ns, sub = "smarth", "datanode"
	gauge := func(name, help string, f func() float64) prometheus.GaugeFunc {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help}, f)
	}
	m.reg.MustRegister(
		gauge("cache_capacity_bytes", "Configured in-memory cache capacity (cache_capacity).", func() float64 { return float64(c.Capacity()) }),
		gauge("cache_used_bytes", "Memory held by the in-memory cache: cached blocks, blocks being cached, uncached blocks still being read.",
			func() float64 { return float64(c.Used()) }),
		gauge("cached_blocks", "Replicas fully cached and verified.", func() float64 { return float64(c.Len()) }),
	)
}
