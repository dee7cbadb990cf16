package client

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"google.golang.org/grpc/status"

	"smarth/internal/client/pipeline"
	"smarth/internal/rpc/dfspb"
)

// AppendOptions tune Append. Zero values take the FileSystem's defaults.
type AppendOptions struct {
	// WriteMode is the pipeline strategy of the blocks the append adds;
	// bytes that fill the file's partial last block always go through one
	// pipeline, to the datanodes holding that block.
	WriteMode        string
	ReplaceOnFailure string // as CreateOptions.ReplaceOnFailure
}

// Append opens the closed file at p for appending (FileSystem.append in
// the Hadoop specification): the caller needs write access to it, and the
// file must not be open for writing by anyone. Bytes written continue the
// file's partial last block (reopened on its datanodes under a new
// generation stamp), then go into new blocks. Close completes the file as
// after Create; until then readers see the file's old length.
func (f *FileSystem) Append(ctx context.Context, p string, opts AppendOptions) (*FileWriter, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	strategy, replace, err := f.writeStrategy("append", p, opts.WriteMode, opts.ReplaceOnFailure)
	if err != nil {
		return nil, err
	}
	// A file's block size never changes: check it before the namenode
	// grants the lease, so that a file this client cannot write is not
	// left open (to everyone else) until lease recovery. Errors of the
	// stat are left to the append, which words them for append.
	if info, err := f.nn.GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: p}); err == nil {
		if st := info.GetStatus(); st != nil && st.GetType() != dfspb.FileType_DIRECTORY {
			if err := f.appendable(p, st); err != nil {
				return nil, err
			}
		}
	}
	resp, err := f.nn.Append(ctx, &dfspb.AppendRequest{Path: p, ClientName: f.cfg.ClientName})
	if err != nil {
		return nil, mapError("append", p, err)
	}
	st := resp.GetStatus()
	bs, repl := st.GetBlockSize(), int(st.GetReplication())
	if err := f.appendable(p, st); err != nil {
		// Only if the file was replaced since the check above: it stays
		// open until its lease is recovered, as HDFS leaves it.
		return nil, err
	}
	pktLen := int(min(int64(f.cfg.PacketSize), bs))
	w := &FileWriter{f: f, path: st.GetPath(), fileID: st.GetFileId(), blockLen: bs, pktLen: pktLen, bpc: f.cfg.BytesPerChecksum, appending: true}
	if w.path == "" {
		w.path = p
	}
	cfg := f.streamConfig(w.path, w.fileID, repl, bs, pktLen, strategy, replace)
	if lb := resp.GetLastBlock(); lb.GetBlock() != nil {
		cfg.Append = lb
		w.blockOff = lb.GetBlock().GetNumBytes()
	} else {
		cfg.Previous = resp.GetPrevious()
	}
	if strategy.Mode() == dfspb.WriteMode_MULTI_PIPELINE {
		f.speeds.seed()
	}
	w.stream = pipeline.Start(cfg)
	f.leases.acquire()
	f.speeds.acquire()
	return w, nil
}

// appendable refuses a file whose blocks this client cannot continue:
// its checksum chunks must tile the block size.
func (f *FileSystem) appendable(p string, st *dfspb.FileStatus) error {
	bs, repl := st.GetBlockSize(), st.GetReplication()
	if bs <= 0 || bs%int64(f.cfg.BytesPerChecksum) != 0 || repl <= 0 {
		return &PathError{Op: "append", Path: p, Kind: fs.ErrInvalid,
			Msg: fmt.Sprintf("file has block size %d and replication %d; this client writes %d-byte checksum chunks", bs, repl, f.cfg.BytesPerChecksum)}
	}
	return nil
}

// Truncate cuts the closed file at p to newLength bytes (FileSystem.truncate
// in the Hadoop specification; newLength may not exceed the file's
// length). It reports true when the file is at its new length already
// (the cut fell on a block boundary); false when the datanodes are still
// cutting its last block, during which the file is under construction and
// cannot be appended to; WaitClosed waits for that to end.
func (f *FileSystem) Truncate(ctx context.Context, p string, newLength int64) (bool, error) {
	p, err := cleanPath(p)
	if err != nil {
		return false, err
	}
	if newLength < 0 {
		return false, &PathError{Op: "truncate", Path: p, Kind: fs.ErrInvalid, Msg: fmt.Sprintf("Cannot truncate to a negative file size: %d.", newLength)}
	}
	resp, err := f.nn.Truncate(ctx, &dfspb.TruncateRequest{Path: p, NewLength: newLength, ClientName: f.cfg.ClientName})
	if err != nil {
		return false, mapError("truncate", p, err)
	}
	return resp.GetReady(), nil
}

// WaitClosed waits until the file at p is no longer under construction
// (after a truncate that returned false, as `hdfs dfs -truncate -w` does),
// polling the namenode, until ctx ends.
func (f *FileSystem) WaitClosed(ctx context.Context, p string) error {
	delay := 50 * time.Millisecond
	for {
		st, err := f.Stat(ctx, p)
		if err != nil {
			return err
		}
		if !st.UnderConstruction {
			return nil
		}
		select {
		case <-ctx.Done():
			return &PathError{Op: "wait", Path: p, Kind: ctx.Err(), Msg: "file is still under construction: " + ctx.Err().Error()}
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// Concat moves the blocks of srcs, in order, to the end of target and
// deletes srcs, in one atomic step on the namenode (HDFS concat). HDFS's
// rules apply: all in one directory, target and sources closed and not
// empty, the same replication, every block full except the last one of
// the last source.
func (f *FileSystem) Concat(ctx context.Context, target string, srcs []string) error {
	t, err := cleanPath(target)
	if err != nil {
		return err
	}
	clean := make([]string, len(srcs))
	for i, s := range srcs {
		if clean[i], err = cleanPath(s); err != nil {
			return err
		}
	}
	if _, err := f.nn.Concat(ctx, &dfspb.ConcatRequest{Target: t, Srcs: clean}); err != nil {
		return mapError("concat", concatBlames(err, t, clean), err)
	}
	return nil
}

// concatBlames is the path a concat error is about: the namenode names
// the source at fault ("concat /d/src: ..."), else the target.
func concatBlames(err error, target string, srcs []string) string {
	st, ok := status.FromError(err)
	if !ok {
		return target
	}
	for _, s := range srcs {
		if strings.HasPrefix(st.Message(), "concat "+s+": ") {
			return s
		}
	}
	return target
}
