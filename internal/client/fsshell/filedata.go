package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"smarth/internal/client"
)

// AppendToFile appends local files, or stdin ("-", as the only source),
// to dst in order, as hdfs dfs -appendToFile: every source must exist
// before anything is written, and a missing dst is created (with its
// parents). A source that fails to read mid-way ends the append with what
// was written so far, and the file is closed.
func (s *Shell) AppendToFile(ctx context.Context, locals []string, dstArg string) error {
	const cmd = "appendToFile"
	for _, l := range locals {
		if l == "-" {
			if len(locals) > 1 {
				return fail(cmd, l, fmt.Errorf("%w: stdin (-) can only be the only source", fs.ErrInvalid))
			}
			continue
		}
		st, err := os.Stat(l)
		if err != nil {
			return fail(cmd, l, localErr(err))
		}
		if st.IsDir() {
			return fail(cmd, l, client.ErrIsDir)
		}
	}
	dst, err := s.Resolve(dstArg)
	if err != nil {
		return fail(cmd, dstArg, err)
	}
	var w *client.FileWriter
	st, err := s.FS.Stat(ctx, dst)
	switch {
	case err == nil && st.IsDir:
		return fail(cmd, dstArg, client.ErrIsDir)
	case errors.Is(err, fs.ErrNotExist):
		w, err = s.FS.Create(ctx, dst, client.CreateOptions{})
	case err == nil:
		w, err = s.FS.Append(ctx, dst, client.AppendOptions{})
	}
	if err != nil {
		return fail(cmd, dstArg, err)
	}
	for _, l := range locals {
		if err := s.appendOne(w, l); err != nil {
			return errors.Join(err, fail(cmd, dstArg, w.Close()))
		}
	}
	return fail(cmd, dstArg, w.Close())
}

func (s *Shell) appendOne(w *client.FileWriter, local string) error {
	var r io.Reader = s.Stdin
	if local != "-" {
		f, err := os.Open(local)
		if err != nil {
			return fail("appendToFile", local, localErr(err))
		}
		defer f.Close()
		r = f
	}
	if _, err := io.Copy(w, r); err != nil {
		return fail("appendToFile", local, err)
	}
	return nil
}

// Truncate cuts files to length, as hdfs dfs -truncate: a cut on a block
// boundary is done at once ("Truncated"); otherwise the datanodes cut the
// last block, and with wait the command waits until they are done (the
// file is closed again) before saying so.
func (s *Shell) Truncate(ctx context.Context, length int64, args []string, wait bool) error {
	const cmd = "truncate"
	var waiting []string
	err := s.eachPath(ctx, cmd, args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail(cmd, p, err)
		}
		if st.IsDir {
			return fail(cmd, p, client.ErrIsDir)
		}
		ready, err := s.FS.Truncate(ctx, p, length)
		switch {
		case err != nil:
			return fail(cmd, p, err)
		case ready:
			fmt.Fprintf(s.Out, "Truncated %s to length: %d\n", p, length)
		case wait:
			waiting = append(waiting, p)
		default:
			fmt.Fprintf(s.Out, "Truncating %s to length: %d. Wait for block recovery to complete before further updating this file.\n", p, length)
		}
		return nil
	})
	for _, p := range waiting {
		fmt.Fprintf(s.Out, "Waiting for %s ...\n", p)
		if werr := s.FS.WaitClosed(ctx, p); werr != nil {
			return errors.Join(err, fail(cmd, p, werr))
		}
		fmt.Fprintf(s.Out, "Truncated %s to length: %d\n", p, length)
	}
	return err
}

// Concat moves the blocks of the sources (globs expanded, in order) to the
// end of target and deletes them, as hdfs dfs -concat.
func (s *Shell) Concat(ctx context.Context, targetArg string, srcArgs []string) error {
	const cmd = "concat"
	target, err := s.Resolve(targetArg)
	if err != nil {
		return fail(cmd, targetArg, err)
	}
	srcs, err := s.ExpandAll(ctx, cmd, srcArgs)
	if err != nil {
		return err
	}
	if err := s.FS.Concat(ctx, target, srcs); err != nil {
		return fail(cmd, "", err) // the client's error names the file at fault
	}
	return nil
}
