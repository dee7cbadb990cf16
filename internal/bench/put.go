package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
	"time"

	"smarth/internal/client"
	"smarth/internal/units"
)

// PutOptions describe `smarth bench put`.
type PutOptions struct {
	Size        int64    // bytes per file; required
	Replication int      // 0 = namenode default
	BlockSize   int64    // 0 = namenode default
	Runs        int      // runs per mode; default 1
	Modes       []string // write modes, interleaved (see RunOrder); default classic
	Dir         string   // default /benchmarks/put
	Seed        uint64   // content seed; default 1
	// LinkRateBits is the client's link rate in bit/s (0 = unknown): the
	// SMARTH III.D bound of a multi-pipeline write.
	LinkRateBits float64
	// KeepAll keeps every run's file; by default only the last run of each
	// mode is kept (for `bench get`), the others are deleted untimed after
	// their run to spare the disk.
	KeepAll bool
	// DropCaches empties the machine's page cache before each upload (see
	// Settle); every upload is preceded by a sync either way.
	DropCaches bool
	// FirstRun is the index of the first run in RunOrder: a caller that
	// splits one comparison over several Put calls continues the order.
	FirstRun int
	Out      io.Writer // one line per run; default discard
}

func (o *PutOptions) setDefaults() error {
	if o.Size <= 0 {
		return errors.New("--size must be positive")
	}
	if o.Runs <= 0 {
		o.Runs = 1
	}
	if len(o.Modes) == 0 {
		o.Modes = []string{"classic"}
	}
	if o.Dir == "" {
		o.Dir = "/benchmarks/put"
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return nil
}

// PutPath is the file the last put run of mode leaves for `bench get`.
func PutPath(dir, mode string) string { return path.Join(dir, mode+".dat") }

// Put writes opts.Size bytes Runs times per mode, modes interleaved in
// RunOrder, and times each upload from Create to the return of Close
// (every byte acknowledged, file complete). Before each upload the page
// cache is settled (Settle), untimed. The client is connected before the
// first run so its start-up is not timed.
func Put(ctx context.Context, fsys *client.FileSystem, opts PutOptions) (*Result, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if err := warmUp(ctx, fsys, opts.Dir); err != nil {
		return nil, err
	}
	data := NewData(opts.Seed)
	res := &Result{Op: "put", Time: time.Now(), Size: opts.Size, Replication: opts.Replication,
		BlockSize: opts.BlockSize, LinkRateBits: opts.LinkRateBits}
	deleted := false // a file was deleted since the last wait for its replicas to go
	for i := range opts.Runs {
		for _, mode := range RunOrder(opts.Modes, opts.FirstRun+i) {
			p := PutPath(opts.Dir, mode)
			last := i == opts.Runs-1
			if !last {
				p = path.Join(opts.Dir, fmt.Sprintf("%s-%d.dat", mode, i))
			}
			if err := clearTarget(ctx, fsys, p, deleted); err != nil {
				return res, err
			}
			deleted = false
			if err := Settle(opts.DropCaches); err != nil {
				return res, err
			}
			secs, err := putOnce(ctx, fsys, p, mode, data, opts)
			if err != nil {
				return res, err
			}
			run := Run{Mode: mode, Index: len(res.Runs), Seconds: secs, MiBps: mibps(opts.Size, secs), Path: p}
			res.Runs = append(res.Runs, run)
			fmt.Fprintf(opts.Out, "run %2d  %-14s %8.2f s  %8.1f MiB/s  %s\n", run.Index+1, mode, secs, run.MiBps, p)
			if !last && !opts.KeepAll {
				if err := fsys.Delete(ctx, p, false); err != nil {
					return res, err
				}
				deleted = true
			}
		}
	}
	// Report what the namenode applied when the defaults were asked for.
	if st, err := fsys.Stat(ctx, res.Runs[len(res.Runs)-1].Path); err == nil {
		res.Replication, res.BlockSize = st.Replication, st.BlockSize
	}
	res.Summarize()
	return res, nil
}

// RunOrder is the order of the modes in run i: as given in even runs,
// reversed in odd ones (A B, B A, A B, ...), so no mode always runs right
// after the same other one. An upload leaves its replicas in the page
// cache, and a fuller cache slows the next upload (see Settle); with a
// fixed order one mode would always pay for the other.
func RunOrder[T any](modes []T, i int) []T {
	if i%2 == 0 {
		return modes
	}
	r := slices.Clone(modes)
	slices.Reverse(r)
	return r
}

// Settle writes every dirty page of this machine to disk before a timed
// upload and, with dropCaches, empties the page cache of clean pages too
// (root only). An upload's speed depends on the state it finds the page
// cache in: on this project's 2-core VM, 1 GiB uploads at replication 3 to
// a 9-datanode loopback cluster took 4.2-4.3 s while the cache held 2.5-6
// GiB and 7.4-8.4 s once it held 9-18 GiB (the extra time is kernel time
// copying into page-cache pages; there were almost no dirty pages to write
// back). Back to back, the second of two uploads so paid for the first.
// Dropping the cache before each upload gave 3.0-3.7 s (once 4.8 s). On a loopback cluster or
// the testbed the datanodes share this machine's page cache, so this gives
// each upload the same start; a client on a machine of its own only
// settles its own cache.
func Settle(dropCaches bool) error {
	syscall.Sync()
	if !dropCaches {
		return nil
	}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1\n"), 0); err != nil {
		return fmt.Errorf("dropping the page cache before an upload (needs root): %w", err)
	}
	return nil
}

