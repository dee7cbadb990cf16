package replog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"smarth/internal/namenode/journal"
)

// BenchmarkAppendSync compares acknowledged appends per second of a
// 3-node group (fsync on every node, all on this machine's disk and
// cores) with today's single-namenode journal, 1, 8 and 64 concurrent
// writers, the two interleaved in one run. Each writer does what the
// namenode's mutate does: under one lock apply and append, outside it
// Sync.
//
//	go test -run '^$' -bench AppendSync -benchtime 3s ./internal/namenode/replog/
func BenchmarkAppendSync(b *testing.B) {
	rec := []byte(fmt.Sprintf("%0100d", 0)) // about an edit's size
	dir := b.TempDir()

	j, err := journal.Open(journal.OS{}, dir+"/journal", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	if _, _, err := j.Load(nopLoader{}); err != nil {
		b.Fatal(err)
	}
	var jmu sync.Mutex
	var applied int
	journalWrite := func() error {
		jmu.Lock()
		applied++
		tx := j.Append(rec)
		jmu.Unlock()
		return j.Sync(tx)
	}

	// The production timeouts: on two busy cores the tests' shorter ones
	// elect new leaders for nothing.
	nodes := group(b, dir+"/raft", 3, func(i int, c *Config) {
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = DefaultHeartbeatTimeout, DefaultElectionTimeout, DefaultLeaderLeaseTimeout
		c.LogStore = os.Getenv("REPLOG_BENCH_STORE")
		if v, err := strconv.Atoi(os.Getenv("REPLOG_BENCH_INFLIGHT")); err == nil {
			c.MaxInflight = v
		}
	})
	var ld atomic.Pointer[node]
	ld.Store(leaderOf(b, nodes))
	var elections atomic.Int64
	// Writers follow the leader as clients will: an append refused or
	// failed by a deposed leader is retried at the new one.
	raftWrite := func() error {
		for {
			n := ld.Load()
			err := write(context.Background(), n.log, n.fsm, string(rec))
			var nl ErrNotLeader
			if !errors.As(err, &nl) && !errors.Is(err, ErrDiverged) {
				return err
			}
			for _, m := range nodes {
				if m.id == nl.LeaderID && m.log.IsLeader() && ld.CompareAndSwap(n, m) {
					elections.Add(1)
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	defer func() { b.Logf("leader changes during the run: %d", elections.Load()) }()

	for _, w := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("journal/writers=%d", w), func(b *testing.B) { runWriters(b, w, journalWrite) })
		b.Run(fmt.Sprintf("raft3/writers=%d", w), func(b *testing.B) {
			s0 := ld.Load().log.Stats()
			runWriters(b, w, raftWrite)
			s1 := ld.Load().log.Stats()
			if s1.Batches > s0.Batches {
				b.ReportMetric(float64(s1.Records-s0.Records)/float64(s1.Batches-s0.Batches), "records/entry")
			}
		})
	}
}

func runWriters(b *testing.B, writers int, op func() error) {
	var n atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

type nopLoader struct{}

func (nopLoader) LoadImage(uint64, [][]byte) error { return nil }
func (nopLoader) ApplyEdit(uint64, []byte) error   { return nil }
