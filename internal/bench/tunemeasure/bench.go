package tunemeasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/testbed/netns"
	"smarth/internal/tune"
)

// Options describe the transfers measured.
type Options struct {
	Size       int64 // bytes per transfer (one block); required
	PacketSize int   // the transmission profile's packet size; default 64 KiB
	Repeats    int   // transfers per sample, median taken; default 3
	Binary     string
	Sysctl     *tune.Sysctls // nil: sysctl settings refused
	Out        io.Writer
}

// Bench is a running local cluster ready for measurements.
type Bench struct {
	opts        Options
	home        string
	nameNode    string
	profilePath string
	logPath     string
	logOff      int64
	seq         int

	// dial opens the client's data connections and nnDial its namenode
	// connection (nil: gRPC's own): on a testbed both start inside the
	// client host's network namespace.
	dial   func(ctx context.Context, addr string) (net.Conn, error)
	nnDial func(ctx context.Context, addr string) (net.Conn, error)
	// sysctlNS is the network namespace file whose sysctls a profile
	// changes ("" = this process's): on a testbed, the receiving
	// datanode's, so that the host's own values are never touched.
	sysctlNS string
	stop     func() error
}

// Sample is one measurement of a profile.
type Sample struct {
	Mbps       float64   // median throughput of the transfers
	All        []float64 // each transfer's throughput
	CPUPerMiB  float64   // median process CPU seconds per MiB at the datanode
	NotInForce []tune.State
}

// Start launches the cluster. Stop it with Close.
func Start(ctx context.Context, opts Options) (*Bench, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "smarth-tune-")
	if err != nil {
		return nil, err
	}
	b := &Bench{opts: opts, home: home, profilePath: filepath.Join(home, "net-profile.json"), logPath: filepath.Join(home, "transfer.jsonl")}
	if err := tune.WriteProfileFile(b.profilePath, tune.Default()); err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	// One block per transfer, as the paper's per-transfer log lines.
	block := (opts.Size + 511) / 512 * 512
	st, err := cluster.Up(ctx, cluster.Options{
		Home: filepath.Join(home, "cluster"), Binary: opts.Binary, DataNodes: 1, Replication: 1, BlockSize: max(block, 1<<20),
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		DataNode: map[string]any{"net_profile": b.profilePath, "transfer_log": b.logPath},
		Out:      opts.Out,
	})
	if err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	b.nameNode = st.NameNode
	b.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	b.stop = func() error {
		_, err := cluster.Down(filepath.Join(home, "cluster"), 10*time.Second)
		return err
	}
	if err := b.warmup(ctx); err != nil {
		_ = b.Close("")
		return nil, err
	}
	return b, nil
}

// defaults fills the options' defaults (shared by both kinds of bench).
func (o *Options) defaults() error {
	if o.Size <= 0 {
		return errors.New("measure: transfer size must be positive")
	}
	if o.PacketSize == 0 {
		o.PacketSize = 64 << 10
	}
	if o.Repeats <= 0 {
		o.Repeats = 3
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return nil
}

// Home is the bench's directory (cluster, profile file, transfer log).
func (b *Bench) Home() string { return b.home }

// LogPath is the datanode's transfer log.
func (b *Bench) LogPath() string { return b.logPath }

// Close stops the cluster (or takes the testbed down). The transfer log
// is copied to keep, if set.
func (b *Bench) Close(keep string) error {
	err := b.stop()
	if keep != "" {
		if data, rerr := os.ReadFile(b.logPath); rerr == nil {
			_ = os.WriteFile(keep, data, 0o644)
		}
	}
	os.RemoveAll(b.home)
	return err
}

// Measure applies p and runs Repeats transfers under it.
func (b *Bench) Measure(ctx context.Context, p tune.Profile) (Sample, error) {
	restore, err := b.applySysctls(p)
	if err != nil {
		return Sample{}, err
	}
	defer restore()
	if err := tune.WriteProfileFile(b.profilePath, p); err != nil {
		return Sample{}, err
	}
	fsys, err := b.client(p)
	if err != nil {
		return Sample{}, err
	}
	defer fsys.Close()
	var s Sample
	var cpu []float64
	for range b.opts.Repeats {
		rec, err := b.transfer(ctx, fsys)
		if err != nil {
			return Sample{}, err
		}
		if rec.Profile != p.Name {
			return Sample{}, fmt.Errorf("measure: datanode logged profile %q, expected %q", rec.Profile, p.Name)
		}
		s.All = append(s.All, rec.Mbps())
		cpu = append(cpu, rec.CPUSeconds/(float64(rec.Bytes)/(1<<20)))
		for _, st := range rec.Settings {
			if !st.InForce {
				s.NotInForce = append(s.NotInForce, st)
			}
		}
	}
	s.Mbps, s.CPUPerMiB = tune.Quantile(s.All, 0.5), tune.Quantile(cpu, 0.5)
	return s, nil
}

// client makes a file system client with the profile's client settings;
// its data connections get the profile's socket settings too (buffers,
// congestion control and the not-sent watermark act on the sending side).
func (b *Bench) client(p tune.Profile) (*client.FileSystem, error) {
	cfg := client.Config{NameNode: b.nameNode, PacketSize: b.opts.PacketSize, Replication: 1}
	if w, ok := p.Int("window"); ok && w > 0 {
		cfg.Window = int(w)
	}
	cfg.NameNodeDial = b.nnDial
	cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := b.dial(ctx, addr)
		if err == nil {
			_, _ = tune.Apply(c.(syscall.Conn), p)
		}
		return c, err
	}
	return client.New(cfg)
}

