package apps

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"smarth/internal/mapreduce"
)

// Total order across reducers, as Hadoop's TeraSort and InputSampler do
// it: before the job, the client samples keys from a few splits, sorts
// them and picks numReduces-1 cut points, evenly spaced in the sample; it
// writes them to a partition file. Each map task loads the file once and
// sends a key to the reduce of the range it falls in, so reduce i's keys
// all precede reduce i+1's and the output files concatenate in order.

const (
	paramPartitionFile = "partition_file"
	partitionMagic     = "smarth-partitions-1\n"
	// Hadoop TeraSort's defaults: 100,000 sampled keys from 10 splits.
	defaultSamples      = 100_000
	defaultSampleSplits = 10
)

// defaultPartitionPath puts the partition file next to the output (the
// output directory itself must not exist until the job commits).
func defaultPartitionPath(output string) string {
	return path.Join(path.Dir(output), "."+path.Base(output)+".partitions")
}

// sampleKeys reads up to samples records from up to maxSplits splits,
// evenly spread over the input, and returns keyOf of each (copied).
func sampleKeys(ctx context.Context, fs mapreduce.FS, job *mapreduce.Job, in mapreduce.InputFormat,
	keyOf func(k, v []byte) []byte, samples, maxSplits int) ([][]byte, error) {
	splits, err := in.Splits(ctx, fs, job)
	if err != nil {
		return nil, err
	}
	if len(splits) == 0 {
		return nil, nil
	}
	n := min(maxSplits, len(splits))
	per := max(1, samples/n)
	var keys [][]byte
	for i := 0; i < n; i++ {
		s := splits[i*len(splits)/n]
		rr, err := in.Open(ctx, fs, job, s)
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", s.Path, err)
		}
		for j := 0; j < per; j++ {
			k, v, err := rr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				rr.Close()
				return nil, fmt.Errorf("sample %s: %w", s.Path, err)
			}
			keys = append(keys, bytes.Clone(keyOf(k, v)))
		}
		rr.Close()
	}
	return keys, nil
}

// cutPoints sorts sample (in place) and returns parts-1 keys that cut it
// into parts ranges of equal size.
func cutPoints(sample [][]byte, parts int, cmp func(a, b []byte) int) [][]byte {
	if len(sample) == 0 || parts <= 1 {
		return nil
	}
	slices.SortFunc(sample, cmp)
	cuts := make([][]byte, 0, parts-1)
	step := float64(len(sample)) / float64(parts)
	for i := 1; i < parts; i++ {
		j := min(len(sample)-1, int(step*float64(i)+0.5))
		cuts = append(cuts, sample[j])
	}
	return cuts
}

