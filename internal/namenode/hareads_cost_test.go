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
// process, over the client's default transport) with the gate
// (linearizable) and without it (leader), interleaved: A then B in each
// round, one ratio per round, the geometric mean with a 95% interval
// printed beside the load average. A measurement, not a check: it runs
// only with HA_READ_COST=1 (HA_READ_COST_ROUNDS, HA_READ_COST_SECONDS).
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
	g := startHAGroup(t, 3, func(c *Config) {
		// replog's defaults, as a deployed group has.
		c.HA.HeartbeatTimeout, c.HA.ElectionTimeout, c.HA.LeaderLeaseTimeout = 0, 0, 0
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
	gate := g.nns[l].ha.reads
	for _, threads := range []int{8, 64} {
		fs, err := client.New(client.Config{NameNode: g.cfgs[l].RPCAddr, User: "hdfs", TLS: tc})
		if err != nil {
			t.Fatal(err)
		}
		run := func(linear bool) float64 {
			// Switched between runs, with no call in flight.
			if linear {
				g.nns[l].ha.reads = gate
			} else {
				g.nns[l].ha.reads = nil
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
		run(true) // warm-up
		run(false)
		var logs []float64
		var lines []string
		for r := range rounds {
			a, b := run(true), run(false)
			if r%2 == 1 { // alternate which goes first
				b, a = run(false), run(true)
			}
			logs = append(logs, math.Log(a/b))
			lines = append(lines, fmt.Sprintf("%.0f/%.0f", a, b))
		}
		g.nns[l].ha.reads = gate
		fs.Close()
		mean, half := meanCI95(logs)
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("getFileInfo, %d threads, %d rounds of %d s: linearizable/leader ops/s per round %s; ratio geometric mean %.3f (95%% interval %.3f-%.3f); load average %s",
			threads, rounds, secs, strings.Join(lines, " "), math.Exp(mean), math.Exp(mean-half), math.Exp(mean+half), strings.Fields(string(load))[:3])
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
