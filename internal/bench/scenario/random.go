package scenario

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"

	"gopkg.in/yaml.v3"

	"smarth/internal/testbed/topo"
)

// Range is an inclusive range a random topology's parameter is drawn
// from, uniformly.
type Range struct{ Min, Max float64 }

func (r Range) draw(rng *rand.Rand) float64 { return r.Min + rng.Float64()*(r.Max-r.Min) }

func (r Range) drawInt(rng *rand.Rand) int {
	return int(r.Min) + rng.Intn(int(r.Max)-int(r.Min)+1)
}

// RandomSpec are the ranges random topologies are drawn from (`smarth
// bench scenario random`). Every host of one topology has the same NIC
// and the same cross-rack rate, both drawn per topology, so the ideal has
// a closed form (IdealOf); what varies is how many racks, how many
// datanodes each holds, which of them the client sits in, and the rates.
type RandomSpec struct {
	Seed      int64
	Count     int
	Racks     Range // 2-3
	RackSize  Range // datanodes per rack, 1-5
	DataNodes Range // datanodes in all, 6-10: at least two pipelines, few processes
	NICMbit   Range // 200-400
	CrossMbit Range // per host between racks, 40-150, never above the NIC
	BlockSize int64 // the namenode's block size and the datanodes' per-client buffer
	// MaxPipelines is the client's cap on open pipelines (client default 4),
	// which bounds the ideal too.
	MaxPipelines int
	// Size is the upload's size, for ScheduleSpeedup's block count (0:
	// eight blocks).
	Size int64
	// ConcurrentPlacement is the namenode placement of the
	// multipipeline-concurrent cell: "" or "speedaware" runs it in
	// SMARTH's phase; another (mincut) gives it a phase of its own.
	ConcurrentPlacement string `json:",omitempty"`
}

// DefaultRandomSpec returns the ranges `smarth bench scenario random` uses
// unless told otherwise.
func DefaultRandomSpec() RandomSpec {
	return RandomSpec{Seed: 1, Count: 10, Racks: Range{2, 3}, RackSize: Range{1, 5}, DataNodes: Range{6, 10},
		NICMbit: Range{200, 400}, CrossMbit: Range{40, 150}, BlockSize: 16 << 20, MaxPipelines: 4}
}

// Check says what is wrong with the ranges.
func (s RandomSpec) Check() error {
	var errs []error
	for _, c := range []struct {
		name string
		r    Range
		lo   float64
	}{{"racks", s.Racks, 2}, {"rack size", s.RackSize, 1}, {"datanodes", s.DataNodes, 3}, {"nic", s.NICMbit, 1}, {"cross-rack", s.CrossMbit, 1}} {
		if c.r.Min < c.lo || c.r.Max < c.r.Min {
			errs = append(errs, fmt.Errorf("%s: range %g-%g must start at %g or more and not end below its start", c.name, c.r.Min, c.r.Max, c.lo))
		}
	}
	if s.Racks.Max > 26 {
		errs = append(errs, errors.New("racks: at most 26"))
	}
	if s.Racks.Max*s.RackSize.Max < s.DataNodes.Min || s.Racks.Min*s.RackSize.Min > s.DataNodes.Max {
		errs = append(errs, fmt.Errorf("racks %g-%g of %g-%g datanodes cannot hold %g-%g datanodes", s.Racks.Min, s.Racks.Max, s.RackSize.Min, s.RackSize.Max, s.DataNodes.Min, s.DataNodes.Max))
	}
	if s.Count < 1 || s.BlockSize < 1<<20 || s.MaxPipelines < 1 {
		errs = append(errs, errors.New("count and pipelines must be positive and the block size at least 1 MiB"))
	}
	return errors.Join(errs...)
}

// Ideal is what a topology allows a write from its client, file data aside
// (headers cost both modes alike).
type Ideal struct {
	Local     int     `json:"local"`     // datanodes in the client's rack (k)
	Pipelines int     `json:"pipelines"` // P = min(datanodes / replication, client cap)
	Classic   float64 `json:"classic_bits_per_s"`
	Multi     float64 `json:"multi_bits_per_s"`
	Speedup   float64 `json:"speedup"`
	// ScheduleSpeedup is what the multi-pipeline protocol itself can reach
	// on the topology (ScheduleSpeedup), below Speedup where the client's
	// one-block-at-a-time sending or whole blocks per pipeline bind.
	ScheduleSpeedup float64 `json:"schedule_speedup,omitempty"`
}

