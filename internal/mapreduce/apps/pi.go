package apps

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"smarth/internal/mapreduce"
)

// Pi estimates π as Hadoop's QuasiMonteCarlo does: map k takes points
// k*samples+1 .. (k+1)*samples of the 2-D Halton sequence (bases 2 and 3)
// in the unit square and counts those inside the circle inscribed in it;
// one reduce adds the counts, and π ≈ 4 × inside / total. A quasi-random
// sequence covers the square evenly, so the estimate converges faster
// than with random points. Pi is the driver that prints the estimate; the
// job itself is PiCount.
type Pi struct{ out io.Writer }

var (
	_ mapreduce.App    = Pi{}
	_ mapreduce.Driver = Pi{}
)

// Counters of Pi.
const (
	GroupPi        = "Pi"
	CounterInside  = "INSIDE"
	CounterOutside = "OUTSIDE"
)

func (Pi) Name() string { return "pi" }
func (Pi) Description() string {
	return "estimate pi with a quasi-Monte Carlo method (Hadoop's QuasiMonteCarlo; --maps --samples)"
}

func (Pi) Params() []mapreduce.Param {
	return []mapreduce.Param{
		{Name: ParamOutput, Help: "output directory (default: a temporary one, removed after)"},
		{Name: "maps", Default: "4", Help: "number of map tasks"},
		{Name: "samples", Default: "1000000", Help: "points per map"},
	}
}

// Build returns the counting job, so the parameters are checked.
func (Pi) Build(given map[string]string) (*mapreduce.Job, error) {
	p := copyParams(given)
	if p[ParamOutput] == "" {
		p[ParamOutput] = "/tmp/pi"
	}
	return PiCount{}.Build(p)
}

// Drive runs the job and prints the estimate.
func (pi Pi) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	est, _, err := RunPi(ctx, r, given)
	if err != nil {
		return err
	}
	fmt.Fprintf(writerOr(pi.out), "Estimated value of Pi is %.20f\n", est)
	return nil
}

// RunPi runs the Pi job through r and returns the estimate and the job's
// result. Without an output parameter the job writes to a temporary
// directory, removed after.
func RunPi(ctx context.Context, r mapreduce.Runner, given map[string]string) (float64, *mapreduce.Result, error) {
	p := copyParams(given)
	if p[ParamOutput] == "" {
		p[ParamOutput] = "/tmp/pi-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		defer r.FS().Delete(context.WithoutCancel(ctx), p[ParamOutput], true)
	}
	res, err := runStage(ctx, r, PiCount{}.Name(), p)
	if err != nil {
		return 0, res, err
	}
	est, ok := PiEstimate(res)
	if !ok {
		return 0, res, fmt.Errorf("pi: job %s reported no point counts", res.JobID)
	}
	return est, res, nil
}

// PiEstimate computes the estimate from a finished Pi job's counters.
func PiEstimate(res *mapreduce.Result) (float64, bool) {
	if res == nil || res.Counters == nil {
		return 0, false
	}
	in, out := res.Counters[GroupPi][CounterInside], res.Counters[GroupPi][CounterOutside]
	if in+out == 0 {
		return 0, false
	}
	return 4 * float64(in) / float64(in+out), true
}

// PiCount is Pi's job: "inside\t<n>" and "outside\t<n>" lines, and the
// same figures as counters.
type PiCount struct{}

var _ mapreduce.App = PiCount{}

func (PiCount) Name() string        { return "pi.count" }
func (PiCount) Description() string { return "count Halton points inside the circle (the job of pi)" }

func (PiCount) Params() []mapreduce.Param {
	return []mapreduce.Param{outputParam,
		{Name: "maps", Default: "4", Help: "number of map tasks"},
		{Name: "samples", Default: "1000000", Help: "points per map"},
	}
}

func (pc PiCount) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(pc.Params(), given)
	p[ParamReduces] = "1"
	job, err := newJob(pc.Name(), p, false, 1)
	if err != nil {
		return nil, err
	}
	maps, err := p.int("maps", 1, 100000)
	if err != nil {
		return nil, err
	}
	samples, err := p.int("samples", 1, math.MaxInt64/100000)
	if err != nil {
		return nil, err
	}
	job.InputFormat = rangeInput{total: maps * samples, maps: int(maps)}
	job.NewMapper = func() mapreduce.Mapper { return piMapper{} }
	job.NewCombiner = func() mapreduce.Reducer { return &sumReducer{} }
	job.NewReducer = func() mapreduce.Reducer { return &sumReducer{} }
	return job, nil
}

type piMapper struct{}

func (piMapper) Map(ctx mapreduce.TaskContext, key, _ []byte, out mapreduce.Emitter) error {
	first, count, err := decodeRange(key)
	if err != nil {
		return err
	}
	inside, outside := piCount(uint64(first), count)
	ctx.Count(GroupPi, CounterInside, inside)
	ctx.Count(GroupPi, CounterOutside, outside)
	if err := out.Emit([]byte("inside"), strconv.AppendInt(nil, inside, 10)); err != nil {
		return err
	}
	return out.Emit([]byte("outside"), strconv.AppendInt(nil, outside, 10))
}

// piCount classifies Halton points first+1 .. first+count.
func piCount(first uint64, count int64) (inside, outside int64) {
	hx, hy := newHalton(2, first), newHalton(3, first)
	for i := int64(0); i < count; i++ {
		x, y := hx.next()-0.5, hy.next()-0.5
		if x*x+y*y > 0.25 {
			outside++
		} else {
			inside++
		}
	}
	return inside, outside
}

// halton is the radical inverse in one base, advanced incrementally: the
// base-b digits of the index are kept, so moving to the next index adds
// one at the lowest digit and carries, which costs O(1) on average instead
// of re-deriving all digits.
type halton struct {
	base   uint64
	digits []uint64
	q      []float64 // q[j] = base^-(j+1), the weight of digit j
	x      float64
}

func newHalton(base, index uint64) *halton {
	h := &halton{base: base}
	w := 1.0
	for n := index; ; n /= base {
		w /= float64(base)
		h.digits = append(h.digits, n%base)
		h.q = append(h.q, w)
		h.x += float64(n%base) * w
		if n == 0 {
			break
		}
	}
	return h
}

// next advances to the following index and returns its radical inverse.
func (h *halton) next() float64 {
	for j := 0; ; j++ {
		if j == len(h.digits) {
			h.digits = append(h.digits, 0)
			h.q = append(h.q, h.q[j-1]/float64(h.base))
		}
		h.digits[j]++
		h.x += h.q[j]
		if h.digits[j] < h.base {
			return h.x
		}
		// digit j wraps to 0: take back base × its weight, carry on.
		h.digits[j] = 0
		h.x -= float64(h.base) * h.q[j]
	}
}
