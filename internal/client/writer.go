package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"smarth/internal/client/pipeline"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// writeModes are the accepted Config.WriteMode / CreateOptions.WriteMode
// values: the pipeline strategies.
var writeModes = pipeline.Strategies

// WriteModes lists the write mode names in a stable order.
func WriteModes() []string { return pipeline.ModeNames() }

// CreateOptions tune Create. Zero values take the FileSystem's defaults.
type CreateOptions struct {
	Overwrite   bool
	Replication int
	BlockSize   int64
	Perm        fs.FileMode // default 0644
	// Masked: Perm is the mode as given, the namenode's umask does not
	// apply (the caller applied its own: WebHDFS CREATE, whose datanode
	// HDFS runs with umask 000).
	Masked         bool
	NoCreateParent bool
	WriteMode      string // "classic" or "multipipeline"; default Config.WriteMode
	// ReplaceOnFailure is the datanode replacement policy of pipeline
	// recovery: "default" (HDFS), "always" or "never".
	ReplaceOnFailure string
}

// FileWriter writes a new file. Bytes are cut into packets (64 KiB, a
// CRC32C per 512-byte chunk) and streamed through block pipelines by the
// chosen strategy. Close completes the file; until it returns nil the
// file is not complete. Not safe for concurrent use.
type FileWriter struct {
	f        *FileSystem
	path     string
	fileID   uint64
	stream   *pipeline.Stream
	blockLen int64
	pktLen   int
	bpc      int

	pkt      *datatransfer.Packet // being filled; nil between packets
	blockOff int64                // offset in the current block of pkt's first byte
	written  int64

	err    error // sticky
	closed bool
	// appending: the file existed before this writer (Append), so Abort
	// must not delete it.
	appending bool
	doneOnce  sync.Once
}

// writeStrategy is the pipeline strategy and replace-datanode policy of
// a writer (Create, Append): the named write mode or the FileSystem's,
// and the named policy; a bad name is an invalid-argument error on p.
func (f *FileSystem) writeStrategy(op, p, mode, replaceOnFailure string) (pipeline.Strategy, pipeline.ReplacePolicy, error) {
	if mode == "" {
		mode = f.cfg.WriteMode
	}
	replace, err := pipeline.ParseReplacePolicy(replaceOnFailure)
	if err != nil {
		return nil, replace, &PathError{Op: op, Path: p, Kind: fs.ErrInvalid, Msg: err.Error()}
	}
	strategy, err := pipeline.New(mode, pipeline.Options{
		Window: f.cfg.Window, MaxPipelines: f.cfg.MaxPipelines, LocalThreshold: f.cfg.LocalThreshold, Rand: f.rand(),
	})
	if err != nil {
		return nil, replace, &PathError{Op: op, Path: p, Kind: fs.ErrInvalid, Msg: err.Error()}
	}
	return strategy, replace, nil
}

// Create makes a new file at path and returns a writer for it. The file
// exists (under construction, size 0) once Create returns.
func (f *FileSystem) Create(ctx context.Context, p string, opts CreateOptions) (*FileWriter, error) {
	p, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	strategy, replace, err := f.writeStrategy("create", p, opts.WriteMode, opts.ReplaceOnFailure)
	if err != nil {
		return nil, err
	}
	repl, bs := opts.Replication, opts.BlockSize
	if repl == 0 {
		repl = f.cfg.Replication
	}
	if bs == 0 {
		bs = f.cfg.BlockSize
	}
	if bs != 0 && (bs < int64(f.cfg.BytesPerChecksum) || bs%int64(f.cfg.BytesPerChecksum) != 0) {
		return nil, &PathError{Op: "create", Path: p, Kind: fs.ErrInvalid,
			Msg: fmt.Sprintf("block size %d is not a positive multiple of %d", bs, f.cfg.BytesPerChecksum)}
	}
	perm := opts.Perm
	if perm == 0 && !opts.Masked {
		perm = 0o644
	}
	resp, err := f.nn.Create(ctx, &dfspb.CreateRequest{
		Path: p, Permission: uint32(perm.Perm()), ClientName: f.cfg.ClientName, Overwrite: opts.Overwrite,
		CreateParent: !opts.NoCreateParent, Replication: uint32(max(repl, 0)), BlockSize: bs, Masked: opts.Masked,
	})
	if err != nil {
		return nil, mapError("create", p, err)
	}
	st := resp.GetStatus()
	if st.GetBlockSize() > 0 {
		bs = st.GetBlockSize()
	}
	if st.GetReplication() > 0 {
		repl = int(st.GetReplication())
	}
	if bs <= 0 || repl <= 0 {
		d, err := f.serverDefaults(ctx)
		if err != nil {
			return nil, mapError("create", p, err)
		}
		if bs <= 0 {
			bs = d.GetBlockSize()
		}
		if repl <= 0 {
			repl = int(d.GetReplication())
		}
	}
	if bs%int64(f.cfg.BytesPerChecksum) != 0 {
		return nil, &PathError{Op: "create", Path: p, Kind: fs.ErrInvalid, Msg: fmt.Sprintf("block size %d is not a multiple of %d", bs, f.cfg.BytesPerChecksum)}
	}
	pktLen := int(min(int64(f.cfg.PacketSize), bs))
	w := &FileWriter{f: f, path: p, fileID: st.GetFileId(), blockLen: bs, pktLen: pktLen, bpc: f.cfg.BytesPerChecksum}
	if strategy.Mode() == dfspb.WriteMode_MULTI_PIPELINE {
		f.speeds.seed()
	}
	w.stream = pipeline.Start(f.streamConfig(p, w.fileID, repl, bs, pktLen, strategy, replace))
	f.leases.acquire()
	f.speeds.acquire()
	return w, nil
}

