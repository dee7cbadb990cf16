package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/topo"
	"smarth/internal/testbed/tput"
)

// CheckOptions say what `check` measures and how.
type CheckOptions struct {
	All       bool          // every ordered host pair, not one per combination
	Pairs     [][2]string   // only these sender -> receiver pairs
	Duration  time.Duration // per probe; default 3s
	Warmup    time.Duration // not counted; default 500ms
	Tolerance float64       // allowed relative deviation; default 0.10
	// Retries re-measures a probe that came out too low, up to this many
	// times: on a busy machine the measuring process itself can be
	// starved of CPU. A rate above the tolerance is never retried, since
	// no starvation explains it. The tries are printed.
	Retries int
}

// Measurement is one probe's outcome.
type Measurement struct {
	Probe   topo.Probe
	Goodput float64 // TCP payload, bits/s, all flows together
	// Wire is the same traffic counted as the shaper counts it, with
	// IP, TCP and Ethernet headers (goodput x 1514 / MSS): the figure
	// that compares with a configured link rate.
	Wire  float64
	Ratio float64 // Wire / Probe.Expect.Rate; 0 when unlimited
	OK    bool
	Tries int
	Err   error
}

// Check measures the throughput of the testbed's links, one probe at a
// time, and compares each with its configured rate.
func (m *Manager) Check(ctx context.Context, name string, o CheckOptions) ([]Measurement, error) {
	s, err := m.Load(name)
	if err != nil {
		return nil, err
	}
	if s.Phase != PhaseUp {
		return nil, fmt.Errorf("testbed %s is %s, not up", s.Name, s.Phase)
	}
	if o.Duration == 0 {
		o.Duration = 3 * time.Second
	}
	if o.Warmup == 0 {
		o.Warmup = 500 * time.Millisecond
	}
	if o.Tolerance == 0 {
		o.Tolerance = 0.10
	}
	probes, err := probesFor(s.Topology, o)
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for _, p := range probes {
		var meas Measurement
		for try := 1; try <= 1+max(o.Retries, 0); try++ {
			meas = m.measure(ctx, s, p, tput.Header{Duration: o.Duration, Warmup: o.Warmup})
			meas.Tries = try
			if meas.Err == nil && p.Expect.Rate > 0 {
				meas.Ratio = meas.Wire / float64(p.Expect.Rate)
				meas.OK = math.Abs(meas.Ratio-1) <= o.Tolerance
			} else if meas.Err == nil {
				meas.OK = true // nothing configured to compare with
			}
			if meas.OK || meas.Ratio > 1 || ctx.Err() != nil {
				break
			}
		}
		m.logf("%-10s %-22s configured %-14s measured %.1f Mbit/s on the wire", p.Class, strings.Join(p.Senders, ",")+" -> "+strings.Join(p.Receivers, ","), p.Expect.Rate, meas.Wire/1e6)
		out = append(out, meas)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

func probesFor(t *topo.Topology, o CheckOptions) ([]topo.Probe, error) {
	if len(o.Pairs) == 0 {
		return t.Probes(o.All), nil
	}
	var ps []topo.Probe
	for _, pair := range o.Pairs {
		src, ok1 := t.Host(pair[0])
		dst, ok2 := t.Host(pair[1])
		if !ok1 || !ok2 || src == dst {
			return nil, fmt.Errorf("pair %s -> %s: want two different hosts of the testbed (%v)", pair[0], pair[1], t.HostNames())
		}
		class := topo.ClassCrossRack
		if topo.SameRack(src, dst) {
			class = topo.ClassSameRack
		}
		ps = append(ps, topo.Probe{Class: class, Senders: []string{src.Name}, Receivers: []string{dst.Name}, Expect: t.PathRate(src, dst)})
	}
	return ps, nil
}

// measure runs one probe: a receiver in each receiving host's namespace,
// a flow from every sender to every receiver, all at once, in this
// process. Each socket is created inside its host's namespace, so the
// bytes cross the testbed's veths, bridges and shapers like any daemon's.
func (m *Manager) measure(ctx context.Context, s *State, p topo.Probe, h tput.Header) Measurement {
	meas := Measurement{Probe: p}
	type flow struct{ from, to, addr string }
	var flows []flow
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, r := range p.Receivers {
		host, _ := s.Topology.Host(r)
		ln, err := netns.Listen(s.nsPath(r), "tcp", net.JoinHostPort(host.Addr.String(), "0"))
		if err != nil {
			meas.Err = fmt.Errorf("listen on %s: %w", r, err)
			return meas
		}
		lns = append(lns, ln)
		go tput.Serve(ln, len(p.Senders))
		for _, snd := range p.Senders {
			flows = append(flows, flow{snd, r, ln.Addr().String()})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, h.Duration+30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex // guards meas
	for _, f := range flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := netns.Dialer(s.nsPath(f.from))(ctx, f.addr)
			var res tput.Result
			if err == nil {
				res, err = tput.SendConn(ctx, c, h)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				meas.Err = errors.Join(meas.Err, fmt.Errorf("%s -> %s: %w", f.from, f.to, err))
				return
			}
			meas.Goodput += res.Rate()
			meas.Wire += res.WireRate()
		}()
	}
	wg.Wait()
	return meas
}

// WriteCheck prints measurements as a table, with a verdict line. It
// returns an error if any probe failed or missed its rate.
func WriteCheck(w io.Writer, name string, ms []Measurement, o CheckOptions) error {
	if o.Tolerance == 0 {
		o.Tolerance = 0.10
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "class\tflows\tconfigured\tgoodput\ton the wire\tratio\tok\ttries\tlimited by\n")
	bad := 0
	for _, x := range ms {
		p := x.Probe
		flows := strings.Join(p.Senders, ",") + " -> " + strings.Join(p.Receivers, ",")
		conf := "unlimited"
		if p.Expect.Rate > 0 {
			conf = fmt.Sprintf("%.1f Mbit/s", p.Expect.Rate.Mbit())
		}
		good, wire, ratio, ok := fmt.Sprintf("%.1f", x.Goodput/1e6), fmt.Sprintf("%.1f Mbit/s", x.Wire/1e6), "-", "yes"
		if x.Ratio > 0 {
			ratio = fmt.Sprintf("%.1f%%", 100*x.Ratio)
		}
		if x.Err != nil {
			good, wire, ok = "error", "error", "NO"
		} else if !x.OK {
			ok = "NO"
		}
		if ok != "yes" {
			bad++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", p.Class, flows, conf, good, wire, ratio, ok, x.Tries, strings.Join(p.Expect.Bound, ", "))
	}
	tw.Flush()
	for _, x := range ms {
		if x.Err != nil {
			fmt.Fprintf(w, "error: %s: %v\n", x.Probe, x.Err)
		}
	}
	if bad > 0 {
		return fmt.Errorf("testbed %s: %d of %d measurements outside %.0f%% of the configured rate", name, bad, len(ms), 100*o.Tolerance)
	}
	fmt.Fprintf(w, "all %d measurements within %.0f%% of the configured rate (on the wire = goodput x 1514/MSS, the bytes the shaper counts)\n", len(ms), 100*o.Tolerance)
	return nil
}
