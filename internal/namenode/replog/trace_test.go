package replog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"
)

// BenchmarkRoundTrace breaks one raft round (one writer, so one record
// per entry and nothing overlapping) into the stages hashicorp/raft
// times itself through go-metrics, plus the whole of Sync as the caller
// sees it. The three nodes share this process, so each stage is
// reported by the node that runs it (dispatchLog by the leader, the
// rpc.* stages by the followers). Means in microseconds, one metric
// each:
//
//	go test -run '^$' -bench RoundTrace -benchtime 2000x ./internal/namenode/replog/
//
// Stages, in the order a round runs them:
//   - leader.dispatchLog: the leader stores the entry (raft-wal write
//     and fsync) in its main loop, before it tells the replicators.
//   - replication.appendEntries.rpc: from the replicator's send to the
//     follower's answer decoded on the leader (the follower's work and
//     two crossings of TLS, msgpack and the kernel's loopback).
//   - net.rpcEnqueue, net.rpcRespond (follower): handing the decoded
//     request to the follower's main loop, and waiting there for its
//     answer; rpc.appendEntries is the main loop's handler, of which
//     rpc.appendEntries.storeLogs is the follower's write and fsync.
//   - commitTime: from the leader's dispatch to its main loop seeing
//     the entry committed (the leader's fsync, the RPC, the decode and
//     the commit notification).
//   - fsm.enqueue, fsm.apply: handing committed entries to raft's FSM
//     goroutine, and the FSM's Apply.
//   - sync: Sync as the writer sees it; sync minus commitTime is the
//     hand-offs before the dispatch (flush loop, raft's apply channel)
//     and after the commit (FSM goroutine, future, waiter, writer).
func BenchmarkRoundTrace(b *testing.B) {
	sink := &sumSink{}
	cfg := metrics.DefaultConfig("trace")
	cfg.EnableHostname, cfg.EnableRuntimeMetrics, cfg.EnableServiceLabel = false, false, false
	cfg.EnableTypePrefix = false
	if _, err := metrics.NewGlobal(cfg, sink); err != nil {
		b.Fatal(err)
	}
	defer metrics.NewGlobal(cfg, &metrics.BlackholeSink{})

	nodes := group(b, b.TempDir(), 3, func(i int, c *Config) {
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = DefaultHeartbeatTimeout, DefaultElectionTimeout, DefaultLeaderLeaseTimeout
	})
	ld := leaderOf(b, nodes)
	rec := fmt.Sprintf("%0100d", 0)
	for i := 0; i < 50; i++ { // warm the connections and the pipeline
		if err := write(context.Background(), ld.log, ld.fsm, rec); err != nil {
			b.Fatal(err)
		}
	}
	sink.reset()
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := write(context.Background(), ld.log, ld.fsm, rec); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "sync-us")
	for _, s := range sink.means([]string{
		"leader.dispatchLog", "replication.appendEntries.rpc", "net.rpcEnqueue",
		"rpc.appendEntries", "rpc.appendEntries.storeLogs", "net.rpcRespond",
		"commitTime", "fsm.enqueue", "fsm.apply",
	}) {
		b.ReportMetric(s.mean, s.name+"-us")
		b.Logf("%-32s n=%-6d mean %8.0f us", s.name, s.n, s.mean)
	}
}

// sumSink keeps the count and sum of every sample, by key (labels
// dropped); go-metrics' own in-memory sink keeps intervals, not totals.
type sumSink struct {
	mu sync.Mutex
	by map[string]*[2]float64
}

type stageMean struct {
	name string
	n    int
	mean float64
}

func (s *sumSink) reset() {
	s.mu.Lock()
	s.by = nil
	s.mu.Unlock()
}

func (s *sumSink) add(key []string, v float32) {
	k := strings.TrimPrefix(strings.Join(key, "."), "trace.")
	k = strings.TrimPrefix(k, "raft.")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]*[2]float64{}
	}
	e := s.by[k]
	if e == nil {
		e = &[2]float64{}
		s.by[k] = e
	}
	e[0]++
	e[1] += float64(v)
}

// means gives each named stage's mean in microseconds (go-metrics
// measures in milliseconds).
func (s *sumSink) means(names []string) []stageMean {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []stageMean
	for _, n := range names {
		if e := s.by[n]; e != nil && e[0] > 0 {
			out = append(out, stageMean{n, int(e[0]), 1000 * e[1] / e[0]})
		}
	}
	return out
}

func (s *sumSink) SetGauge([]string, float32)                               {}
func (s *sumSink) SetGaugeWithLabels([]string, float32, []metrics.Label)    {}
func (s *sumSink) EmitKey([]string, float32)                                {}
func (s *sumSink) IncrCounter([]string, float32)                            {}
func (s *sumSink) IncrCounterWithLabels([]string, float32, []metrics.Label) {}
func (s *sumSink) AddSample(k []string, v float32)                          { s.add(k, v) }
func (s *sumSink) AddSampleWithLabels(k []string, v float32, _ []metrics.Label) {
	s.add(k, v)
}
