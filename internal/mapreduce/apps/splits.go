package apps

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"smarth/internal/mapreduce"
)

// generatedSplits makes n splits of generated input (no file), each
// carrying the range [first, first+count) of whatever the generator counts
// (rows, samples, bytes) in its Meta.
func generatedSplits(total int64, n int) []mapreduce.Split {
	splits := make([]mapreduce.Split, n)
	for i := range splits {
		first := total * int64(i) / int64(n)
		next := total * int64(i+1) / int64(n)
		splits[i] = mapreduce.Split{Index: i, Meta: encodeRange(first, next-first)}
	}
	return splits
}

func encodeRange(first, count int64) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(first))
	binary.BigEndian.PutUint64(b[8:], uint64(count))
	return b
}

func decodeRange(meta []byte) (first, count int64, err error) {
	if len(meta) != 16 {
		return 0, 0, fmt.Errorf("generated split: bad meta of %d bytes", len(meta))
	}
	return int64(binary.BigEndian.Uint64(meta)), int64(binary.BigEndian.Uint64(meta[8:])), nil
}

// rangeInput is the InputFormat of generators: Splits cuts [0, total) into
// maps ranges; each split reads as one record (key = the 16-byte range),
// and the mapper generates from it.
type rangeInput struct {
	total int64
	maps  int
}

var _ mapreduce.InputFormat = rangeInput{}

func (r rangeInput) Splits(context.Context, mapreduce.FS, *mapreduce.Job) ([]mapreduce.Split, error) {
	return generatedSplits(r.total, r.maps), nil
}

func (r rangeInput) Open(_ context.Context, _ mapreduce.FS, _ *mapreduce.Job, s mapreduce.Split) (mapreduce.RecordReader, error) {
	if _, _, err := decodeRange(s.Meta); err != nil {
		return nil, err
	}
	return &onceReader{key: s.Meta}, nil
}

// onceReader yields a single record.
type onceReader struct {
	key  []byte
	done bool
}

func (o *onceReader) Next() ([]byte, []byte, error) {
	if o.done {
		return nil, nil, io.EOF
	}
	o.done = true
	return o.key, nil, nil
}
func (o *onceReader) BytesRead() int64 { return 0 }
func (o *onceReader) Close() error     { return nil }