// warmUp makes the benchmark directory and so opens the namenode
// connection before anything is timed.
func warmUp(ctx context.Context, fsys *client.FileSystem, dir string) error {
	if err := fsys.Mkdir(ctx, dir, 0o755, true); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	_, err := fsys.Stat(ctx, dir)
	return err
}

func putOnce(ctx context.Context, fsys *client.FileSystem, p, mode string, data *Data, opts PutOptions) (float64, error) {
	start := time.Now()
	w, err := fsys.Create(ctx, p, client.CreateOptions{
		Overwrite: true, Replication: opts.Replication, BlockSize: opts.BlockSize, WriteMode: mode,
	})
	if err != nil {
		return 0, err
	}
	// Write straight from the pattern: no copy, no generation in the timed
	// loop. Slices of at most 4 MiB keep each Write call's work similar.
	var off int64
	for off < opts.Size {
		i := int(off % int64(len(data.pattern)))
		n := min(int64(len(data.pattern)-i), opts.Size-off, 4<<20)
		if _, err := w.Write(data.pattern[i : i+int(n)]); err != nil {
			_ = w.Abort()
			return 0, err
		}
		off += n
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return time.Since(start).Seconds(), nil
}

// GetOptions describe `smarth bench get`.
type GetOptions struct {
	Path string // file to read; default the classic put file in Dir
	Dir  string // default /benchmarks/put
	// Size and Replication: when Path does not exist, a file of Size bytes
	// is written first (untimed) with this replication.
	Size        int64
	Replication int
	Runs        int // default 1
	// Verify checks every byte against the put content (seed 1) while
	// reading; the check is inside the timed loop.
	Verify bool
	Seed   uint64
	Out    io.Writer
}

// Get reads a file Runs times and times each read from Open to the last
// byte. The file is one written by Put, or written first if missing.
func Get(ctx context.Context, fsys *client.FileSystem, opts GetOptions) (*Result, error) {
	if opts.Dir == "" {
		opts.Dir = "/benchmarks/put"
	}
	if opts.Path == "" {
		opts.Path = PutPath(opts.Dir, "classic")
	}
	if opts.Runs <= 0 {
		opts.Runs = 1
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	data := NewData(opts.Seed)
	st, err := fsys.Stat(ctx, opts.Path)
	if errors.Is(err, fs.ErrNotExist) && opts.Size > 0 {
		fmt.Fprintf(opts.Out, "%s does not exist: writing %s first (untimed)\n", opts.Path, units.FormatSizeExact(opts.Size))
		if err := warmUp(ctx, fsys, path.Dir(opts.Path)); err != nil {
			return nil, err
		}
		po := PutOptions{Size: opts.Size, Replication: opts.Replication, Seed: opts.Seed}
		if _, err := putOnce(ctx, fsys, opts.Path, "", data, po); err != nil {
			return nil, err
		}
		st, err = fsys.Stat(ctx, opts.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (write it with `smarth bench put` or give --size to write it first)", err)
	}
	res := &Result{Op: "get", Time: time.Now(), Size: st.Size, Replication: st.Replication, BlockSize: st.BlockSize}
	buf := make([]byte, 4<<20)
	for i := range opts.Runs {
		secs, err := getOnce(ctx, fsys, opts.Path, st.Size, buf, data, opts.Verify)
		if err != nil {
			return res, err
		}
		run := Run{Mode: "read", Index: i, Seconds: secs, MiBps: mibps(st.Size, secs), Path: opts.Path}
		res.Runs = append(res.Runs, run)
		fmt.Fprintf(opts.Out, "run %2d  %8.2f s  %8.1f MiB/s  %s\n", i+1, secs, run.MiBps, opts.Path)
	}
	res.Summarize()
	return res, nil
}

func getOnce(ctx context.Context, fsys *client.FileSystem, p string, size int64, buf []byte, data *Data, verify bool) (float64, error) {
	start := time.Now()
	r, err := fsys.Open(ctx, p)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var off int64
	for {
		n, err := r.Read(buf)
		if verify && n > 0 {
			if cerr := data.Check(buf[:n], off); cerr != nil {
				return 0, fmt.Errorf("read %s: %w", p, cerr)
			}
		}
		off += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	secs := time.Since(start).Seconds()
	if off != size {
		return 0, fmt.Errorf("read %s: got %d bytes, the file has %d", p, off, size)
	}
	return secs, nil
}
