package apps

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"

	"smarth/internal/mapreduce"
)

// KMeans clusters points with Lloyd's algorithm, one MapReduce job per
// iteration (kmeans.iter), as Mahout's and HiBench's KMeans do: each map
// loads the current centroids (a side input on the file system), assigns
// its points to the nearest and sums them per cluster in memory; the
// reduce averages the sums into new centroids. The driver starts from the
// first --k points of the input, stops when no centroid moves more than
// --delta or after --iterations, and leaves the last centroids in
// --output as "cluster\tpoints\tx1 x2 ...". A cluster that loses all its
// points keeps its centroid. Points are lines of numbers separated by
// spaces, tabs or commas (kmeansgen writes them).
type KMeans struct{ out io.Writer }

var (
	_ mapreduce.App    = KMeans{}
	_ mapreduce.Driver = KMeans{}
)

func (KMeans) Name() string { return "kmeans" }
func (KMeans) Description() string {
	return "k-means clustering, one job per iteration (--k --iterations --delta)"
}

func (KMeans) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1),
		{Name: "k", Default: "5", Help: "number of clusters"},
		{Name: "iterations", Default: "10", Help: "maximum number of iterations"},
		{Name: "delta", Default: "0.001", Help: "converged when no centroid moves farther than this"},
	}
}

// Build returns an iteration's job, so the parameters are checked.
func (km KMeans) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(km.Params(), given)
	if _, err := p.int("iterations", 1, 100000); err != nil {
		return nil, err
	}
	if _, err := p.float("delta", 0, math.MaxFloat64); err != nil {
		return nil, err
	}
	return KMeansIter{}.Build(copyParams(p, "centroids", "/unset"))
}

// Drive runs the iterations.
func (km KMeans) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	if _, err := km.Build(given); err != nil {
		return err
	}
	p := withDefaults(km.Params(), given)
	k, _ := p.int("k", 1, 1<<20)
	iters, _ := p.int("iterations", 1, 100000)
	delta, _ := p.float("delta", 0, math.MaxFloat64)
	inputs, _ := p.inputs()
	fs, out := r.FS(), p[ParamOutput]
	if err := outputFree(ctx, fs, out); err != nil {
		return err
	}
	work := scratchDir(out, "kmeans")
	defer fs.Delete(context.WithoutCancel(ctx), work, true)

	cents, err := firstPoints(ctx, fs, inputs, int(k))
	if err != nil {
		return err
	}
	var last string
	move := math.Inf(1)
	it := int64(1)
	for ; it <= iters; it++ {
		cpath := path.Join(work, "centroids-"+strconv.FormatInt(it-1, 10))
		if err := writeCentroids(ctx, fs, cpath, cents); err != nil {
			return err
		}
		last = path.Join(work, "iter-"+strconv.FormatInt(it, 10))
		if _, err := runStage(ctx, r, KMeansIter{}.Name(), copyParams(p, "centroids", cpath, ParamOutput, last)); err != nil {
			return err
		}
		next, err := readCentroids(ctx, fs, last)
		if err != nil {
			return err
		}
		move = 0
		for c, x := range next {
			if int(c) < len(cents) && x != nil {
				move = max(move, dist(cents[c], x))
				cents[c] = x
			}
		}
		if move <= delta {
			break
		}
	}
	if err := fs.Rename(ctx, last, out); err != nil {
		return fmt.Errorf("kmeans: move result to %s: %w", out, err)
	}
	fmt.Fprintf(writerOr(km.out), "KMeans: %d iterations, last centroid move %g (delta %g); centroids in %s\n",
		min(it, iters), move, delta, out)
	return nil
}

func dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// parsePoint reads the numbers of a line into dst.
func parsePoint(dst []float64, line []byte) ([]float64, bool) {
	dst = dst[:0]
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == ',') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != ',' {
			j++
		}
		if j > i {
			v, ok := parseFloat(line[i:j])
			if !ok {
				return dst, false
			}
			dst = append(dst, v)
		}
		i = j
	}
	return dst, len(dst) > 0
}

