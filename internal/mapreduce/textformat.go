package mapreduce

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// TextInput is the default InputFormat: one split per block of every input
// file (files whose names start with "_" or "." are skipped, as Hadoop
// does, so a job's _SUCCESS marker is not read as data), one record per
// line. The key is the line's byte offset in its file, in decimal ASCII;
// the value is the line without its "\n" (and without a "\r" before it).
// A line belongs to the split its first byte lies in.
type TextInput struct{}

var _ InputFormat = TextInput{}

// InputFiles expands job.Input to the files it names, in order, with a
// clear error for a missing path.
func InputFiles(ctx context.Context, fsys FS, inputs []string) ([]FileInfo, error) {
	var out []FileInfo
	for _, in := range inputs {
		ents, err := fsys.List(ctx, in)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, inputMissing(in)
			}
			return nil, fmt.Errorf("input %s: %w", in, err)
		}
		for _, e := range ents {
			name := path.Base(e.Path)
			if e.IsDir || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
				continue
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// FileSplits cuts files into one split per block, with each block's id,
// hosts, racks and cached hosts for locality.
func FileSplits(ctx context.Context, fsys FS, files []FileInfo) ([]Split, error) {
	var splits []Split
	for _, f := range files {
		if f.Size == 0 {
			continue
		}
		locs, err := fsys.BlockLocations(ctx, f.Path, 0, f.Size)
		if err != nil {
			return nil, fmt.Errorf("block locations of %s: %w", f.Path, err)
		}
		if len(locs) == 0 {
			splits = append(splits, Split{Index: len(splits), Path: f.Path, Length: f.Size})
			continue
		}
		for _, b := range locs {
			splits = append(splits, Split{Index: len(splits), Path: f.Path, Offset: b.Offset,
				Length: b.Length, Hosts: b.Hosts, Racks: b.Racks, BlockID: b.BlockID, CachedHosts: b.Cached})
		}
	}
	return splits, nil
}

// Splits returns one split per block of each input file.
func (TextInput) Splits(ctx context.Context, fsys FS, job *Job) ([]Split, error) {
	files, err := InputFiles(ctx, fsys, job.Input)
	if err != nil {
		return nil, err
	}
	return FileSplits(ctx, fsys, files)
}

// Open returns a line reader over the split.
func (TextInput) Open(ctx context.Context, fsys FS, job *Job, s Split) (RecordReader, error) {
	return OpenLineReader(ctx, fsys, s)
}

// LineReader reads the lines of one split; exported so other formats
// (e.g. key/value text) can build on it.
type LineReader struct {
	f      File
	br     *bufio.Reader
	pos    int64 // file offset of the next unread byte
	end    int64 // lines starting after end belong to the next split
	line   []byte
	keyBuf []byte
	start  int64
}

// OpenLineReader opens s and positions it at its first whole line.
func OpenLineReader(ctx context.Context, fsys FS, s Split) (*LineReader, error) {
	f, err := fsys.Open(ctx, s.Path)
	if err != nil {
		return nil, err
	}
	start := s.Offset
	if start > 0 {
		start-- // so a line starting exactly at Offset is not skipped
	}
	r := &LineReader{f: f, pos: start, end: s.Offset + s.Length, start: s.Offset}
	// Stream with Seek+Read: on the DFS a ReadAt opens a block read per
	// call, a Read continues one.
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	r.br = bufio.NewReaderSize(f, 256<<10)
	if s.Offset > 0 {
		if _, err := r.readLine(); err != nil && err != io.EOF {
			f.Close()
			return nil, err
		}
		// The skipped partial line is the previous split's: counting from
		// here, the splits' BytesRead add up to the file's size.
		r.start = r.pos
	}
	return r, nil
}

// readLine returns the next line with its terminator stripped.
func (r *LineReader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.line = append(r.line[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = r.br.ReadSlice('\n')
			r.line = append(r.line, b...)
		}
		b = r.line
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(b) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	r.pos += int64(len(b))
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b, nil
}

// Next returns the next line (value) and its offset (key).
func (r *LineReader) Next() ([]byte, []byte, error) {
	if r.pos >= r.end {
		return nil, nil, io.EOF
	}
	off := r.pos
	line, err := r.readLine()
	if err != nil {
		return nil, nil, err
	}
	r.keyBuf = strconv.AppendInt(r.keyBuf[:0], off, 10)
	return r.keyBuf, line, nil
}

// BytesRead is how far the reader has got in its split.
func (r *LineReader) BytesRead() int64 { return max(0, r.pos-r.start) }

// Close closes the file.
func (r *LineReader) Close() error { return r.f.Close() }

// TextOutput is the default OutputFormat: "key\tvalue\n" per record; an
// empty value writes "key\n" and an empty key "value\n", as Hadoop's
// TextOutputFormat does with null parts.
type TextOutput struct{}

var _ OutputFormat = TextOutput{}

// Create opens path with the job's output replication.
func (TextOutput) Create(ctx context.Context, fsys FS, job *Job, p string) (RecordWriter, error) {
	w, err := fsys.Create(ctx, p, CreateOptions{Replication: job.OutputReplication})
	if err != nil {
		return nil, err
	}
	return &textWriter{w: w, bw: bufio.NewWriterSize(w, 256<<10)}, nil
}

type textWriter struct {
	w  io.WriteCloser
	bw *bufio.Writer
}

func (t *textWriter) Write(key, value []byte) error {
	switch {
	case len(value) == 0:
		t.bw.Write(key)
	case len(key) == 0:
		t.bw.Write(value)
	default:
		t.bw.Write(key)
		t.bw.WriteByte('\t')
		t.bw.Write(value)
	}
	return t.bw.WriteByte('\n')
}

func (t *textWriter) Close() error {
	if err := t.bw.Flush(); err != nil {
		t.w.Close()
		return err
	}
	return t.w.Close()
}

// SplitKeyValue cuts a text line at its first tab, as Hadoop's
// KeyValueTextInputFormat does; without a tab the whole line is the key.
func SplitKeyValue(line []byte) (key, value []byte) {
	if i := bytes.IndexByte(line, '\t'); i >= 0 {
		return line[:i], line[i+1:]
	}
	return line, nil
}

// inputMissing is Hadoop's FileInputFormat message for a missing input,
// which scripts match; it is an fs.ErrNotExist.
type inputMissing string

func (e inputMissing) Error() string        { return "Input path does not exist: " + string(e) }
func (e inputMissing) Is(target error) bool { return target == fs.ErrNotExist }