// encodePartitions is the partition file: a magic line, the number of
// keys and each key length-prefixed (uvarints).
func encodePartitions(cuts [][]byte) []byte {
	b := []byte(partitionMagic)
	b = binary.AppendUvarint(b, uint64(len(cuts)))
	for _, c := range cuts {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}

var errBadPartitions = errors.New("not a partition file (corrupt or truncated)")

func decodePartitions(b []byte) ([][]byte, error) {
	if !bytes.HasPrefix(b, []byte(partitionMagic)) {
		return nil, errBadPartitions
	}
	b = b[len(partitionMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) { // every key takes at least a byte
		return nil, errBadPartitions
	}
	b = b[k:]
	cuts := make([][]byte, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, errBadPartitions
		}
		cuts = append(cuts, b[k:k+int(l)])
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, errBadPartitions
	}
	return cuts, nil
}

// writePartitionFile samples the job's input and writes the cut points,
// recording the file's path in the job's params for the tasks.
func writePartitionFile(ctx context.Context, fs mapreduce.FS, job *mapreduce.Job, in mapreduce.InputFormat,
	keyOf func(k, v []byte) []byte) error {
	sample, err := sampleKeys(ctx, fs, job, in, keyOf, defaultSamples, defaultSampleSplits)
	if err != nil {
		return err
	}
	cmp := job.Compare
	if cmp == nil {
		cmp = bytes.Compare
	}
	cuts := cutPoints(sample, job.NumReduces, cmp)
	p := job.Params[paramPartitionFile]
	if p == "" {
		p = defaultPartitionPath(job.Output)
		job.Params[paramPartitionFile] = p
	}
	w, err := fs.Create(ctx, p, mapreduce.CreateOptions{Overwrite: true})
	if err != nil {
		return fmt.Errorf("partition file: %w", err)
	}
	bw := bufio.NewWriter(w)
	bw.Write(encodePartitions(cuts))
	if err := errors.Join(bw.Flush(), w.Close()); err != nil {
		return fmt.Errorf("partition file %s: %w", p, err)
	}
	return nil
}

// totalOrder is the Partitioner of sorted output. Its cut points are
// loaded by the map task's Setup (the partitioner itself has no file
// system); a Job's mapper and partitioner share one totalOrder.
type totalOrder struct {
	once sync.Once
	err  error
	cuts atomic.Pointer[[][]byte]
	cmp  func(a, b []byte) int
}

var _ mapreduce.Partitioner = (*totalOrder)(nil)

func newTotalOrder(cmp func(a, b []byte) int) *totalOrder {
	if cmp == nil {
		cmp = bytes.Compare
	}
	return &totalOrder{cmp: cmp}
}

func (t *totalOrder) load(ctx mapreduce.TaskContext) error {
	t.once.Do(func() {
		p := ctx.Param(paramPartitionFile)
		if p == "" {
			t.err = errors.New("no partition file: the job was not prepared (Prepare samples the input)")
			return
		}
		f, err := ctx.FS().Open(ctx, p)
		if err != nil {
			t.err = fmt.Errorf("partition file: %w", err)
			return
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 1<<30))
		if err != nil {
			t.err = fmt.Errorf("partition file %s: %w", p, err)
			return
		}
		cuts, err := decodePartitions(b)
		if err != nil {
			t.err = fmt.Errorf("partition file %s: %w", p, err)
			return
		}
		t.cuts.Store(&cuts)
	})
	return t.err
}

// Partition returns the number of cut points not greater than key: a
// binary search with no allocation.
func (t *totalOrder) Partition(key []byte, n int) int {
	cp := t.cuts.Load()
	if cp == nil {
		panic("apps: total-order partitioner used before the map task's Setup loaded the partition file")
	}
	cuts := *cp
	lo, hi := 0, len(cuts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.cmp(cuts[m], key) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return min(lo, n-1)
}

// orderedMapper loads the total order before its first record, then runs
// the app's map function.
type orderedMapper struct {
	order  *totalOrder
	mapper mapreduce.Mapper
}

func (m *orderedMapper) Setup(ctx mapreduce.TaskContext) error {
	if err := m.order.load(ctx); err != nil {
		return err
	}
	if s, ok := m.mapper.(mapreduce.Setupper); ok {
		return s.Setup(ctx)
	}
	return nil
}

func (m *orderedMapper) Map(ctx mapreduce.TaskContext, k, v []byte, out mapreduce.Emitter) error {
	return m.mapper.Map(ctx, k, v, out)
}

// identityMapper and identityReducer pass records through (Sort, TeraSort).
type identityMapper struct{}

func (identityMapper) Map(_ mapreduce.TaskContext, k, v []byte, out mapreduce.Emitter) error {
	return out.Emit(k, v)
}

type identityReducer struct{}

func (identityReducer) Reduce(_ mapreduce.TaskContext, k []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	for values.Next() {
		if err := out.Emit(k, values.Value()); err != nil {
			return err
		}
	}
	return nil
}

func (m *orderedMapper) Cleanup(ctx mapreduce.TaskContext, out mapreduce.Emitter) error {
	if c, ok := m.mapper.(mapreduce.Cleaner); ok {
		return c.Cleanup(ctx, out)
	}
	return nil
}
