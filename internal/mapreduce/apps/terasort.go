package apps

import (
	"bytes"
	"context"
	"encoding/binary"
	"strconv"

	"smarth/internal/mapreduce"
)

// Counter group and names the Tera apps report, so a caller (the bench
// suite) can check TeraValidate against TeraGen without reading files.
const (
	GroupTera       = "Tera"
	CounterChecksum = "CHECKSUM"   // sum of row CRC32s (TeraGen: written, TeraValidate: read)
	CounterRows     = "ROWS"       // rows written or read
	CounterMisorder = "MISORDERED" // TeraValidate: rows out of order, within or across files
)

// TeraGen writes --rows rows of 100 bytes with --maps map tasks and no
// reduce (Hadoop's TeraGen).
type TeraGen struct{}

var _ mapreduce.App = TeraGen{}

func (TeraGen) Name() string { return "teragen" }
func (TeraGen) Description() string {
	return "generate 100-byte TeraSort rows (map-only; --rows N --maps M)"
}

func (TeraGen) Params() []mapreduce.Param {
	return []mapreduce.Param{outputParam,
		{Name: "rows", Default: "1000000", Help: "number of 100-byte rows"},
		{Name: "maps", Default: "2", Help: "number of map tasks"},
		{Name: "replication", Default: "0", Help: "output replication (0 = file system default)"},
	}
}

func (t TeraGen) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(t.Params(), given)
	job, err := newJob(t.Name(), p, false, -1)
	if err != nil {
		return nil, err
	}
	rows, err := p.int("rows", 0, teraMaxRows)
	if err != nil {
		return nil, err
	}
	maps, err := p.int("maps", 1, 100000)
	if err != nil {
		return nil, err
	}
	repl, err := p.int("replication", 0, 32)
	if err != nil {
		return nil, err
	}
	job.InputFormat = teraRowsInput{rows: rows, maps: int(min(maps, max(rows, 1)))}
	job.OutputFormat = rawOutput{}
	job.OutputReplication = int(repl)
	job.NewMapper = func() mapreduce.Mapper { return &teraGenMapper{} }
	return job, nil
}

type teraGenMapper struct {
	row      [teraRowLen]byte
	checksum uint64
	rows     int64
}

func (m *teraGenMapper) Map(_ mapreduce.TaskContext, key, _ []byte, out mapreduce.Emitter) error {
	makeTeraRow(m.row[:], binary.BigEndian.Uint64(key))
	m.checksum += rowChecksum(m.row[:])
	m.rows++
	return out.Emit(m.row[:teraKeyLen], m.row[teraKeyLen:])
}

func (m *teraGenMapper) Cleanup(ctx mapreduce.TaskContext, _ mapreduce.Emitter) error {
	ctx.Count(GroupTera, CounterChecksum, int64(m.checksum))
	ctx.Count(GroupTera, CounterRows, m.rows)
	return nil
}

// TeraSort sorts TeraGen rows by their 10-byte key into --reduces files
// whose concatenation is in order: a total-order partitioner over keys
// sampled before the job (Prepare), identity map and reduce, output with
// replication 1 as Hadoop's TeraSort writes it.
type TeraSort struct{}

var (
	_ mapreduce.App      = TeraSort{}
	_ mapreduce.Preparer = TeraSort{}
)

func (TeraSort) Name() string { return "terasort" }
func (TeraSort) Description() string {
	return "sort TeraGen rows with a sampled total-order partitioner"
}

func (TeraSort) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(2),
		{Name: "replication", Default: "1", Help: "output replication"},
		{Name: paramPartitionFile, Help: "where to write the sampled cut points (default: .<output>.partitions beside the output)"},
	}
}

func (t TeraSort) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(t.Params(), given)
	job, err := newJob(t.Name(), p, true, 2)
	if err != nil {
		return nil, err
	}
	repl, err := p.int("replication", 0, 32)
	if err != nil {
		return nil, err
	}
	order := newTotalOrder(nil)
	job.InputFormat = teraInput{}
	job.OutputFormat = rawOutput{}
	job.OutputReplication = int(repl)
	job.Partitioner = order
	job.NewMapper = func() mapreduce.Mapper { return &orderedMapper{order: order, mapper: identityMapper{}} }
	job.NewReducer = func() mapreduce.Reducer { return identityReducer{} }
	return job, nil
}

// Prepare samples the input's keys and writes the partition file.
func (TeraSort) Prepare(ctx context.Context, fs mapreduce.FS, job *mapreduce.Job) error {
	return writePartitionFile(ctx, fs, job, teraInput{}, func(k, _ []byte) []byte { return k })
}

// TeraValidate checks that TeraSort's output is globally sorted: every
// file in order and each file's first key not below the previous file's
// last. One map per file (in name order) checks its rows and sums their
// CRC32s; one reduce checks the file boundaries. Output lines:
// "checksum\t<hex>", "rows\t<n>", "misordered\t<n>" and up to 100
// "error\t<description>" lines; the counters carry the same figures.
type TeraValidate struct{}

var _ mapreduce.App = TeraValidate{}

func (TeraValidate) Name() string { return "teravalidate" }
func (TeraValidate) Description() string {
	return "check the global order of TeraSort output and checksum its rows"
}

func (TeraValidate) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam}
}

