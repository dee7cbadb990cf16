package datanode

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// procIOCollector exports the process's real storage I/O from
// /proc/self/io: read_bytes and write_bytes count what went to or came
// from the block device, not what the page cache answered. A benchmark
// compares it across a run to show that uncached reads reach the disk and
// cached ones do not. It is per process: datanodes sharing a process (in
// tests) share it.
type procIOCollector struct {
	read, write *prometheus.Desc
}

func newProcIOCollector(ns, sub string) *procIOCollector {
	return &procIOCollector{
		read: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "process_disk_read_bytes_total"),
			"Bytes this process caused to be read from storage (/proc/self/io read_bytes).", nil, nil),
		write: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "process_disk_write_bytes_total"),
			"Bytes this process caused to be written to storage (/proc/self/io write_bytes).", nil, nil),
	}
}

func (p *procIOCollector) Describe(ch chan<- *prometheus.Desc) { ch <- p.read; ch <- p.write }

func (p *procIOCollector) Collect(ch chan<- prometheus.Metric) {
	io, err := readProcIO()
	if err != nil {
		return // no /proc (or not permitted): export nothing rather than a false zero
	}
	ch <- prometheus.MustNewConstMetric(p.read, prometheus.CounterValue, float64(io.readBytes))
	ch <- prometheus.MustNewConstMetric(p.write, prometheus.CounterValue, float64(io.writeBytes))
}

type procIO struct{ readBytes, writeBytes int64 }

// readProcIO parses /proc/self/io ("key: value" lines).
func readProcIO() (procIO, error) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return procIO{}, err
	}
	defer f.Close()
	var out procIO
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "read_bytes":
			out.readBytes = n
		case "write_bytes":
			out.writeBytes = n
		}
	}
	return out, sc.Err()
}
