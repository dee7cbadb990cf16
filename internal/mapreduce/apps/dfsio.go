package apps

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"path"
	"strconv"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/units"
)

// TestDFSIO measures the file system's read and write throughput as
// Hadoop's TestDFSIO does: --nrFiles map tasks each write (or read) one
// file of --fileSize under <baseDir>/io_data and report their bytes and
// time; one reduce sums them, and the driver prints
//
//	Throughput mb/sec      = total MB / sum of the maps' I/O seconds
//	Average IO rate mb/sec = mean over maps of (map MB / map seconds)
//	IO rate std deviation  = standard deviation of those per-map rates
//	Test exec time sec     = wall time of the job
//
// with MB = 2^20 bytes, the definitions of Hadoop's TestDFSIO. The write
// mode removes earlier data first; the read mode reads what the last write
// left. --mode clean removes the base directory.
type TestDFSIO struct{ out io.Writer }

var (
	_ mapreduce.App    = TestDFSIO{}
	_ mapreduce.Driver = TestDFSIO{}
)

const defaultDFSIOBase = "/benchmarks/TestDFSIO"

func (TestDFSIO) Name() string { return "testdfsio" }
func (TestDFSIO) Description() string {
	return "file system throughput, write or read (Hadoop's TestDFSIO; --mode --nrFiles --fileSize)"
}

func (TestDFSIO) Params() []mapreduce.Param { return DFSIOJob{}.Params() }

// Build returns the I/O job, so the parameters are checked.
func (TestDFSIO) Build(given map[string]string) (*mapreduce.Job, error) {
	p := copyParams(given)
	if p["mode"] == "clean" {
		p["mode"] = "write"
	}
	p[ParamOutput] = dfsioOutput(p)
	return DFSIOJob{}.Build(p)
}

// Drive runs the job and prints Hadoop's report.
func (t TestDFSIO) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	if given["mode"] == "clean" {
		base := withDefaults(t.Params(), given).str("baseDir")
		if err := r.FS().Delete(ctx, base, true); err != nil && !isNotExist(err) {
			return err
		}
		return nil
	}
	res, err := RunDFSIO(ctx, r, given)
	if err != nil {
		return err
	}
	res.Report(writerOr(t.out))
	return nil
}

// DFSIOResult is what one TestDFSIO run measured.
type DFSIOResult struct {
	Mode       string        `json:"mode"`
	Files      int64         `json:"files"`
	Bytes      int64         `json:"bytes"`
	IOTime     time.Duration `json:"io_time"` // sum over maps
	Throughput float64       `json:"throughput_mb_s"`
	AvgRate    float64       `json:"average_io_rate_mb_s"`
	StdDev     float64       `json:"io_rate_std_dev"`
	ExecTime   time.Duration `json:"exec_time"`
	JobID      string        `json:"job_id"`
}

// Report prints the result as Hadoop's TestDFSIO does.
func (d DFSIOResult) Report(w io.Writer) {
	fmt.Fprintf(w, "----- TestDFSIO ----- : %s\n", d.Mode)
	fmt.Fprintf(w, "            Date & time: %s\n", time.Now().Format(time.UnixDate))
	fmt.Fprintf(w, "        Number of files: %d\n", d.Files)
	fmt.Fprintf(w, " Total MBytes processed: %.2f\n", float64(d.Bytes)/(1<<20))
	fmt.Fprintf(w, "      Throughput mb/sec: %.2f\n", d.Throughput)
	fmt.Fprintf(w, " Average IO rate mb/sec: %.2f\n", d.AvgRate)
	fmt.Fprintf(w, "  IO rate std deviation: %.2f\n", d.StdDev)
	fmt.Fprintf(w, "     Test exec time sec: %.3f\n", d.ExecTime.Seconds())
}

func dfsioOutput(p map[string]string) string {
	base := p["baseDir"]
	if base == "" {
		base = defaultDFSIOBase
	}
	mode := p["mode"]
	if mode == "" {
		mode = "write"
	}
	return path.Join(base, "io_"+mode)
}