// streamConfig is the pipeline configuration of one file's writer.
func (f *FileSystem) streamConfig(p string, fileID uint64, repl int, bs int64, pktLen int, strategy pipeline.Strategy, replace pipeline.ReplacePolicy) pipeline.Config {
	return pipeline.Config{
		Namenode: f.nn, Path: p, FileID: fileID, ClientName: f.cfg.ClientName, ClientHost: f.cfg.ClientHost,
		Replication: repl, Strategy: strategy, BlockSize: bs, BlockPackets: int((bs + int64(pktLen) - 1) / int64(pktLen)), ClassicWindow: f.cfg.Window,
		BytesPerChecksum: f.cfg.BytesPerChecksum, Dial: f.cfg.Dial, IOTimeout: f.cfg.IOTimeout,
		RPCTimeout: f.cfg.RPCTimeout, Replace: replace, Speeds: f.speeds.book, Datanodes: f.liveDatanodes,
		Logger: f.log,
	}
}

func (f *FileSystem) liveDatanodes(ctx context.Context) ([]*dfspb.DatanodeInfo, error) {
	r, err := f.nn.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
	if err != nil {
		return nil, err
	}
	return r.GetDatanodes(), nil
}

// Path is the file being written.
func (w *FileWriter) Path() string { return w.path }

// Written is how many bytes Write has accepted.
func (w *FileWriter) Written() int64 { return w.written }

