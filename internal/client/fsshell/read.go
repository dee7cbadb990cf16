package fsshell

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"time"
)

// headTailBytes is how much head and tail show: HDFS's 1 KiB.
const headTailBytes = 1024

// Head prints the first KiB of a file.
func (s *Shell) Head(ctx context.Context, args []string) error {
	return s.eachPath(ctx, "head", args, func(p string) error {
		r, err := s.FS.Open(ctx, p)
		if err != nil {
			return fail("head", p, err)
		}
		defer r.Close()
		if _, err := io.Copy(s.Out, io.LimitReader(r, headTailBytes)); err != nil {
			return fail("head", p, err)
		}
		return nil
	})
}

// Tail prints the last KiB of a file; with follow it then polls every
// interval and prints what was appended (a file being written shows
// its blocks as they complete), until ctx ends.
func (s *Shell) Tail(ctx context.Context, arg string, follow bool, interval time.Duration) error {
	ps, err := s.Expand(ctx, arg)
	if err != nil {
		return fail("tail", arg, err)
	}
	p := ps[0]
	st, err := s.FS.Stat(ctx, p)
	if err != nil {
		return nameArg(fail("tail", p, err), p, arg)
	}
	off := max(st.Size-headTailBytes, 0)
	for {
		n, err := s.printFrom(ctx, p, off)
		if err != nil {
			return nameArg(fail("tail", p, err), p, arg)
		}
		off += n
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil // interrupted: tail -f ends normally
		case <-time.After(interval):
		}
	}
}

// printFrom copies the file from off to its current end onto Out.
func (s *Shell) printFrom(ctx context.Context, p string, off int64) (int64, error) {
	r, err := s.FS.Open(ctx, p)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if r.Size() <= off {
		return 0, nil
	}
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(s.Out, r)
}

// Text prints files as text: gzip files are decompressed (by their magic
// bytes, as HDFS's -text does), anything else is printed as it is.
// SequenceFile and Avro decoding are left out: smarth writes neither.
func (s *Shell) Text(ctx context.Context, args []string) error {
	return s.eachPath(ctx, "text", args, func(p string) error {
		r, err := s.FS.Open(ctx, p)
		if err != nil {
			return fail("text", p, err)
		}
		defer r.Close()
		br := bufio.NewReaderSize(r, 1<<20)
		var in io.Reader = br
		if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(br)
			if err != nil {
				return fail("text", p, err)
			}
			defer zr.Close()
			in = zr
		}
		if _, err := io.Copy(s.Out, in); err != nil {
			return fail("text", p, err)
		}
		return nil
	})
}
