package apps

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"strconv"

	"smarth/internal/mapreduce"
)

// The two HiveQL-style queries of seed 003, over hivegen's tables, in the
// form of the Pavlo et al. benchmark that HiBench's versions follow:
//
//	Aggregation: SELECT SUBSTR(sourceIP, 1, 7), SUM(adRevenue)
//	             FROM uservisits GROUP BY SUBSTR(sourceIP, 1, 7)
//	Join:        SELECT sourceIP, AVG(pageRank), SUM(adRevenue) AS totalRevenue
//	             FROM rankings R JOIN uservisits UV ON R.pageURL = UV.destURL
//	             WHERE UV.visitDate BETWEEN '2000-01-15' AND '2000-01-22'
//	             GROUP BY sourceIP ORDER BY totalRevenue DESC
//
// --prefix 0 groups by the whole sourceIP and --from/--to widen the date
// range, which gives HiBench's variants. Money is summed in exact
// hundredths.

// Counters of the queries.
const (
	GroupHive     = "Hive"
	CounterBadRow = "BAD_ROWS" // lines with the wrong number of fields or a bad number, skipped
)

// Aggregation is the GROUP BY query: output "prefix\tsum" lines.
type Aggregation struct{}

var _ mapreduce.App = Aggregation{}

func (Aggregation) Name() string { return "aggregation" }
func (Aggregation) Description() string {
	return "SUM(adRevenue) GROUP BY SUBSTR(sourceIP, 1, prefix) over uservisits (seed 003's Aggregation)"
}

func (Aggregation) Params() []mapreduce.Param {
	return []mapreduce.Param{
		{Name: ParamInput, Help: "the uservisits table (hivegen's <dir>/uservisits)"},
		outputParam, reducesParam(1),
		{Name: "prefix", Default: "7", Help: "characters of sourceIP to group by (0 = all)"},
	}
}

func (a Aggregation) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(a.Params(), given)
	job, err := newJob(a.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	prefix, err := p.int("prefix", 0, 1000)
	if err != nil {
		return nil, err
	}
	job.NewMapper = func() mapreduce.Mapper { return &aggMapper{prefix: int(prefix), t: newCountTable()} }
	job.NewCombiner = func() mapreduce.Reducer { return &sumReducer{} }
	job.NewReducer = func() mapreduce.Reducer { return &centsReducer{} }
	return job, nil
}

type aggMapper struct {
	prefix int
	t      countTable // in-mapper combining: hundredths per group
}

func (m *aggMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	ip, _, ok := cutByte(line, hiveSep)
	rev, ok2 := field(line, hiveSep, 3)
	cents, ok3 := parseCents(rev)
	if !ok || !ok2 || !ok3 {
		ctx.Count(GroupHive, CounterBadRow, 1)
		return nil
	}
	if m.prefix > 0 && len(ip) > m.prefix {
		ip = ip[:m.prefix]
	}
	return m.t.add(ip, cents, out)
}

func (m *aggMapper) Cleanup(_ mapreduce.TaskContext, out mapreduce.Emitter) error {
	return m.t.flush(out)
}

// centsReducer sums integer hundredths and writes them as a decimal.
type centsReducer struct{ buf []byte }

func (r *centsReducer) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var sum int64
	for values.Next() {
		v, ok := parseInt(values.Value())
		if !ok {
			return fmt.Errorf("key %q: value %q is not an integer", key, values.Value())
		}
		sum += v
	}
	r.buf = appendCents(r.buf[:0], sum)
	return out.Emit(key, r.buf)
}

// Join is the join query: three jobs, as Hive plans it — the join on URL
// (join.visits), the grouping by sourceIP (join.group), the ordering
// (orderdesc). Output lines "sourceIP\tavgPageRank\ttotalRevenue".
type Join struct{}

var (
	_ mapreduce.App    = Join{}
	_ mapreduce.Driver = Join{}
)

func (Join) Name() string { return "join" }
func (Join) Description() string {
	return "join uservisits and rankings on URL in a date range; AVG(pageRank), SUM(adRevenue) per sourceIP (seed 003's Join)"
}

func (Join) Params() []mapreduce.Param { return JoinVisits{}.Params() }

// Build returns the first job, so the parameters are checked.
func (Join) Build(given map[string]string) (*mapreduce.Job, error) { return JoinVisits{}.Build(given) }