// RunDFSIO runs one TestDFSIO pass (mode write or read) through r.
func RunDFSIO(ctx context.Context, r mapreduce.Runner, given map[string]string) (DFSIOResult, error) {
	p := withDefaults(DFSIOJob{}.Params(), given)
	p[ParamOutput] = dfsioOutput(p)
	if _, err := (DFSIOJob{}).Build(copyParams(p)); err != nil {
		return DFSIOResult{}, err
	}
	fs := r.FS()
	base, mode := p.str("baseDir"), p.str("mode")
	stale := []string{p[ParamOutput]}
	if mode == "write" {
		stale = append(stale, path.Join(base, "io_data"))
	}
	for _, d := range stale {
		if err := fs.Delete(ctx, d, true); err != nil && !isNotExist(err) {
			return DFSIOResult{}, fmt.Errorf("testdfsio: clean %s: %w", d, err)
		}
	}
	start := time.Now()
	res, err := runStage(ctx, r, DFSIOJob{}.Name(), p)
	if err != nil {
		return DFSIOResult{}, err
	}
	out := DFSIOResult{Mode: mode, ExecTime: time.Since(start), JobID: res.JobID}
	stats, err := readDFSIOStats(ctx, fs, p[ParamOutput])
	if err != nil {
		return out, err
	}
	out.Files, out.Bytes = int64(stats["l:tasks"]), int64(stats["l:size"])
	out.IOTime = time.Duration(stats["l:time"]) * time.Millisecond
	if out.Files > 0 && out.IOTime > 0 {
		mb := float64(out.Bytes) / (1 << 20)
		out.Throughput = mb / out.IOTime.Seconds()
		out.AvgRate = stats["f:rate"] / 1000 / float64(out.Files)
		out.StdDev = math.Sqrt(math.Abs(stats["f:sqrate"]/1000/float64(out.Files) - out.AvgRate*out.AvgRate))
	}
	return out, nil
}

func readDFSIOStats(ctx context.Context, fs mapreduce.FS, dir string) (map[string]float64, error) {
	files, err := mapreduce.InputFiles(ctx, fs, []string{dir})
	if err != nil {
		return nil, err
	}
	stats := map[string]float64{}
	for _, f := range files {
		rd, err := fs.Open(ctx, f.Path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			k, v, _ := bytes.Cut(sc.Bytes(), []byte{'\t'})
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				rd.Close()
				return nil, fmt.Errorf("testdfsio: bad result line %q in %s", sc.Text(), f.Path)
			}
			stats[string(k)] += x
		}
		rd.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return stats, nil
}

// DFSIOJob is TestDFSIO's job: one map per file doing the I/O, one reduce
// summing "l:tasks", "l:size", "l:time" (ms) and "f:rate", "f:sqrate"
// (per-map MB/s, times 1000, as Hadoop's job writes them).
type DFSIOJob struct{}

var _ mapreduce.App = DFSIOJob{}

func (DFSIOJob) Name() string { return "testdfsio.io" }
func (DFSIOJob) Description() string {
	return "write or read one file per map and sum the rates (the job of testdfsio)"
}

func (DFSIOJob) Params() []mapreduce.Param {
	return []mapreduce.Param{
		{Name: "mode", Default: "write", Help: "write, read, or clean (remove the base directory)"},
		{Name: "nrFiles", Default: "4", Help: "number of files (= map tasks)"},
		{Name: "fileSize", Default: "64MB", Help: "size of each file (a plain number means MB, as Hadoop's)"},
		{Name: "bufferSize", Default: "1000000", Help: "bytes per read or write call"},
		{Name: "baseDir", Default: defaultDFSIOBase, Help: "where data and results go"},
		{Name: "replication", Default: "0", Help: "replication of written files (0 = file system default)"},
	}
}

func (d DFSIOJob) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(d.Params(), given)
	p[ParamReduces] = "1"
	job, err := newJob(d.Name(), p, false, 1)
	if err != nil {
		return nil, err
	}
	mode := p.str("mode")
	if mode != "write" && mode != "read" {
		return nil, fmt.Errorf("parameter --mode=%q: want write, read or clean", mode)
	}
	files, err := p.int("nrFiles", 1, 100000)
	if err != nil {
		return nil, err
	}
	size, err := p.size("fileSize", units.MiB, 0, 1<<42) // Hadoop reads a bare number as megabytes
	if err != nil {
		return nil, err
	}
	buf, err := p.int("bufferSize", 1, 1<<30)
	if err != nil {
		return nil, err
	}
	repl, err := p.int("replication", 0, 32)
	if err != nil {
		return nil, err
	}
	if !path.IsAbs(p.str("baseDir")) {
		return nil, fmt.Errorf("parameter --baseDir=%q: must be an absolute path", p.str("baseDir"))
	}
	data := path.Join(p.str("baseDir"), "io_data")
	job.InputFormat = dfsioInput{files: int(files), size: size, data: data, read: mode == "read"}
	job.NewMapper = func() mapreduce.Mapper {
		return &dfsioMapper{read: mode == "read", size: size, bufSize: int(buf), data: data, repl: int(repl)}
	}
	job.NewReducer = func() mapreduce.Reducer { return &statsReducer{} }
	return job, nil
}