// firstPoints reads the first k points of the input as initial centroids.
func firstPoints(ctx context.Context, fs mapreduce.FS, inputs []string, k int) ([][]float64, error) {
	files, err := mapreduce.InputFiles(ctx, fs, inputs)
	if err != nil {
		return nil, err
	}
	var out [][]float64
	for _, f := range files {
		rd, err := fs.Open(ctx, f.Path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(rd)
		sc.Buffer(nil, 1<<20)
		for len(out) < k && sc.Scan() {
			if pt, ok := parsePoint(nil, sc.Bytes()); ok {
				if len(out) > 0 && len(pt) != len(out[0]) {
					rd.Close()
					return nil, fmt.Errorf("kmeans: %s: points of %d and %d dimensions", f.Path, len(out[0]), len(pt))
				}
				out = append(out, pt)
			}
		}
		rd.Close()
		if len(out) == k {
			return out, nil
		}
	}
	return nil, fmt.Errorf("kmeans: the input holds %d points, fewer than --k=%d", len(out), k)
}

// Centroid files are lines "cluster\tpoints\tx1 x2 ..." (points may be
// empty).
func writeCentroids(ctx context.Context, fs mapreduce.FS, p string, cents [][]float64) error {
	w, err := fs.Create(ctx, p, mapreduce.CreateOptions{Overwrite: true})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var b []byte
	for c, x := range cents {
		b = strconv.AppendInt(b[:0], int64(c), 10)
		b = append(b, '\t', '\t')
		b = appendPoint(b, x)
		bw.Write(append(b, '\n'))
	}
	return errors.Join(bw.Flush(), w.Close())
}

func appendPoint(b []byte, x []float64) []byte {
	for j, v := range x {
		if j > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return b
}

// readCentroids reads centroid lines from a file or an output directory,
// indexed by cluster (nil for a cluster absent from it).
func readCentroids(ctx context.Context, fs mapreduce.FS, p string) ([][]float64, error) {
	files, err := mapreduce.InputFiles(ctx, fs, []string{p})
	if err != nil {
		return nil, err
	}
	var out [][]float64
	for _, f := range files {
		rd, err := fs.Open(ctx, f.Path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(rd)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			id, rest, _ := cutByte(line, '\t')
			_, coords, ok := cutByte(rest, '\t')
			c, ok2 := parseInt(id)
			pt, ok3 := parsePoint(nil, coords)
			if !ok || !ok2 || !ok3 || c < 0 || c > 1<<20 {
				rd.Close()
				return nil, fmt.Errorf("kmeans: bad centroid line %q in %s", line, f.Path)
			}
			for int64(len(out)) <= c {
				out = append(out, nil)
			}
			out[c] = pt
		}
		rd.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// KMeansIter is one iteration: output "cluster\tpoints\tx1 x2 ..." for
// every cluster that has points.
type KMeansIter struct{}

var _ mapreduce.App = KMeansIter{}

func (KMeansIter) Name() string { return "kmeans.iter" }
func (KMeansIter) Description() string {
	return "one k-means iteration against --centroids (a job of kmeans)"
}

func (KMeansIter) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1),
		{Name: "centroids", Help: "file (or output directory) of the current centroids"},
		{Name: "k", Default: "5", Help: "number of clusters"},
	}
}

func (ki KMeansIter) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(ki.Params(), given)
	job, err := newJob(ki.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	if _, err := p.required("centroids"); err != nil {
		return nil, err
	}
	if _, err := p.int("k", 1, 1<<20); err != nil {
		return nil, err
	}
	job.NewMapper = func() mapreduce.Mapper { return &kmeansMapper{} }
	job.NewCombiner = func() mapreduce.Reducer { return &vectorSum{} }
	job.NewReducer = func() mapreduce.Reducer { return &vectorSum{final: true} }
	return job, nil
}

// kmeansMapper assigns points to the nearest centroid and sums them per
// cluster; the sums are emitted at the end of the task.
type kmeansMapper struct {
	cents  [][]float64
	dims   int
	sums   []float64 // cluster c's sum at [c*dims, (c+1)*dims)
	counts []int64
	pt     []float64
	key    []byte
	val    []byte
}

func (m *kmeansMapper) Setup(ctx mapreduce.TaskContext) error {
	cents, err := readCentroids(ctx, ctx.FS(), ctx.Param("centroids"))
	if err != nil {
		return err
	}
	if len(cents) == 0 || cents[0] == nil {
		return fmt.Errorf("kmeans: no centroids in %s", ctx.Param("centroids"))
	}
	m.cents, m.dims = cents, len(cents[0])
	for c, x := range cents {
		if len(x) != m.dims {
			return fmt.Errorf("kmeans: centroid %d has %d dimensions, want %d", c, len(x), m.dims)
		}
	}
	m.sums = make([]float64, len(cents)*m.dims)
	m.counts = make([]int64, len(cents))
	return nil
}

func (m *kmeansMapper) Map(ctx mapreduce.TaskContext, _, line []byte, _ mapreduce.Emitter) error {
	var ok bool
	if m.pt, ok = parsePoint(m.pt, line); !ok || len(m.pt) != m.dims {
		ctx.Count("KMeans", "BAD_POINTS", 1)
		return nil
	}
	best, bestD := 0, math.Inf(1)
	for c, x := range m.cents {
		var d float64
		for j, v := range x {
			t := v - m.pt[j]
			d += t * t
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	s := m.sums[best*m.dims : (best+1)*m.dims]
	for j, v := range m.pt {
		s[j] += v
	}
	m.counts[best]++
	return nil
}

func (m *kmeansMapper) Cleanup(_ mapreduce.TaskContext, out mapreduce.Emitter) error {
	for c, n := range m.counts {
		if n == 0 {
			continue
		}
		m.key = strconv.AppendInt(m.key[:0], int64(c), 10)
		m.val = encodeVector(m.val[:0], n, m.sums[c*m.dims:(c+1)*m.dims])
		if err := out.Emit(m.key, m.val); err != nil {
			return err
		}
	}
	return nil
}

// A cluster's partial sum travels as the point count then the
// coordinates' sums, big-endian.
func encodeVector(b []byte, n int64, sum []float64) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	for _, v := range sum {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// vectorSum adds partial sums; the final reducer writes the centroid.
type vectorSum struct {
	final bool
	sum   []float64
	val   []byte
}

func (r *vectorSum) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var n int64
	r.sum = r.sum[:0]
	for values.Next() {
		v := values.Value()
		if len(v) < 8 || len(v)%8 != 0 || (len(r.sum) > 0 && len(v) != 8+8*len(r.sum)) {
			return fmt.Errorf("kmeans: cluster %s: malformed partial sum of %d bytes", key, len(v))
		}
		if len(r.sum) == 0 {
			r.sum = append(r.sum, make([]float64, len(v)/8-1)...)
		}
		n += int64(binary.BigEndian.Uint64(v))
		for j := range r.sum {
			r.sum[j] += math.Float64frombits(binary.BigEndian.Uint64(v[8+8*j:]))
		}
	}
	if !r.final {
		r.val = encodeVector(r.val[:0], n, r.sum)
		return out.Emit(key, r.val)
	}
	for j := range r.sum {
		r.sum[j] /= float64(n)
	}
	r.val = strconv.AppendInt(r.val[:0], n, 10)
	r.val = append(r.val, '\t')
	r.val = appendPoint(r.val, r.sum)
	return out.Emit(key, r.val)
}

// KMeansGen writes --points points around --k centres in --dims
// dimensions (map-only): centres uniform in [-100, 100]^dims, points
// normally distributed around a uniformly chosen centre with standard
// deviation --spread. Each point is a function of (seed, its number).
type KMeansGen struct{}

var _ mapreduce.App = KMeansGen{}

func (KMeansGen) Name() string        { return "kmeansgen" }
func (KMeansGen) Description() string { return "generate clustered points for kmeans (map-only)" }

func (KMeansGen) Params() []mapreduce.Param {
	return []mapreduce.Param{outputParam,
		{Name: "points", Default: "100000", Help: "number of points"},
		{Name: "k", Default: "5", Help: "number of centres"},
		{Name: "dims", Default: "2", Help: "dimensions"},
		{Name: "spread", Default: "10", Help: "standard deviation around a centre"},
		{Name: "maps", Default: "2", Help: "number of map tasks"},
		{Name: "seed", Default: "1", Help: "random seed"},
	}
}

func (g KMeansGen) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(g.Params(), given)
	job, err := newJob(g.Name(), p, false, -1)
	if err != nil {
		return nil, err
	}
	points, err := p.int("points", 0, 1<<40)
	if err != nil {
		return nil, err
	}
	k, err := p.int("k", 1, 1<<20)
	if err != nil {
		return nil, err
	}
	dims, err := p.int("dims", 1, 10000)
	if err != nil {
		return nil, err
	}
	spread, err := p.float("spread", 0, 1e12)
	if err != nil {
		return nil, err
	}
	maps, seed, err := p.mapsAndSeed()
	if err != nil {
		return nil, err
	}
	job.InputFormat = rangeInput{total: points, maps: int(min(maps, max(points, 1)))}
	gen := &pointGen{k: uint64(k), dims: int(dims), spread: spread, seed: uint64(seed)}
	job.NewMapper = func() mapreduce.Mapper { return &hiveMapper{gen: gen.point} }
	return job, nil
}

type pointGen struct {
	k      uint64
	dims   int
	spread float64
	seed   uint64
}

// unit turns a draw into a float in (0, 1).
func unit(x uint64) float64 { return (float64(x>>11) + 0.5) / (1 << 53) }

func (g *pointGen) point(dst []byte, i uint64) []byte {
	base := splitmix64(g.seed ^ splitmix64(i))
	c := base % g.k
	for j := 0; j < g.dims; j++ {
		centre := -100 + 200*unit(splitmix64(g.seed^splitmix64(1<<40+c*uint64(g.dims)+uint64(j))))
		// Box-Muller: a standard normal from two uniforms.
		u1 := unit(splitmix64(base + uint64(2*j+1)))
		u2 := unit(splitmix64(base + uint64(2*j+2)))
		z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
		if j > 0 {
			dst = append(dst, ' ')
		}
		dst = strconv.AppendFloat(dst, centre+g.spread*z, 'f', 4, 64)
	}
	return dst
}
