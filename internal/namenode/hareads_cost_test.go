package namenode

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
)

// TestHAReadIndexCost measures what the read index costs: getFileInfo
// calls per second on the active of a three-member group (in this
// process, over the client's default transport) in the three modes of
// ha_read_consistency, switched on the active between runs: lease (a
// read lease, renewed in the background), linearizable (a read index per
// batch of reads) and leader (no gate). Interleaved: each round runs the
// three, in an order that rotates, one ratio per round (lease/
// linearizable, lease/leader, linearizable/leader), the geometric mean
// with a 95% interval printed beside the load average. A measurement,
// not a check: it runs only with HA_READ_COST=1 (HA_READ_COST_ROUNDS,
// HA_READ_COST_SECONDS, HA_READ_COST_THREADS: a comma list, default
// 8,64).
func TestHAReadIndexCost(t *testing.T) {
	if os.Getenv("HA_READ_COST") != "1" {
		t.Skip("a measurement: set HA_READ_COST=1")
	}
	rounds, secs := 6, 2
	if v, err := strconv.Atoi(os.Getenv("HA_READ_COST_ROUNDS")); err == nil && v > 1 {
		rounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("HA_READ_COST_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	threadCounts := []int{8, 64}
	if v := os.Getenv("HA_READ_COST_THREADS"); v != "" {
		threadCounts = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				t.Fatalf("HA_READ_COST_THREADS: %q is not a thread count", f)
			}
			threadCounts = append(threadCounts, n)
		}
	}
	g := startHAGroup(t, 3, func(c *Config) {
		// replog's defaults, as a deployed group has; lease mode so that
		// the log grants leases (the other modes are switched to below).
		c.HA.HeartbeatTimeout, c.HA.ElectionTimeout, c.HA.LeaderLeaseTimeout = 0, 0, 0
		c.HA.ReadConsistency = readsLease
	})
	l := g.active(nil)
	tc, err := g.tls.Client()
	if err != nil {
		t.Fatal(err)
	}
	const files = 1000
	for i := range files {
		if _, err := g.cli[l].cp.Mkdirs(g.cli[l].ctx(), &dfspb.MkdirsRequest{Path: fmt.Sprintf("/stat/%d", i), CreateParent: true}); err != nil {
			t.Fatal(err)
		}
	}
	h := g.nns[l].ha
	gate := h.reads
	modes := []string{readsLease, readsLinearizable, readsLeader}
	for _, threads := range threadCounts {
		fs, err := client.New(client.Config{NameNode: g.cfgs[l].RPCAddr, User: "hdfs", TLS: tc})
		if err != nil {
			t.Fatal(err)
		}
		run := func(mode string) float64 {
			// Switched between runs, with no call in flight.
			h.reads, h.lease = gate, mode == readsLease
			if mode == readsLeader {
				h.reads = nil
			}
			var n atomic.Int64
			var wg sync.WaitGroup
			end := time.Now().Add(time.Duration(secs) * time.Second)
			start := time.Now()
			for w := range threads {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; time.Now().Before(end); i += threads {
						if _, err := fs.Namenode().GetFileInfo(context.Background(), &dfspb.GetFileInfoRequest{Path: fmt.Sprintf("/stat/%d", i%files)}); err != nil {
							t.Errorf("getFileInfo: %v", err)
							return
						}
						n.Add(1)
					}
				}()
			}
			wg.Wait()
			return float64(n.Load()) / time.Since(start).Seconds()
		}
		for _, m := range modes { // warm-up
			run(m)
		}
		pairs := [][2]int{{0, 1}, {0, 2}, {1, 2}}
		logs := make([][]float64, len(pairs))
		var lines []string
		leaseReads := h.leaseReads.Load()
		for r := range rounds {
			ops := make([]float64, len(modes))
			for k := range modes { // rotate which goes first
				m := (k + r) % len(modes)
				ops[m] = run(modes[m])
			}
			for p, ab := range pairs {
				logs[p] = append(logs[p], math.Log(ops[ab[0]]/ops[ab[1]]))
			}
			lines = append(lines, fmt.Sprintf("%.0f/%.0f/%.0f", ops[0], ops[1], ops[2]))
		}
		h.reads, h.lease = gate, true
		fs.Close()
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("getFileInfo, %d threads, %d rounds of %d s: lease/linearizable/leader ops/s per round %s; %d reads served under the lease; load average %s",
			threads, rounds, secs, strings.Join(lines, " "), h.leaseReads.Load()-leaseReads, strings.Fields(string(load))[:3])
		for p, ab := range pairs {
			mean, half := meanCI95(logs[p])
			t.Logf("  %s/%s: geometric mean %.3f (95%% interval %.3f-%.3f)", modes[ab[0]], modes[ab[1]], math.Exp(mean), math.Exp(mean-half), math.Exp(mean+half))
		}
	}
}

// meanCI95 is the mean of x and the half-width of its 95% interval
// (Student's t, n-1 degrees of freedom).
func meanCI95(x []float64) (mean, half float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	tq := map[int]float64{1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}[len(x)-1]
	if tq == 0 {
		tq = 2.0
	}
	return mean, tq * math.Sqrt(ss/(n-1)/n)
}