// Write copies p into packets and queues them; it blocks while the
// pipelines are behind (bounded memory). An error is sticky: the file
// cannot be completed afterwards.
func (w *FileWriter) Write(b []byte) (int, error) {
	if w.closed {
		return 0, w.wrap(ErrClosed)
	}
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(b) > 0 {
		if w.pkt == nil {
			w.pkt = w.newPacket()
		}
		c := w.pkt.Append(b)
		b = b[c:]
		n += c
		w.written += int64(c)
		if w.pkt.Free() == 0 {
			if err := w.flushPacket(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// ReadFrom fills packets straight from r (no intermediate buffer) until
// r ends; io.Copy uses it.
func (w *FileWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.closed {
		return 0, w.wrap(ErrClosed)
	}
	var total int64
	for {
		if w.err != nil {
			return total, w.err
		}
		if w.pkt == nil {
			w.pkt = w.newPacket()
		}
		have := int(w.pkt.Header.DataLen)
		n, err := r.Read(w.pkt.DataBuffer()[have:])
		w.pkt.SetDataLen(have + n)
		total += int64(n)
		w.written += int64(n)
		if w.pkt.Free() == 0 {
			if ferr := w.flushPacket(); ferr != nil {
				return total, ferr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// newPacket starts the next packet: a packet's worth, not past the end of
// the block, and, when an earlier writer left the block inside a checksum
// chunk (an append), only up to the end of that chunk, so that the packets
// after it are chunk-aligned again (HDFS sizes an append's first packet
// the same way).
func (w *FileWriter) newPacket() *datatransfer.Packet {
	room := min(int64(w.pktLen), w.blockLen-w.blockOff)
	if r := w.blockOff % int64(w.bpc); r != 0 {
		room = min(room, int64(w.bpc)-r)
	}
	return datatransfer.NewPacket(int(room), w.bpc)
}

// flushPacket seals and queues the packet being filled and, at a block
// boundary, the block's empty last packet.
func (w *FileWriter) flushPacket() error {
	pkt := w.pkt
	w.pkt = nil
	off := w.blockOff
	w.blockOff += int64(pkt.Header.DataLen)
	pkt.Seal(off, 0, 0) // the stream numbers packets per connection
	if err := w.stream.Send(pkt); err != nil {
		return w.fail(err)
	}
	if w.blockOff == w.blockLen {
		return w.endBlock()
	}
	return nil
}

func (w *FileWriter) endBlock() error {
	last := datatransfer.NewPacket(0, w.bpc)
	last.Seal(w.blockOff, 0, datatransfer.FlagLast)
	w.blockOff = 0
	if err := w.stream.Send(last); err != nil {
		return w.fail(err)
	}
	return nil
}

func (w *FileWriter) fail(err error) error {
	if w.err == nil {
		w.err = w.wrap(err)
	}
	return w.err
}

// wrap turns a stream error into a *PathError for this file.
func (w *FileWriter) wrap(err error) error {
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	var ne *pipeline.NamenodeError
	if errors.As(err, &ne) {
		return mapError("write", w.path, ne.Err)
	}
	kind := err
	if errors.Is(err, ErrClosed) {
		kind = ErrClosed
	}
	return &PathError{Op: "write", Path: w.path, Kind: kind, Msg: err.Error()}
}

// Close sends what is buffered, waits until every pipeline has
// acknowledged every packet, then completes the file with the namenode
// (retrying while it waits for replicas to be reported). It returns nil
// only when the file is complete with every byte written.
func (w *FileWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	defer w.finished()
	if w.err != nil {
		w.stream.Abort()
		return w.err
	}
	if w.pkt != nil && w.pkt.Header.DataLen > 0 {
		if err := w.flushPacket(); err != nil {
			w.stream.Abort()
			return err
		}
	}
	if w.pkt != nil {
		w.pkt.Release()
		w.pkt = nil
	}
	if w.blockOff > 0 {
		if err := w.endBlock(); err != nil {
			w.stream.Abort()
			return err
		}
	}
	blocks, err := w.stream.Finish()
	if err != nil {
		return w.fail(err)
	}
	if err := w.complete(blocks); err != nil {
		return w.fail(err)
	}
	return nil
}

// complete calls Complete until the namenode agrees every block has its
// minimum replication, backing off, up to Config.CompleteTimeout.
func (w *FileWriter) complete(blocks []*dfspb.ExtendedBlock) error {
	req := &dfspb.CompleteRequest{Path: w.path, ClientName: w.f.cfg.ClientName, FileId: w.fileID}
	for _, b := range blocks {
		req.Blocks = append(req.Blocks, proto.Clone(b).(*dfspb.ExtendedBlock))
	}
	if n := len(req.Blocks); n > 0 {
		req.Last = req.Blocks[n-1]
	}
	deadline := time.Now().Add(w.f.cfg.CompleteTimeout)
	delay := 20 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), w.f.cfg.RPCTimeout)
		resp, err := w.f.nn.Complete(ctx, req)
		cancel()
		if err != nil {
			return mapError("close", w.path, err)
		}
		if resp.GetCompleted() {
			return nil
		}
		if time.Now().After(deadline) {
			return &PathError{Op: "close", Path: w.path, Kind: ErrNoDatanodes,
				Msg: fmt.Sprintf("the namenode did not confirm the file complete within %v: blocks not yet reported by enough datanodes", w.f.cfg.CompleteTimeout)}
		}
		time.Sleep(delay)
		delay = min(delay*2, 800*time.Millisecond)
	}
}

// Abort gives up the file: the pipelines are closed and the file is
// deleted, releasing its lease. Data written so far is lost. A writer
// from Append leaves the file instead (it held data before): the file
// stays open until the namenode recovers its lease, keeping what reached
// the datanodes, as when an HDFS client abandons an append.
func (w *FileWriter) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer w.finished()
	if w.pkt != nil {
		w.pkt.Release()
		w.pkt = nil
	}
	w.stream.Abort()
	if w.appending {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.f.cfg.RPCTimeout)
	defer cancel()
	if _, err := w.f.nn.Delete(ctx, &dfspb.DeleteRequest{Path: w.path}); err != nil {
		return mapError("abort", w.path, err)
	}
	return nil
}

func (w *FileWriter) finished() {
	w.doneOnce.Do(func() {
		w.f.leases.release()
		w.f.speeds.release()
	})
}