// Drive runs the three jobs.
func (j Join) Drive(ctx context.Context, r mapreduce.Runner, given map[string]string) error {
	if _, err := j.Build(given); err != nil {
		return err
	}
	out := given[ParamOutput]
	if err := outputFree(ctx, r.FS(), out); err != nil {
		return err
	}
	joined, grouped := scratchDir(out, "join"), scratchDir(out, "group")
	defer r.FS().Delete(context.WithoutCancel(ctx), joined, true)
	defer r.FS().Delete(context.WithoutCancel(ctx), grouped, true)
	if _, err := runStage(ctx, r, JoinVisits{}.Name(), copyParams(given, ParamOutput, joined)); err != nil {
		return err
	}
	if _, err := runStage(ctx, r, JoinGroup{}.Name(), copyParams(given, ParamInput, joined, ParamOutput, grouped)); err != nil {
		return err
	}
	_, err := runStage(ctx, r, OrderDesc{}.Name(), map[string]string{ParamInput: grouped, ParamOutput: out, "column": "2"})
	return err
}

// JoinVisits is the join on URL: output "sourceIP\tpageRank\tadRevenue"
// (hundredths) per joined visit.
type JoinVisits struct{}

var _ mapreduce.App = JoinVisits{}

func (JoinVisits) Name() string { return "join.visits" }
func (JoinVisits) Description() string {
	return "reduce-side join of uservisits and rankings on URL (first job of join)"
}

func (JoinVisits) Params() []mapreduce.Param {
	return []mapreduce.Param{
		{Name: ParamInput, Help: "hivegen's directory (holding rankings/ and uservisits/)"},
		{Name: "rankings", Help: "the rankings table (default <input>/rankings)"},
		{Name: "uservisits", Help: "the uservisits table (default <input>/uservisits)"},
		outputParam, reducesParam(1),
		{Name: "from", Default: "2000-01-15", Help: "first visitDate (YYYY-MM-DD)"},
		{Name: "to", Default: "2000-01-22", Help: "last visitDate (YYYY-MM-DD), inclusive"},
	}
}

func (jv JoinVisits) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(jv.Params(), given)
	for _, t := range []string{"rankings", "uservisits"} {
		if p.str(t) == "" {
			in, err := p.required(ParamInput)
			if err != nil {
				return nil, fmt.Errorf("missing --%s (or --input, the directory holding rankings/ and uservisits/)", t)
			}
			p[t] = path.Join(in, t)
		}
	}
	p[ParamInput] = p["rankings"] + "," + p["uservisits"]
	job, err := newJob(jv.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	from, to := p.str("from"), p.str("to")
	for _, d := range []struct{ name, v string }{{"from", from}, {"to", to}} {
		if !isDate(d.v) {
			return nil, errParam(d.name, d.v, "a date YYYY-MM-DD")
		}
	}
	job.NewMapper = func() mapreduce.Mapper { return &joinMapper{from: []byte(from), to: []byte(to)} }
	job.NewReducer = func() mapreduce.Reducer { return &joinReducer{} }
	return job, nil
}

func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// joinMapper tags each row by its table, told apart by the number of
// fields: rankings rows become (pageURL, 'R' pageRank), visits in the
// date range (destURL, 'V' sourceIP '|' hundredths).
type joinMapper struct {
	from, to []byte
	val      []byte
}

func (m *joinMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	switch bytes.Count(line, []byte{hiveSep}) {
	case 2:
		url, rest, _ := cutByte(line, hiveSep)
		rank, _, _ := cutByte(rest, hiveSep)
		if _, ok := parseInt(rank); !ok {
			break
		}
		m.val = append(append(m.val[:0], 'R'), rank...)
		return out.Emit(url, m.val)
	case 8:
		ip, rest, _ := cutByte(line, hiveSep)
		url, rest, _ := cutByte(rest, hiveSep)
		date, rest, _ := cutByte(rest, hiveSep)
		rev, _, _ := cutByte(rest, hiveSep)
		cents, ok := parseCents(rev)
		if !ok {
			break
		}
		if bytes.Compare(date, m.from) < 0 || bytes.Compare(date, m.to) > 0 {
			return nil
		}
		m.val = append(append(append(m.val[:0], 'V'), ip...), hiveSep)
		m.val = strconv.AppendInt(m.val, cents, 10)
		return out.Emit(url, m.val)
	}
	ctx.Count(GroupHive, CounterBadRow, 1)
	return nil
}