// IdealOf is the min-cut bound of a write from a client outside the
// datanodes, in a rack with k of them, every host with NIC rate nic and
// cross-rack rate cross (bit/s), under HDFS's rack rule (each block on at
// least two racks) with at most P pipelines open, P = min(datanodes /
// replication, cap), each datanode in one of them:
//
//	classic = min(nic, cross)
//	multi   = min(nic, min(k, P)·x + [P > k]·x),  x = min(nic, cross)
//
// One pipeline (classic) is bound by its slowest hop, and every pipeline
// crosses racks once at rate x. Several pipelines at once are bound by the
// client's NIC (every byte leaves it once) and by the cut around the
// client's rack: every byte leaves that rack, either from one of the k
// rack-mates a pipeline began on (each carries one open pipeline's hop, x)
// or from the client itself, whose own cross-rack link (x) all pipelines
// begun outside the rack share. With k = 0 both are x: no gain is possible.
// The speedup bound is multi / classic.
func IdealOf(nic, cross float64, k, datanodes, replication, maxPipelines int) Ideal {
	x := math.Min(nic, cross)
	p := max(1, min(datanodes/max(replication, 1), maxPipelines))
	id := Ideal{Local: k, Pipelines: p, Classic: x}
	crossings := float64(min(k, p))
	if p > k {
		crossings++
	}
	id.Multi = math.Min(nic, crossings*x)
	id.Speedup = id.Multi / id.Classic
	return id
}

// ScheduleSpeedup plays SMARTH's protocol on the topology of IdealOf with
// nothing but the links: the client sends one block at a time, to a free
// rack-mate at the NIC rate, else across its own cross-rack link at x; the
// next block starts on FNFA, when fewer than P pipelines are open; a
// pipeline holds its nodes until its last replica has the block, B/x after
// it began (its cross-rack hop, x, binds it). Classic takes B/x per block.
// It returns classic time / multi-pipeline time; per-block set-up and
// acknowledgement latency are left out, so a run can come close but not
// reach it.
func ScheduleSpeedup(nic, cross float64, k, p, blocks int) float64 {
	x := math.Min(nic, cross)
	bx := 1 / x // the time of one block per bit of block size; the size cancels out
	local, remote := 1/nic, 1/x
	var localEnds, remoteEnds []float64 // completion times of open pipelines
	now, end := 0.0, 0.0
	for range blocks {
		for len(localEnds)+len(remoteEnds) >= p { // wait for the first pipeline to finish
			now = math.Max(now, pop(&localEnds, &remoteEnds))
		}
		// Pipelines that finished by now free their nodes.
		localEnds, remoteEnds = after(localEnds, now), after(remoteEnds, now)
		send := remote
		if len(localEnds) < k {
			send = local
			localEnds = append(localEnds, now+bx)
		} else {
			remoteEnds = append(remoteEnds, now+bx)
		}
		end = math.Max(end, now+bx)
		now += send
	}
	return float64(blocks) * bx / end
}

// pop removes the earliest completion of either list and returns it.
func pop(a, b *[]float64) float64 {
	ia, ib := argmin(*a), argmin(*b)
	if ib < 0 || (ia >= 0 && (*a)[ia] <= (*b)[ib]) {
		v := (*a)[ia]
		*a = append((*a)[:ia], (*a)[ia+1:]...)
		return v
	}
	v := (*b)[ib]
	*b = append((*b)[:ib], (*b)[ib+1:]...)
	return v
}

func argmin(v []float64) int {
	i := -1
	for j := range v {
		if i < 0 || v[j] < v[i] {
			i = j
		}
	}
	return i
}

// after keeps the completions later than now.
func after(v []float64, now float64) []float64 {
	out := v[:0]
	for _, e := range v {
		if e > now {
			out = append(out, e)
		}
	}
	return out
}

// blocks is how many blocks the run's uploads have (at least 1).
func blocks(s RandomSpec) int {
	if s.Size <= 0 {
		return 8
	}
	return int(max(1, (s.Size+s.BlockSize-1)/s.BlockSize))
}

