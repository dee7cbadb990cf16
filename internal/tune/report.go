package tune

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"smarth/internal/units"
	"strings"
	"text/tabwriter"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// GroupKey is how the report groups transfers: the settings profile and
// the transmission profile of seed 001 (transfer size, packet size).
type GroupKey struct {
	Profile    string
	Bytes      int64
	PacketSize int64
}

// Group is the statistics of one group.
type Group struct {
	Key        GroupKey
	Count      int
	MedianMbps float64
	P10Mbps    float64
	P90Mbps    float64
	// CPUPerMiB is the median CPU seconds per MiB received (process CPU,
	// see Record.CPUScope).
	CPUPerMiB float64
	// Exclusive counts transfers that ran alone (Xceivers <= 1), whose CPU
	// figure is the transfer's own.
	Exclusive int
	// NotInForce counts transfers during which a profile setting was not
	// in force (read back).
	NotInForce int
}

// Report groups records and computes throughput and CPU per group, sorted
// by transmission profile then settings profile.
func Report(recs []Record) []Group {
	by := map[GroupKey][]Record{}
	for _, r := range recs {
		k := GroupKey{Profile: r.Profile, Bytes: r.Bytes, PacketSize: r.PacketSize}
		by[k] = append(by[k], r)
	}
	out := make([]Group, 0, len(by))
	for k, rs := range by {
		out = append(out, summarize(k, rs))
	}
	slices.SortFunc(out, func(a, b Group) int {
		if c := cmpInt(a.Key.Bytes, b.Key.Bytes); c != 0 {
			return c
		}
		if c := cmpInt(a.Key.PacketSize, b.Key.PacketSize); c != 0 {
			return c
		}
		return strings.Compare(a.Key.Profile, b.Key.Profile)
	})
	return out
}

func summarize(k GroupKey, rs []Record) Group {
	g := Group{Key: k, Count: len(rs)}
	mbps := make([]float64, 0, len(rs))
	cpu := make([]float64, 0, len(rs))
	for _, r := range rs {
		mbps = append(mbps, r.Mbps())
		if r.Bytes > 0 {
			cpu = append(cpu, r.CPUSeconds/(float64(r.Bytes)/(1<<20)))
		}
		if r.Xceivers <= 1 {
			g.Exclusive++
		}
		if ok, _ := AllInForce(r.Settings); !ok {
			g.NotInForce++
		}
	}
	g.MedianMbps = Quantile(mbps, 0.5)
	g.P10Mbps = Quantile(mbps, 0.1)
	g.P90Mbps = Quantile(mbps, 0.9)
	g.CPUPerMiB = Quantile(cpu, 0.5)
	return g
}

// Quantile is the q-quantile of xs by linear interpolation between order
// statistics (type 7, R's default); NaN for no data.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteReport prints groups as a table.
func WriteReport(w io.Writer, groups []Group) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tpacket\tprofile\tn\tmedian Mbps\tp10\tp90\tCPU ms/MiB\talone\tnot in force\t")
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.2f\t%d\t%d\t\n",
			units.FormatSizeExact(g.Key.Bytes), units.FormatSizeExact(g.Key.PacketSize), g.Key.Profile, g.Count,
			g.MedianMbps, g.P10Mbps, g.P90Mbps, g.CPUPerMiB*1000, g.Exclusive, g.NotInForce)
	}
	return tw.Flush()
}