func dfsioFile(data string, i int64) string {
	return path.Join(data, "test_io_"+strconv.FormatInt(i, 10))
}

// dfsioInput makes one split per file; in read mode the split carries the
// hosts of the file's first block, so the scheduler can run it there.
type dfsioInput struct {
	files int
	size  int64
	data  string
	read  bool
}

func (d dfsioInput) Splits(ctx context.Context, fs mapreduce.FS, _ *mapreduce.Job) ([]mapreduce.Split, error) {
	splits := make([]mapreduce.Split, d.files)
	for i := range splits {
		splits[i] = mapreduce.Split{Index: i, Meta: encodeRange(int64(i), d.size)}
		if d.read {
			p := dfsioFile(d.data, int64(i))
			st, err := fs.Stat(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("testdfsio read: %w (run --mode write first)", err)
			}
			if locs, err := fs.BlockLocations(ctx, p, 0, min(st.Size, 1)); err == nil && len(locs) > 0 {
				splits[i].Hosts, splits[i].Racks = locs[0].Hosts, locs[0].Racks
			}
		}
	}
	return splits, nil
}

func (dfsioInput) Open(_ context.Context, _ mapreduce.FS, _ *mapreduce.Job, s mapreduce.Split) (mapreduce.RecordReader, error) {
	if _, _, err := decodeRange(s.Meta); err != nil {
		return nil, err
	}
	return &onceReader{key: s.Meta}, nil
}

type dfsioMapper struct {
	read    bool
	size    int64
	bufSize int
	data    string
	repl    int
}

func (m *dfsioMapper) Map(ctx mapreduce.TaskContext, meta, _ []byte, out mapreduce.Emitter) error {
	index := int64(binary.BigEndian.Uint64(meta))
	p := dfsioFile(m.data, index)
	buf := make([]byte, m.bufSize)
	start := time.Now()
	var n int64
	var err error
	if m.read {
		n, err = dfsioRead(ctx, ctx.FS(), p, buf)
	} else {
		for i := range buf {
			buf[i] = byte('0' + i%50) // a fixed pattern; contents do not matter
		}
		n, err = dfsioWrite(ctx, ctx.FS(), p, buf, m.size, m.repl)
	}
	if err != nil {
		return err
	}
	ms := max(time.Since(start).Milliseconds(), 1)
	rate := float64(n) * 1000 / float64(ms) / (1 << 20) // MB/s
	ctx.Count("TestDFSIO", "BYTES", n)
	for _, kv := range []struct {
		k string
		v float64
	}{{"l:tasks", 1}, {"l:size", float64(n)}, {"l:time", float64(ms)},
		{"f:rate", rate * 1000}, {"f:sqrate", rate * rate * 1000}} {
		if err := out.Emit([]byte(kv.k), strconv.AppendFloat(nil, kv.v, 'g', -1, 64)); err != nil {
			return err
		}
	}
	return nil
}

func dfsioWrite(ctx context.Context, fs mapreduce.FS, p string, buf []byte, size int64, repl int) (int64, error) {
	w, err := fs.Create(ctx, p, mapreduce.CreateOptions{Overwrite: true, Replication: repl})
	if err != nil {
		return 0, err
	}
	var n int64
	for n < size {
		k, err := w.Write(buf[:min(int64(len(buf)), size-n)])
		n += int64(k)
		if err != nil {
			w.Close()
			return n, fmt.Errorf("write %s: %w", p, err)
		}
	}
	if err := w.Close(); err != nil {
		return n, fmt.Errorf("close %s: %w", p, err)
	}
	return n, nil
}

func dfsioRead(ctx context.Context, fs mapreduce.FS, p string, buf []byte) (int64, error) {
	f, err := fs.Open(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("%w (run --mode write first)", err)
	}
	defer f.Close()
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("read %s: %w", p, err)
		}
	}
}

// statsReducer sums float values per key.
type statsReducer struct{ buf []byte }

func (r *statsReducer) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var sum float64
	for values.Next() {
		v, ok := parseFloat(values.Value())
		if !ok {
			return fmt.Errorf("key %q: value %q is not a number", key, values.Value())
		}
		sum += v
	}
	r.buf = strconv.AppendFloat(r.buf[:0], sum, 'g', -1, 64)
	return out.Emit(key, r.buf)
}

func isNotExist(err error) bool { return errors.Is(err, iofs.ErrNotExist) }