func (t TeraValidate) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(t.Params(), given)
	p[ParamReduces] = "1"
	job, err := newJob(t.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	job.InputFormat = teraInput{wholeFiles: true}
	job.NewMapper = func() mapreduce.Mapper { return &validateMapper{} }
	job.NewReducer = func() mapreduce.Reducer { return &validateReducer{} }
	return job, nil
}

// Intermediate keys of TeraValidate: statistics first (prefix 0), then per
// file its first and last key (prefix 1, file index, 0 = begin / 1 = end),
// so the single reduce sees the files in order.
var (
	vkChecksum = []byte("\x00checksum")
	vkError    = []byte("\x00error")
	vkMisorder = []byte("\x00misordered")
	vkRows     = []byte("\x00rows")
)

const maxValidateErrors = 100

type validateMapper struct {
	first, last    []byte
	rows, misorder int64
	checksum       uint64
	errors         int
	row            [teraRowLen]byte
	buf            []byte
}

func (m *validateMapper) Map(ctx mapreduce.TaskContext, key, value []byte, out mapreduce.Emitter) error {
	copy(m.row[:], key)
	copy(m.row[teraKeyLen:], value)
	m.checksum += rowChecksum(m.row[:])
	if m.rows == 0 {
		m.first = append(m.first[:0], key...)
	} else if bytes.Compare(key, m.last) < 0 {
		m.misorder++
		if m.errors < maxValidateErrors {
			m.errors++
			m.buf = append(m.buf[:0], "misorder in file #"...)
			m.buf = strconv.AppendInt(m.buf, int64(ctx.TaskIndex()), 10)
			m.buf = append(m.buf, " at row "...)
			m.buf = strconv.AppendInt(m.buf, m.rows, 10)
			m.buf = append(m.buf, ": "...)
			m.buf = strconv.AppendQuote(m.buf, string(m.last))
			m.buf = append(m.buf, " > "...)
			m.buf = strconv.AppendQuote(m.buf, string(key))
			if err := out.Emit(vkError, m.buf); err != nil {
				return err
			}
		}
	}
	m.last = append(m.last[:0], key...)
	m.rows++
	return nil
}

func (m *validateMapper) Cleanup(ctx mapreduce.TaskContext, out mapreduce.Emitter) error {
	ctx.Count(GroupTera, CounterChecksum, int64(m.checksum))
	ctx.Count(GroupTera, CounterRows, m.rows)
	ctx.Count(GroupTera, CounterMisorder, m.misorder)
	for _, kv := range [][2][]byte{
		{vkChecksum, strconv.AppendUint(nil, m.checksum, 10)},
		{vkRows, strconv.AppendInt(nil, m.rows, 10)},
		{vkMisorder, strconv.AppendInt(nil, m.misorder, 10)},
	} {
		if err := out.Emit(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if m.rows == 0 {
		return nil
	}
	k := binary.BigEndian.AppendUint32([]byte{1}, uint32(ctx.TaskIndex()))
	if err := out.Emit(append(k, 0), m.first); err != nil {
		return err
	}
	return out.Emit(append(k, 1), m.last)
}

type validateReducer struct {
	checksum       uint64
	rows, misorder int64
	errors         [][]byte
	prevEnd        []byte
	prevFile       int64
	havePrev       bool
}

func (r *validateReducer) Reduce(ctx mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, _ mapreduce.Emitter) error {
	switch {
	case bytes.Equal(key, vkError):
		for values.Next() {
			if len(r.errors) < maxValidateErrors {
				r.errors = append(r.errors, bytes.Clone(values.Value()))
			}
		}
	case bytes.Equal(key, vkChecksum) || bytes.Equal(key, vkRows) || bytes.Equal(key, vkMisorder):
		for values.Next() {
			v, _ := strconv.ParseUint(string(values.Value()), 10, 64)
			switch {
			case bytes.Equal(key, vkChecksum):
				r.checksum += v
			case bytes.Equal(key, vkRows):
				r.rows += int64(v)
			default:
				r.misorder += int64(v)
			}
		}
	case len(key) == 6 && key[0] == 1:
		file := int64(binary.BigEndian.Uint32(key[1:5]))
		for values.Next() {
			v := values.Value()
			if key[5] == 0 && r.havePrev && bytes.Compare(v, r.prevEnd) < 0 {
				// The first row of this file sorts before the last of the
				// previous one: the partitioner misplaced keys.
				r.misorder++
				ctx.Count(GroupTera, CounterMisorder, 1)
				if len(r.errors) < maxValidateErrors {
					r.errors = append(r.errors, []byte("misorder between file #"+strconv.FormatInt(r.prevFile, 10)+
						" and file #"+strconv.FormatInt(file, 10)+": "+strconv.Quote(string(r.prevEnd))+" > "+strconv.Quote(string(v))))
				}
			}
			if key[5] == 1 {
				r.prevEnd = append(r.prevEnd[:0], v...)
				r.prevFile, r.havePrev = file, true
			}
		}
	}
	return nil
}

func (r *validateReducer) Cleanup(_ mapreduce.TaskContext, out mapreduce.Emitter) error {
	lines := [][2]string{
		{"checksum", strconv.FormatUint(r.checksum, 16)},
		{"rows", strconv.FormatInt(r.rows, 10)},
		{"misordered", strconv.FormatInt(r.misorder, 10)},
	}
	for _, l := range lines {
		if err := out.Emit([]byte(l[0]), []byte(l[1])); err != nil {
			return err
		}
	}
	for _, e := range r.errors {
		if err := out.Emit([]byte("error"), e); err != nil {
			return err
		}
	}
	return nil
}