// joinReducer pairs every ranking of a URL with every visit of it.
type joinReducer struct {
	ranks  [][]byte
	visits [][]byte
	arena  []byte
	val    []byte
}

func (r *joinReducer) Reduce(_ mapreduce.TaskContext, _ []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	r.ranks, r.visits, r.arena = r.ranks[:0], r.visits[:0], r.arena[:0]
	var offs [][2]int // visits are kept in one arena until the rank is known
	for values.Next() {
		v := values.Value()
		switch {
		case len(v) > 1 && v[0] == 'R':
			r.ranks = append(r.ranks, bytes.Clone(v[1:]))
		case len(v) > 1 && v[0] == 'V':
			offs = append(offs, [2]int{len(r.arena), len(r.arena) + len(v) - 1})
			r.arena = append(r.arena, v[1:]...)
		}
	}
	for _, o := range offs {
		ip, cents, _ := cutByte(r.arena[o[0]:o[1]], hiveSep)
		for _, rank := range r.ranks {
			r.val = append(append(append(r.val[:0], rank...), '\t'), cents...)
			if err := out.Emit(ip, r.val); err != nil {
				return err
			}
		}
	}
	return nil
}

// JoinGroup groups joined visits by sourceIP: output
// "sourceIP\tavgPageRank\ttotalRevenue".
type JoinGroup struct{}

var _ mapreduce.App = JoinGroup{}

func (JoinGroup) Name() string { return "join.group" }
func (JoinGroup) Description() string {
	return "AVG(pageRank), SUM(adRevenue) per sourceIP over join.visits output (second job of join)"
}

func (JoinGroup) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1)}
}

func (g JoinGroup) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(g.Params(), given)
	job, err := newJob(g.Name(), p, true, 1)
	if err != nil {
		return nil, err
	}
	job.NewMapper = func() mapreduce.Mapper { return &groupMapper{} }
	job.NewCombiner = func() mapreduce.Reducer { return &tripleSum{} }
	job.NewReducer = func() mapreduce.Reducer { return &tripleSum{final: true} }
	return job, nil
}

// groupMapper emits (sourceIP, [pageRank, hundredths, 1]) as three
// big-endian int64s.
type groupMapper struct{ val [24]byte }

func (m *groupMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	ip, rest, _ := cutByte(line, '\t')
	rank, cents, _ := cutByte(rest, '\t')
	r, ok1 := parseInt(rank)
	c, ok2 := parseInt(cents)
	if !ok1 || !ok2 {
		ctx.Count(GroupHive, CounterBadRow, 1)
		return nil
	}
	binary.BigEndian.PutUint64(m.val[0:], uint64(r))
	binary.BigEndian.PutUint64(m.val[8:], uint64(c))
	binary.BigEndian.PutUint64(m.val[16:], 1)
	return out.Emit(ip, m.val[:])
}

// tripleSum adds the triples; the final reducer writes the average rank
// and the revenue instead.
type tripleSum struct {
	final bool
	val   []byte
}

func (t *tripleSum) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	var rank, cents, n int64
	for values.Next() {
		v := values.Value()
		if len(v) != 24 {
			return fmt.Errorf("join.group: key %q: value of %d bytes, want 24", key, len(v))
		}
		rank += int64(binary.BigEndian.Uint64(v))
		cents += int64(binary.BigEndian.Uint64(v[8:]))
		n += int64(binary.BigEndian.Uint64(v[16:]))
	}
	if !t.final {
		t.val = binary.BigEndian.AppendUint64(t.val[:0], uint64(rank))
		t.val = binary.BigEndian.AppendUint64(t.val, uint64(cents))
		t.val = binary.BigEndian.AppendUint64(t.val, uint64(n))
		return out.Emit(key, t.val)
	}
	t.val = strconv.AppendFloat(t.val[:0], float64(rank)/float64(n), 'f', -1, 64)
	t.val = append(t.val, '\t')
	t.val = appendCents(t.val, cents)
	return out.Emit(key, t.val)
}
