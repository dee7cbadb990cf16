package apps

import (
	"context"
	"fmt"

	"smarth/internal/mapreduce"
)

// Sort sorts text records in total order across its reduces (identity map
// and reduce, a partitioner over keys sampled before the job). With
// --format lines a whole line is the key and output lines are the input
// lines in byte order; with --format kv a line is "key\tvalue", sorted by
// key, and output lines are "key\tvalue". Duplicates are kept.
type Sort struct{}

var (
	_ mapreduce.App      = Sort{}
	_ mapreduce.Preparer = Sort{}
)

func (Sort) Name() string        { return "sort" }
func (Sort) Description() string { return "sort text lines or key/value records in total order" }

func (Sort) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(2),
		{Name: "format", Default: "lines", Help: "lines (sort whole lines) or kv (sort \"key\\tvalue\" lines by key)"},
		{Name: paramPartitionFile, Help: "where to write the sampled cut points (default: .<output>.partitions beside the output)"},
	}
}

func (s Sort) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(s.Params(), given)
	job, err := newJob(s.Name(), p, true, 2)
	if err != nil {
		return nil, err
	}
	var m mapreduce.Mapper
	switch p.str("format") {
	case "lines":
		m = lineKeyMapper{}
	case "kv":
		m = kvMapper{}
	default:
		return nil, fmt.Errorf("parameter --format=%q: want lines or kv", p.str("format"))
	}
	order := newTotalOrder(nil)
	job.Partitioner = order
	job.NewMapper = func() mapreduce.Mapper { return &orderedMapper{order: order, mapper: m} }
	job.NewReducer = func() mapreduce.Reducer { return identityReducer{} }
	return job, nil
}

// Prepare samples the input's keys and writes the partition file.
func (Sort) Prepare(ctx context.Context, fs mapreduce.FS, job *mapreduce.Job) error {
	keyOf := func(_, line []byte) []byte { return line }
	if job.Params["format"] == "kv" {
		keyOf = func(_, line []byte) []byte { k, _ := mapreduce.SplitKeyValue(line); return k }
	}
	return writePartitionFile(ctx, fs, job, mapreduce.TextInput{}, keyOf)
}

// lineKeyMapper makes the line the key (the value is empty, so the text
// output writes the line alone).
type lineKeyMapper struct{}

func (lineKeyMapper) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	return out.Emit(line, nil)
}

// kvMapper cuts "key\tvalue" lines.
type kvMapper struct{}

func (kvMapper) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	k, v := mapreduce.SplitKeyValue(line)
	return out.Emit(k, v)
}