// RandomTopology is one drawn topology.
type RandomTopology struct {
	Index      int     `json:"index"`
	Name       string  `json:"name"`
	RackSizes  []int   `json:"rack_sizes"` // datanodes per rack, rack-a first
	ClientRack int     `json:"client_rack"`
	NICMbit    float64 `json:"nic_mbit"`
	CrossMbit  float64 `json:"cross_mbit"`
	Ideal      Ideal   `json:"ideal"`
	YAML       []byte  `json:"-"`
}

// Shape is a one-line picture: "a:3* b:6 @400/50" (* marks the client's
// rack, then NIC and cross-rack Mbit/s).
func (t RandomTopology) Shape() string {
	var b strings.Builder
	for i, n := range t.RackSizes {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%c:%d", 'a'+i, n)
		if i == t.ClientRack {
			b.WriteByte('*')
		}
	}
	fmt.Fprintf(&b, " @%.0f/%.0f", t.NICMbit, t.CrossMbit)
	return b.String()
}

// RandomTopologies draws s.Count topologies from s.Seed: the same seed
// gives the same topologies.
func RandomTopologies(s RandomSpec) ([]RandomTopology, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(s.Seed))
	out := make([]RandomTopology, 0, s.Count)
	for i := 1; i <= s.Count; i++ {
		t := RandomTopology{Index: i, Name: fmt.Sprintf("rnd%d-%02d", s.Seed, i)}
		t.RackSizes = drawRacks(s, rng)
		t.ClientRack = rng.Intn(len(t.RackSizes))
		t.NICMbit = math.Round(s.NICMbit.draw(rng)/10) * 10
		t.CrossMbit = math.Min(t.NICMbit, math.Round(s.CrossMbit.draw(rng)/10)*10)
		total := 0
		for _, n := range t.RackSizes {
			total += n
		}
		t.Ideal = IdealOf(t.NICMbit*1e6, t.CrossMbit*1e6, t.RackSizes[t.ClientRack], total, 3, s.MaxPipelines)
		t.Ideal.ScheduleSpeedup = ScheduleSpeedup(t.NICMbit*1e6, t.CrossMbit*1e6, t.Ideal.Local, t.Ideal.Pipelines, blocks(s))
		y, err := t.file(s)
		if err != nil {
			return nil, err
		}
		t.YAML = y
		out = append(out, t)
	}
	return out, nil
}

// drawRacks draws rack sizes until their sum is in range; Check made sure
// some draw can be.
func drawRacks(s RandomSpec, rng *rand.Rand) []int {
	for {
		sizes := make([]int, s.Racks.drawInt(rng))
		total := 0
		for j := range sizes {
			sizes[j] = s.RackSize.drawInt(rng)
			total += sizes[j]
		}
		if float64(total) >= s.DataNodes.Min && float64(total) <= s.DataNodes.Max {
			return sizes
		}
	}
}

// file writes the topology as a testbed file: the namenode's host "nn" is
// the client, in the client's rack; datanodes dn1.. rack by rack.
func (t RandomTopology) file(s RandomSpec) ([]byte, error) {
	f := topo.File{
		Name:        t.Name,
		Description: fmt.Sprintf("random topology %d of seed %d: %s", t.Index, s.Seed, t.Shape()),
		Defaults:    topo.Limits{NIC: fmt.Sprintf("%.0fmbit", t.NICMbit), CrossRack: fmt.Sprintf("%.0fmbit", t.CrossMbit)},
		Daemons: map[string]map[string]any{
			"namenode": {"block_size": s.BlockSize, "replication": 3},
			"datanode": {"per_client_buffer": s.BlockSize},
		},
	}
	n := 0
	for i, size := range t.RackSizes {
		rack := fmt.Sprintf("rack-%c", 'a'+i)
		f.Racks = append(f.Racks, topo.RackSpec{Name: rack})
		if i == t.ClientRack {
			f.Hosts = append(f.Hosts, topo.HostSpec{Name: "nn", Rack: rack, Roles: []topo.Role{topo.NameNode, topo.Client}})
		}
		for range size {
			n++
			f.Hosts = append(f.Hosts, topo.HostSpec{Name: fmt.Sprintf("dn%d", n), Rack: rack, Roles: []topo.Role{topo.DataNode}})
		}
	}
	out, err := yaml.Marshal(&f)
	if err != nil {
		return nil, err
	}
	if _, err := topo.Parse(out); err != nil {
		return nil, fmt.Errorf("random topology %s: %w", t.Name, err)
	}
	return out, nil
}