// transfer writes one file of Size bytes and returns the datanode's
// transfer log record of its block.
func (b *Bench) transfer(ctx context.Context, fsys *client.FileSystem) (tune.Record, error) {
	return b.transferSize(ctx, fsys, b.opts.Size)
}

func (b *Bench) transferSize(ctx context.Context, fsys *client.FileSystem, size int64) (tune.Record, error) {
	b.seq++
	path := "/tune/t" + strconv.Itoa(b.seq)
	w, err := fsys.Create(ctx, path, client.CreateOptions{Overwrite: true})
	if err != nil {
		return tune.Record{}, err
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for left := size; left > 0; {
		n := min(left, int64(len(buf)))
		if _, err := w.Write(buf[:n]); err != nil {
			_ = w.Abort()
			return tune.Record{}, err
		}
		left -= n
	}
	if err := w.Close(); err != nil {
		return tune.Record{}, err
	}
	rec, err := b.awaitRecord()
	_ = fsys.Delete(ctx, path, false)
	return rec, err
}

// warmup writes one small file under the default profile until it goes
// through (up to 30 s): a datanode the namenode already counts as
// registered may still lack its block keys for a moment and refuse the
// first write, and the first transfer pays for cold caches; neither
// belongs in the first genome's fitness.
func (b *Bench) warmup(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		fsys, err := b.client(tune.Default())
		if err != nil {
			return err
		}
		_, err = b.transferSize(ctx, fsys, 1<<20)
		fsys.Close()
		if err == nil || ctx.Err() != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("measure: warm-up transfer still failing after 30s: %w", err)
		}
		fmt.Fprintf(b.opts.Out, "warm-up transfer failed, retrying: %v\n", err)
		time.Sleep(time.Second)
	}
}

// awaitRecord polls the transfer log for the next record (the datanode
// writes it before the last ack, so it is normally there already).
func (b *Bench) awaitRecord() (tune.Record, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs, off, err := tune.ReadLogFile(b.logPath, b.logOff)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return tune.Record{}, err
		}
		if len(recs) > 0 {
			b.logOff = off
			return recs[len(recs)-1], nil
		}
		if time.Now().After(deadline) {
			return tune.Record{}, fmt.Errorf("measure: no transfer log record in %s after 10s", b.logPath)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// applySysctls sets the profile's host-wide settings for this
// measurement, with the revert file written first; the returned function
// restores them.
func (b *Bench) applySysctls(p tune.Profile) (func(), error) {
	vals := p.Level(tune.Sysctl)
	if len(vals) == 0 {
		return func() {}, nil
	}
	if b.opts.Sysctl == nil {
		return nil, fmt.Errorf("measure: profile %s changes host-wide sysctls; pass --sysctl to allow it", p.Name)
	}
	if err := b.inNS(func() error { return b.opts.Sysctl.Apply(vals) }); err != nil {
		return nil, err
	}
	return func() {
		if err := b.inNS(func() error { _, err := b.opts.Sysctl.Restore(); return err }); err != nil {
			fmt.Fprintf(b.opts.Out, "restoring sysctls: %v\n", err)
		}
	}, nil
}

// inNS runs f where the bench's sysctls live: /proc/sys/net shows the
// network namespace of the thread that opens it, so f runs on a thread
// inside sysctlNS.
func (b *Bench) inNS(f func() error) error {
	if b.sysctlNS == "" {
		return f()
	}
	return netns.Do(b.sysctlNS, f)
}

// SysctlValues reads sysctls where the bench changes them (to show they
// were restored).
func (b *Bench) SysctlValues(names []string) (map[string]string, error) {
	root := "/proc/sys"
	if b.opts.Sysctl != nil {
		root = b.opts.Sysctl.Root
	}
	out := map[string]string{}
	err := b.inNS(func() error {
		for _, n := range names {
			v, err := os.ReadFile(filepath.Join(root, strings.ReplaceAll(n, ".", "/")))
			if err != nil {
				return fmt.Errorf("reading %s: %w", n, err)
			}
			out[n] = strings.Join(strings.Fields(string(v)), " ")
		}
		return nil
	})
	return out, err
}
