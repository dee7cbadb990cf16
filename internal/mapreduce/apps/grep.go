package apps

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"regexp"
	"strconv"

	"smarth/internal/mapreduce"
)

// Grep counts the matches of a regular expression in text files and lists
// them by count, most frequent first, as Hadoop's grep example does: a
// counting job (grep.count, with combiner) into a temporary directory,
// then an ordering job (orderdesc) with one reduce. Output lines are
// "match\tcount". The expression uses Go's RE2 syntax.
type Grep struct{}

var (
	_ mapreduce.App    = Grep{}
	_ mapreduce.Driver = Grep{}
)

func (Grep) Name() string { return "grep" }
func (Grep) Description() string {
	return "count regular-expression matches, sorted by count (Hadoop's grep example)"
}

func (Grep) Params() []mapreduce.Param { return GrepCount{}.Params() }

// Build returns the counting job, so the parameters are checked.
func (Grep) Build(given map[string]string) (*mapreduce.Job, error) { return GrepCount{}.Build(given) }

// Drive runs the counting job, then the ordering job over its output.
func (g Grep) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	if _, err := g.Build(given); err != nil {
		return err
	}
	out := given[ParamOutput]
	if err := outputFree(ctx, r.FS(), out); err != nil {
		return err
	}
	tmp := scratchDir(out, "grep")
	defer r.FS().Delete(context.WithoutCancel(ctx), tmp, true)
	if _, err := runStage(ctx, r, GrepCount{}.Name(), copyParams(given, ParamOutput, tmp)); err != nil {
		return err
	}
	_, err := runStage(ctx, r, OrderDesc{}.Name(), map[string]string{ParamInput: tmp, ParamOutput: out, "column": "1"})
	return err
}

// GrepCount is Grep's first job: "match\tcount" for every distinct match,
// unordered.
type GrepCount struct{}

var _ mapreduce.App = GrepCount{}

func (GrepCount) Name() string        { return "grep.count" }
func (GrepCount) Description() string { return "count regular-expression matches (first job of grep)" }

func (GrepCount) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1),
		{Name: "regex", Help: "regular expression (Go RE2 syntax)"},
		{Name: "group", Default: "0", Help: "capture group to count (0 = whole match)"},
	}
}

func (g GrepCount) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(g.Params(), given)
	job, err := newJob(g.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	expr, err := p.required("regex")
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("parameter --regex: %v", err)
	}
	group, err := p.int("group", 0, int64(re.NumSubexp()))
	if err != nil {
		return nil, err
	}
	prefix, _ := re.LiteralPrefix()
	job.NewMapper = func() mapreduce.Mapper {
		return &grepMapper{re: re, group: int(group), prefix: []byte(prefix), t: newCountTable()}
	}
	job.NewCombiner = func() mapreduce.Reducer { return &sumReducer{} }
	job.NewReducer = func() mapreduce.Reducer { return &sumReducer{} }
	return job, nil
}

type grepMapper struct {
	re     *regexp.Regexp
	group  int
	prefix []byte // every match starts with it: lines without it are skipped unscanned
	t      countTable
}

func (m *grepMapper) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	if len(m.prefix) > 0 && !bytes.Contains(line, m.prefix) {
		return nil
	}
	for _, loc := range m.re.FindAllSubmatchIndex(line, -1) {
		a, b := loc[2*m.group], loc[2*m.group+1]
		if a < 0 {
			continue // the group did not take part in this match
		}
		if err := m.t.add(line[a:b], 1, out); err != nil {
			return err
		}
	}
	return nil
}

func (m *grepMapper) Cleanup(_ mapreduce.TaskContext, out mapreduce.Emitter) error {
	return m.t.flush(out)
}

// OrderDesc sorts text lines by a numeric column (integer, or decimal
// with up to two fraction digits), largest first, ties by line, through
// one reduce; lines are written unchanged. It is the last job of Grep and
// Join (an ORDER BY ... DESC).
type OrderDesc struct{}

var _ mapreduce.App = OrderDesc{}

func (OrderDesc) Name() string { return "orderdesc" }
func (OrderDesc) Description() string {
	return "sort tab-separated lines by a numeric column, largest first (last job of grep and join)"
}

func (OrderDesc) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam,
		{Name: "column", Default: "1", Help: "0-based tab-separated column holding the number"}}
}

func (o OrderDesc) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(o.Params(), given)
	p[ParamReduces] = "1"
	job, err := newJob(o.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	col, err := p.int("column", 0, 1000)
	if err != nil {
		return nil, err
	}
	job.NewMapper = func() mapreduce.Mapper { return &orderMapper{col: int(col)} }
	job.NewReducer = func() mapreduce.Reducer { return keySuffixReducer{skip: 8} }
	return job, nil
}

// orderMapper keys each line by its column, encoded so that bytewise
// order is descending numeric order, followed by the line itself.
type orderMapper struct {
	col int
	key []byte
}

func (m *orderMapper) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	f, ok := field(line, '\t', m.col)
	if !ok {
		return fmt.Errorf("line %q has no column %d", line, m.col)
	}
	v, ok := parseCents(f)
	if !ok {
		return fmt.Errorf("line %q: column %d is not a number", line, m.col)
	}
	m.key = binary.BigEndian.AppendUint64(m.key[:0], ^(uint64(v) ^ 1<<63))
	m.key = append(m.key, line...)
	return out.Emit(m.key, nil)
}

// keySuffixReducer writes each record's key minus its first skip bytes
// (an ordering prefix), once per value.
type keySuffixReducer struct{ skip int }

func (r keySuffixReducer) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	for values.Next() {
		if err := out.Emit(key[r.skip:], nil); err != nil {
			return err
		}
	}
	return nil
}

// scratchDir is where a driver keeps the intermediate output of its
// stages: a hidden sibling of the final output, removed at the end.
func scratchDir(output, what string) string {
	return path.Join(path.Dir(output), "."+path.Base(output)+"."+what+"-tmp")
}

// outputFree fails if a driver's final output exists, before any stage
// runs.
func outputFree(ctx context.Context, fs mapreduce.FS, out string) error {
	if _, err := fs.Stat(ctx, out); err == nil {
		return fmt.Errorf("output directory %s already exists", out)
	} else if !isNotExist(err) {
		return fmt.Errorf("output %s: %w", out, err)
	}
	return nil
}

// runStage runs one job of a driver and turns a failed job into an error.
func runStage(ctx context.Context, r mapreduce.Runner, app string, p map[string]string) (*mapreduce.Result, error) {
	res, err := r.Run(ctx, app, p)
	if err != nil {
		return res, err
	}
	if res == nil {
		return nil, fmt.Errorf("%s: runner returned no result", app)
	}
	if res.State != "" && res.State != "SUCCEEDED" {
		msg := res.Error
		if msg == "" {
			msg = "job " + strconv.Quote(res.JobID) + " " + res.State
		}
		return res, fmt.Errorf("%s: %s", app, msg)
	}
	return res, nil
}
